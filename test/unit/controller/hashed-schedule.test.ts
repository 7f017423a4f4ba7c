// `H` through the controller: the hash is of the resource's namespace/name, the Jobs fall on the
// resolved second, and the status says which expression runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER, type SecondCronJobStatus } from '../../../src/api/resources.js';
import { compileSecondCronJob } from '../../../src/controller/verdict.js';
import { ControllerHarness, SCJ_PATH, sec } from './controller-harness.js';
import { scj } from './fixtures.js';

// printf '%s' ns/hb | sha256sum: word 0 mod 60 = 49 (docs/schedules.md).
const HB_SECOND = 49;

test('H hashes namespace/name: the same resource name in another namespace resolves differently', () => {
  const here = compileSecondCronJob(scj({ intervalSeconds: undefined, schedule: 'H * * * * *' }), Date.parse('2026-12-02T10:00:00Z'));
  const there = compileSecondCronJob(scj({ intervalSeconds: undefined, schedule: 'H * * * * *' }, { namespace: 'team-b', name: 'report' }), Date.parse('2026-12-02T10:00:00Z'));
  assert.ok(here.ok && there.ok);
  assert.equal(here.resolvedSchedule, `${HB_SECOND} * * * * *`);
  assert.equal(there.resolvedSchedule, '40 * * * * *');
});

test('leader: an H schedule creates its Jobs at the hashed second and writes status.resolvedSchedule', async () => {
  const h = new ControllerHarness();
  await h.apply(scj({ intervalSeconds: undefined, schedule: 'H * * * * *' }, { finalizers: [FINALIZER] }));
  await h.advance(125_000);
  assert.deepEqual(h.creates(), [`hb-${sec(HB_SECOND)}`, `hb-${sec(60 + HB_SECOND)}`]);
  const written = h.rest.sent('patch', `${SCJ_PATH}/status`).map((r) => (r.body as { status: SecondCronJobStatus }).status);
  assert.ok(written.length > 0);
  for (const status of written) assert.equal(status.resolvedSchedule, `${HB_SECOND} * * * * *`);
  assert.match(written.at(-1)?.conditions?.[0]?.message ?? '', /^Scheduled: cron "H \* \* \* \* \*" resolved to "49 \* \* \* \* \*" in UTC/);
});
