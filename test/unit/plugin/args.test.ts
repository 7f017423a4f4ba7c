import assert from 'node:assert/strict';
import { test } from 'node:test';

import { UsageError, parseInvocation } from '../../../src/plugin/args.js';

test('kubectl connection flags in both spellings, wherever they stand', () => {
  const inv = parseInvocation(['next', 'hb', '-n', 'ops', '--context=kind', '--kubeconfig', '/k', '--count', '3', '-o', 'json']);
  assert.deepEqual(inv.connection, { kubeconfig: '/k', context: 'kind', namespace: 'ops' });
  assert.deepEqual(inv.command, { name: 'next', resource: 'hb', files: [], count: 3, output: 'json' });
  assert.deepEqual(parseInvocation(['--namespace=x', 'run', 'hb']).command, { name: 'run', resource: 'hb' });
  assert.deepEqual(parseInvocation(['validate', '-f', 'a.yaml', '--filename', 'b.yaml']).command, { name: 'validate', files: ['a.yaml', 'b.yaml'] });
  assert.deepEqual(parseInvocation(['from-cronjob', 'c', '--apply', '--suspend-source']).command, { name: 'from-cronjob', resource: 'c', apply: true, suspendSource: true });
  assert.equal(parseInvocation(['--version']).command.name, 'version');
  assert.equal(parseInvocation([]).command.name, 'help');
  assert.equal(parseInvocation(['history', 'x', '-h']).command.name, 'help');
});

test('wrong command lines are usage errors that say what is wrong', () => {
  const cases: [string[], RegExp][] = [
    [['nxt'], /unknown command "nxt"/],
    [['next'], /either one NAME or -f FILE/],
    [['next', 'a', '-f', 'x.yaml'], /either one NAME or -f FILE/],
    [['next', 'a', '--count', '0'], /--count must be a whole number/],
    [['next', 'a', '-o', 'wide'], /--output must be json or yaml/],
    [['run'], /exactly one SecondCronJob NAME, got none/],
    [['run', 'a', 'b'], /exactly one SecondCronJob NAME, got a b/],
    [['run', 'a', '--count', '2'], /--count does not apply to "run"/],
    [['validate'], /needs -f FILE/],
    [['from-cronjob', 'c', '--suspend-source'], /--suspend-source needs --apply/],
    [['run', 'a', '--bogus'], /Unknown option '--bogus'/],
  ];
  for (const [argv, message] of cases) assert.throws(() => parseInvocation(argv), (err: unknown) => err instanceof UsageError && message.test(err.message), argv.join(' '));
});
