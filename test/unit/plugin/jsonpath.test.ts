// -o jsonpath=…: kubectl's template syntax on what -o json prints.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { PluginError } from '../../../src/plugin/errors.js';
import { renderJsonPath } from '../../../src/plugin/jsonpath.js';

const job = { metadata: { name: 'hb-manual-x', labels: { 'secondcron.io/secondcronjob': 'hb' } }, spec: { parallelism: 2 } };
const history = [
  { job: 'hb-3', outcome: 'Failed', durationSeconds: 4 },
  { job: 'hb-2', outcome: 'Complete', durationSeconds: 1 },
  { job: 'hb-1', outcome: 'Failed' },
];

test('fields, quoted keys, indexes (negative too), wildcards; several results joined by a space', () => {
  assert.equal(renderJsonPath('{.metadata.name}', job), 'hb-manual-x');
  assert.equal(renderJsonPath("{.metadata.labels['secondcron.io/secondcronjob']}", job), 'hb');
  assert.equal(renderJsonPath('{.spec.parallelism}', job), '2');
  assert.equal(renderJsonPath('{[0].job} {[-1].job}', history), 'hb-3 hb-1');
  assert.equal(renderJsonPath('{[*].job}', history), 'hb-3 hb-2 hb-1');
  assert.equal(renderJsonPath('{.metadata.labels}', job), '{"secondcron.io/secondcronjob":"hb"}');
  assert.equal(renderJsonPath('name={.metadata.name}{"\\n"}', job), 'name=hb-manual-x\n');
});

test('filters and range…end', () => {
  assert.equal(renderJsonPath('{range [?(@.outcome=="Failed")]}{.job}{"\\n"}{end}', history), 'hb-3\nhb-1\n');
  assert.equal(renderJsonPath('{[?(@.durationSeconds > 2)].job}', history), 'hb-3');
  assert.equal(renderJsonPath('{[?(@.durationSeconds)].job}', history), 'hb-3 hb-2');
  assert.equal(renderJsonPath("{[?(@.outcome != 'Failed')].job}", history), 'hb-2');
});

test('a missing key prints nothing (kubectl\'s --allow-missing-template-keys); a broken template is an error', () => {
  assert.equal(renderJsonPath('[{.status.active}]', job), '[]');
  for (const bad of ['{.metadata.name', '{range [*]}{.job}', '{end}', '{.a[?(@.x ~ 1)]}']) {
    assert.throws(() => renderJsonPath(bad, job), (err: unknown) => err instanceof PluginError && /^error parsing jsonpath /.test(err.message), bad);
  }
});
