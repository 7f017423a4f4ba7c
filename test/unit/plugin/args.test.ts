import assert from 'node:assert/strict';
import { test } from 'node:test';

import { UsageError, parseInvocation } from '../../../src/plugin/args.js';
import { COMMAND_HELP, SUBCOMMANDS, USAGE } from '../../../src/plugin/help.js';

test('kubectl connection flags in both spellings, wherever they stand', () => {
  const inv = parseInvocation(['next', 'hb', '-n', 'ops', '--context=kind', '--kubeconfig', '/k', '--count', '3', '-o', 'json']);
  assert.deepEqual(inv.connection, { kubeconfig: '/k', context: 'kind', namespace: 'ops' });
  assert.deepEqual(inv.command, { name: 'next', scope: { names: ['hb'] }, files: [], count: 3, output: { format: 'json' } });
  assert.deepEqual(parseInvocation(['--namespace=x', 'run', 'hb']).command, { name: 'run', resource: 'hb', dryRun: 'none', output: { format: 'default' } });
  assert.deepEqual(parseInvocation(['validate', '-f', 'a.yaml', '--filename', 'b.yaml']).command, { name: 'validate', files: ['a.yaml', 'b.yaml'], local: false });
  assert.deepEqual(parseInvocation(['from-cronjob', 'c', '--apply', '--suspend-source']).command, { name: 'from-cronjob', resource: 'c', apply: true, suspendSource: true, output: { format: 'default' } });
  assert.equal(parseInvocation(['--version']).command.name, 'version');
  assert.deepEqual(parseInvocation([]).command, { name: 'help', text: USAGE });
});

test('kubectl\'s global flags: cluster, user, server, token, TLS, impersonation, request timeout', () => {
  const inv = parseInvocation(['suspend', 'x', '--cluster', 'c', '--user=u', '-s', 'https://h:6443', '--token', 't', '--insecure-skip-tls-verify=true',
    '--as', 'jane', '--as-group', 'devs', '--as-group=ops', '--as-uid', '42', '--request-timeout', '1m30s']);
  assert.deepEqual(inv.connection, {
    cluster: 'c', user: 'u', server: 'https://h:6443', token: 't', insecureSkipTlsVerify: true, as: 'jane', asGroups: ['devs', 'ops'], asUid: '42', requestTimeoutMs: 90_000,
  });
  assert.equal(parseInvocation(['run', 'x', '--request-timeout=5']).connection.requestTimeoutMs, 5_000, 'a bare number is seconds');
  assert.equal(parseInvocation(['run', 'x', '--request-timeout=0']).connection.requestTimeoutMs, 0);
  assert.equal(parseInvocation(['run', 'x', '--insecure-skip-tls-verify=false']).connection.insecureSkipTlsVerify, undefined);
});

test('TYPE/NAME operands in every spelling kubectl takes; -A; -o wide|name|jsonpath; --dry-run; --job-name; --local', () => {
  for (const type of ['scj', 'secondcronjob', 'SecondCronJobs', 'secondcronjob.secondcron.io', 'secondcronjobs.secondcron.io']) {
    assert.deepEqual(parseInvocation(['suspend', `${type}/hb`]).command, { name: 'suspend', resource: 'hb', dryRun: 'none', output: { format: 'default' } });
  }
  assert.equal((parseInvocation(['from-cronjob', 'cronjob.batch/nightly']).command as { resource: string }).resource, 'nightly');
  assert.deepEqual(parseInvocation(['history', '-A', '-o', 'wide']).command, { name: 'history', scope: { allNamespaces: true }, output: { format: 'wide' } });
  assert.deepEqual(parseInvocation(['next']).command, { name: 'next', scope: { allNamespaces: false }, files: [], count: 5, output: { format: 'default' } });
  assert.deepEqual(parseInvocation(['next', 'a', 'scj/b', '-o', 'jsonpath={[*].name}']).command,
    { name: 'next', scope: { names: ['a', 'b'] }, files: [], count: 5, output: { format: 'jsonpath', template: '{[*].name}' } });
  assert.deepEqual(parseInvocation(['run', 'scj/hb', '--job-name', 'hb-hotfix', '--dry-run=server', '-o', 'name']).command,
    { name: 'run', resource: 'hb', jobName: 'hb-hotfix', dryRun: 'server', output: { format: 'name' } });
  assert.deepEqual(parseInvocation(['resume', 'hb', '--dry-run', 'client']).command, { name: 'resume', resource: 'hb', dryRun: 'client', output: { format: 'default' } });
  assert.equal((parseInvocation(['validate', '--local', '-f', 'a.yaml']).command as { local: boolean }).local, true);
});

test('--help of each command: its own page with examples; help COMMAND too', () => {
  for (const sub of SUBCOMMANDS) {
    const page = COMMAND_HELP[sub];
    assert.deepEqual(parseInvocation([sub, '--help']).command, { name: 'help', text: page });
    assert.deepEqual(parseInvocation(['help', sub]).command, { name: 'help', text: page });
    assert.match(page, new RegExp(`^Examples:\\n  (# .*\\n  )?kubectl secondcron ${sub} `, 'm'), sub);
    assert.match(page, new RegExp(`^Usage:\\n  kubectl secondcron ${sub} `, 'm'), sub);
  }
  assert.notEqual(COMMAND_HELP.run, USAGE);
});

test('wrong command lines are usage errors that say what is wrong, in kubectl\'s words, naming the command', () => {
  const cases: [string[], RegExp, string | undefined][] = [
    [['nxt'], /unknown command "nxt" for "kubectl secondcron"/, undefined],
    [['next', 'a', '-f', 'x.yaml'], /takes NAMEs \(or -A\) or -f FILE, not both/, 'next'],
    [['next', 'a', '-A'], /cannot be retrieved by name across all namespaces/, 'next'],
    [['next', 'a', '--count', '0'], /--count must be a whole number/, 'next'],
    [['next', 'a', '-o', 'table'], /unable to match a printer suitable for the output format "table", allowed formats are: wide, json, yaml, name, jsonpath=TEMPLATE/, 'next'],
    [['run', 'a', '-o', 'wide'], /allowed formats are: json, yaml, name, jsonpath=TEMPLATE/, 'run'],
    [['run', 'a', '-o', 'jsonpath='], /no template given/, 'run'],
    [['run'], /exactly one SecondCronJob NAME, got none/, 'run'],
    [['run', 'a', 'b'], /exactly one SecondCronJob NAME, got a b/, 'run'],
    [['run', 'pod/a'], /"run" takes SecondCronJobs \(scj\/NAME\), not "pod"/, 'run'],
    [['from-cronjob', 'scj/a'], /takes CronJobs \(cj\/NAME\), not "scj"/, 'from-cronjob'],
    [['run', 'a', '--count', '2'], /unknown flag: --count \(not a flag of "run"\)/, 'run'],
    [['run', 'a', '--job-name', 'A_b'], /not a valid Job name/, 'run'],
    [['run', 'hb', '--job-name', 'hb-1796205605'], /has the form of a scheduled Job's name \(hb-<slot unix seconds>\)/, 'run'],
    [['suspend', 'a', '--dry-run=maybe'], /Invalid dry-run value \(maybe\)\. Must be "none", "server", or "client"\./, 'suspend'],
    [['history', 'a', '--dry-run=client'], /unknown flag: --dry-run/, 'history'],
    [['validate'], /needs -f FILE/, 'validate'],
    [['validate', '-f', 'a', '-o', 'json'], /unknown flag: --output/, 'validate'],
    [['from-cronjob', 'c', '--suspend-source'], /--suspend-source needs --apply/, 'from-cronjob'],
    [['run', 'a', '--bogus'], /^unknown flag: --bogus$/, 'run'],
    [['run', 'a', '--as-group', 'g'], /impersonation requires --as/, 'run'],
    [['run', 'a', '--request-timeout', '5x'], /invalid --request-timeout "5x"/, 'run'],
  ];
  for (const [argv, message, command] of cases) {
    assert.throws(() => parseInvocation(argv), (err: unknown) => err instanceof UsageError && message.test(err.message) && err.command === command, argv.join(' '));
  }
});

test('run --env NAME=VALUE (repeatable) and --container/-c; malformed input is a usage error', () => {
  assert.deepEqual(parseInvocation(['run', 'hb', '--env', 'A=1', '--env=B=x=y', '-c', 'main', '--dry-run=client', '-o', 'yaml']).command, {
    name: 'run', resource: 'hb', envOverrides: { env: [{ name: 'A', value: '1' }, { name: 'B', value: 'x=y' }], container: 'main' }, dryRun: 'client', output: { format: 'yaml' },
  });
  assert.deepEqual(parseInvocation(['run', 'hb', '--env', 'EMPTY=', '--job-name', 'hb-x']).command, {
    name: 'run', resource: 'hb', envOverrides: { env: [{ name: 'EMPTY', value: '' }] }, jobName: 'hb-x', dryRun: 'none', output: { format: 'default' },
  });
  const cases: Array<[string[], RegExp]> = [
    [['run', 'hb', '--env', 'A'], /--env "A" is not NAME=VALUE \(no "="\)/],
    [['run', 'hb', '--env', '=1'], /"" is not a valid environment variable name/],
    [['run', 'hb', '--env', 'A=1', '--env', 'A=2'], /--env A is given twice/],
    [['run', 'hb', '--container', 'main'], /--container says where --env goes: give --env NAME=VALUE too/],
    [['next', 'hb', '--env', 'A=1'], /unknown flag: --env \(not a flag of "next"\)/],
  ];
  for (const [argv, message] of cases) {
    assert.throws(() => parseInvocation(argv), (e: unknown) => e instanceof UsageError && message.test(e.message) && e.command === argv[0], argv.join(' '));
  }
});
