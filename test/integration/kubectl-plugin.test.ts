// `kubectl secondcron` through the real kubectl (the plugin found on PATH), the generated Job template
// schema (kubectl explain, strict field validation), the printer columns and the build info.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { dump, load } from 'js-yaml';

import { RUN_SECONDS_ANNOTATION } from '../cluster/cluster.js';
import { CRD_NAME, CRD_PATH, installCrd } from '../cluster/crd.js';
import { repoRoot } from '../cluster/repo-root.js';
import { type CommandResult, runCommand } from '../cluster/run-command.js';
import { LAST_APPLIED_LIMIT, readCrd } from '../crd/crd-file.js';
import { jobTemplateOf, jobTemplateSchema } from '../crd/job-template.js';
import type { OpenApiDocument } from '../crd/structural-schema.js';
import { type TestNamespace, kubectl, kubectlOk, testBinDir, testEnv, testKubeconfig, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startOperator } from './helpers/operator.js';
import { applyScj, getScj, listJobs, podTemplate, scjManifest, sleepUntil } from './helpers/scj.js';

const ROOT = repoRoot();
const PLUGIN_DIR = join(ROOT, 'dist', 'bin');

interface OwnedJob {
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string>; ownerReferences?: { uid: string; controller?: boolean }[] };
}

describe('kubectl secondcron', () => {
  let ns: TestNamespace;
  let op: OperatorProcess;
  let tmp: string;

  /** `kubectl secondcron …` with the plugin on PATH (kubectl finds it there, as a user's would). */
  const plugin = (args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; namespace?: boolean } = {}): Promise<CommandResult> => {
    const base = testEnv();
    const env = { ...base, PATH: `${PLUGIN_DIR}${delimiter}${base.PATH ?? ''}`, ...opts.env };
    const nsArgs = opts.namespace === false ? [] : ['-n', ns.name];
    return runCommand(join(testBinDir(), 'kubectl'), ['secondcron', ...args, ...nsArgs], { env, input: opts.input, timeoutMs: 60_000 });
  };
  const pluginOk = async (args: string[], opts: Parameters<typeof plugin>[1] = {}): Promise<string> => {
    const res = await plugin(args, opts);
    assert.equal(res.code, 0, `kubectl secondcron ${args.join(' ')} failed (${res.code}): ${res.stderr}`);
    return res.stdout;
  };
  const file = (name: string, content: unknown): string => {
    const path = join(tmp, name);
    writeFileSync(path, typeof content === 'string' ? content : dump(content));
    return path;
  };

  before(async () => {
    await installCrd(kubectl);
    ns = await uniqueNamespace('plugin');
    tmp = mkdtempSync(join(tmpdir(), 'secondcron-plugin-'));
    op = await startOperator({ namespaces: [ns.name], identity: 'op-plugin', args: ['--leader-election-namespace', ns.name] });
  });

  after(async () => {
    await op?.dispose();
    await ns?.cleanup();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('--version for the plugin and the operator; version and commit in the first log line and secondcron_build_info', async () => {
    const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    assert.equal((await pluginOk(['--version'], { namespace: false })).trim(), `kubectl-secondcron ${version} (commit ${commit})`);
    assert.equal(execFileSync(process.execPath, [join(ROOT, 'dist', 'main.js'), '--version'], { encoding: 'utf8' }).trim(), `secondcron ${version} (commit ${commit})`);
    const first = JSON.parse(op.logs().split('\n')[0] as string) as Record<string, unknown>;
    assert.equal(first.msg, 'starting');
    assert.equal(first.version, version);
    assert.equal(first.commit, commit);
    assert.equal(await op.metric('secondcron_build_info', `version="${version}",commit="${commit}"`), 1);
  });

  test('kubectl explain documents the Job template down to the containers', async () => {
    // Discovery may lag the CRD's Established condition by a moment.
    const out = await eventually('kubectl explain knows scj', () => kubectlOk(['explain', 'scj.spec.jobTemplate.spec.template.spec.containers']), { timeoutMs: 20_000 });
    assert.match(out, /List of containers belonging to the pod/);
    assert.match(out, /imagePullPolicy\s+<string>/);
    assert.match(out, /Container image name/);
    const probe = await kubectlOk(['explain', 'scj.spec.jobTemplate.spec.template.spec.containers.livenessProbe.httpGet.port']);
    assert.match(probe, /Name or number of the port/);
  });

  test('strict field validation rejects a misspelt template field with its path; a correct one applies', async () => {
    const manifest = scjManifest(ns.name, 'typo', { intervalSeconds: 3600 }) as { spec: { jobTemplate: { spec: { template: { spec: { containers: Record<string, unknown>[] } } } } } };
    const container = manifest.spec.jobTemplate.spec.template.spec.containers[0] as Record<string, unknown>;
    container.imagee = container.image;
    const res = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
    assert.notEqual(res.code, 0, 'apply must fail');
    assert.match(res.stderr, /unknown field "spec\.jobTemplate\.spec\.template\.spec\.containers\[0\]\.imagee"/);
    delete container.imagee;
    container.resources = { limits: { cpu: '500m', memory: 64 * 1024 * 1024 } };
    container.ports = [{ containerPort: 8080 }];
    await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
    const stored = await getScj<typeof manifest>(ns.name, 'typo');
    const ports = (stored.spec.jobTemplate.spec.template.spec.containers[0] as { ports: { protocol: string }[] }).ports;
    assert.equal(ports[0]?.protocol, 'TCP', 'the list-map key default of Kubernetes applies');
    await kubectlOk(['delete', 'scj', 'typo', '-n', ns.name]);
  });

  test('the CRD applies with plain client-side kubectl apply (its last-applied copy fits 256 KiB); explain points to the full text', async () => {
    const applied = await kubectl(['apply', '-f', CRD_PATH]);
    assert.equal(applied.code, 0, applied.stderr);
    const annotation = (await kubectlOk(['get', 'crd', CRD_NAME, '-o', 'jsonpath={.metadata.annotations.kubectl\\.kubernetes\\.io/last-applied-configuration}'])).trim();
    assert.deepEqual((JSON.parse(annotation) as { spec: unknown }).spec, readCrd(CRD_PATH).crd.spec, 'the last-applied copy is the whole file');
    assert.ok(Buffer.byteLength(annotation) < LAST_APPLIED_LIMIT, `${Buffer.byteLength(annotation)} bytes`);
    const template = (await kubectlOk(['explain', 'scj.spec.jobTemplate.spec.template'])).replace(/\s+/g, ' ');
    assert.match(template, /`kubectl explain job\.spec\.template` has the full text/);
  });

  test('the committed Job template schema is what the pinned API server publishes (make crd is up to date)', async () => {
    const doc = JSON.parse(await kubectlOk(['get', '--raw', '/openapi/v3/apis/batch/v1'])) as OpenApiDocument;
    assert.deepEqual(jobTemplateOf(readCrd(CRD_PATH).crd), jobTemplateSchema(doc));
  });

  test('columns: Ready and TimeZone by default, the Ready reason, Containers and Images with -o wide', async () => {
    await applyScj(ns.name, 'cols', { schedule: '0 0 3 * * *', timeZone: 'Asia/Tokyo' });
    const plain = await kubectlOk(['get', 'scj', 'cols', '-n', ns.name]);
    const [header, row] = plain.trim().split('\n');
    assert.match(header ?? '', /^NAME\s+READY\s+SCHEDULE\s+INTERVAL\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+NEXT SCHEDULE\s+AGE$/);
    assert.match(row ?? '', /Asia\/Tokyo/);
    await eventually('next schedule shown as a time', async () => {
      const out = await kubectlOk(['get', 'scj', 'cols', '-n', ns.name, '--no-headers']);
      return /\d{4}-\d\d-\d\dT18:00:00Z/.test(out) ? true : undefined;
    }, { timeoutMs: 15_000 });
    const wide = await kubectlOk(['get', 'scj', 'cols', '-n', ns.name, '-o', 'wide']);
    assert.match(wide, /^NAME\s+READY\s+REASON\s+SCHEDULE\s.*\sCONTAINERS\s+IMAGES\s+AGE\n/);
    assert.match(wide, /^cols\s+True\s+Scheduled\s+0 0 3 \* \* \*\s.*\swork\s+busybox:1\.36\s/m);

    // A schedule the operator rejects is not Ready in the default columns, and wide says why.
    await applyScj(ns.name, 'rejected', { schedule: '61 * * * * *' });
    await eventually('rejected shows READY False', async () => {
      const out = await kubectlOk(['get', 'scj', 'rejected', '-n', ns.name, '--no-headers']);
      return /^rejected\s+False\s+61 \* \* \* \* \*\s/.test(out) ? true : undefined;
    }, { timeoutMs: 15_000 });
    assert.match(await kubectlOk(['get', 'scj', 'rejected', '-n', ns.name, '-o', 'wide', '--no-headers']), /^rejected\s+False\s+InvalidSchedule\s/);
    await kubectlOk(['delete', 'scj', 'rejected', '-n', ns.name]);
  });

  test('conditions are metav1.Conditions: the API server refuses a reason that is not one CamelCase word, or a missing message', async () => {
    const patch = (condition: Record<string, unknown>): Promise<CommandResult> => kubectl(['patch', 'scj', 'cols', '-n', ns.name, '--subresource=status', '--type=merge', '--dry-run=server', '-p',
      JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-12-03T00:00:00Z', message: 'm', ...condition }] } })]);
    const ok = await patch({ reason: 'InvalidSchedule' });
    assert.equal(ok.code, 0, ok.stderr);
    for (const [bad, message] of [
      [{ reason: 'not one word' }, /status\.conditions\[0\]\.reason: Invalid value: "not one word": (status\.)?conditions\[0\]\.reason in body should match '\^\[A-Za-z\]/],
      [{ reason: '' }, /status\.conditions\[0\]\.reason: Invalid value: "": (status\.)?conditions\[0\]\.reason in body should be at least 1 chars long/],
      [{ reason: 'R', message: undefined }, /status\.conditions\[0\]\.message: Required value/],
      [{ reason: 'R', type: 'not a type!' }, /status\.conditions\[0\]\.type: Invalid value/],
    ] as const) {
      const res = await patch(bad);
      assert.notEqual(res.code, 0, JSON.stringify(bad));
      assert.match(res.stderr, message);
    }
  });

  test('next agrees with the Jobs the operator then creates', async () => {
    await applyScj(ns.name, 'every3', { schedule: '*/3 * * * * *' });
    const printed = JSON.parse(await pluginOk(['next', 'every3', '--count', '3', '-o', 'json'])) as { name: string; next: { utc: string }[] }[];
    const slots = printed[0]?.next.map((n) => Date.parse(n.utc)) ?? [];
    assert.equal(slots.length, 3);
    await sleepUntil((slots[2] as number) + 2_000);
    const created = new Set((await listJobs(ns.name, 'every3')).map((j) => j.slotMs));
    for (const s of slots) assert.ok(created.has(s), `a Job for ${new Date(s).toISOString()}; got ${[...created].map((c) => new Date(c).toISOString()).join(' ')}`);
    const table = await pluginOk(['next', 'every3']);
    assert.match(table.split('\n')[0] ?? '', /^#\s+TIME \(UTC\)\s+UTC\s+FROM NOW$/);
    await kubectlOk(['delete', 'scj', 'every3', '-n', ns.name]);
  });

  test('an exec credential plugin with interactiveMode: Always prompts on a terminal and is refused without one, as kubectl does', async () => {
    await applyScj(ns.name, 'prompted', { intervalSeconds: 86_400 });
    const admin = load(readFileSync(testKubeconfig(), 'utf8')) as { clusters: { cluster: Record<string, unknown> }[]; users: { user: { token: string } }[] };
    const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: admin.users[0]?.user.token } });
    const execPlugin = file('prompt.sh', `#!/bin/sh\nprintf 'Passphrase: ' >&2\nread -r answer\n[ "$answer" = "open sesame" ] || exit 7\necho '${credential}'\n`);
    execFileSync('chmod', ['+x', execPlugin]);
    const k = file('exec.kubeconfig', {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: admin.clusters[0]?.cluster }],
      users: [{ name: 'u', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: execPlugin, interactiveMode: 'Always' } } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: ns.name } }],
      'current-context': 'x',
    });
    const notTerminal = await plugin(['history', 'prompted', '--kubeconfig', k], { namespace: false });
    assert.equal(notTerminal.code, 1);
    assert.match(notTerminal.stderr, /standard input is not a terminal/);
    // util-linux `script` gives kubectl (and so the plugin and its exec plugin) a terminal as stdin.
    const base = testEnv();
    const shell = `${join(testBinDir(), 'kubectl')} secondcron history prompted --kubeconfig ${k}`;
    const onTerminal = await runCommand('script', ['-qec', shell, '/dev/null'], {
      env: { ...base, PATH: `${PLUGIN_DIR}${delimiter}${base.PATH ?? ''}` },
      input: 'open sesame\n',
      timeoutMs: 60_000,
    });
    assert.equal(onTerminal.code, 0, onTerminal.stdout + onTerminal.stderr);
    assert.match(onTerminal.stdout, /Passphrase: /);
    assert.match(onTerminal.stdout, /No Jobs of secondcronjob.secondcron.io\/prompted/);
  });

  test('H: plugin, status, wide column and the operator\'s Jobs agree on the hashed slots', async () => {
    await applyScj(ns.name, 'hspread', { schedule: 'H/3 * * * * *' });
    const printed = JSON.parse(await pluginOk(['next', 'hspread', '--count', '3', '-o', 'json'])) as { resolvedSchedule: string; next: { utc: string }[] }[];
    const resolved = printed[0]?.resolvedSchedule ?? '';
    assert.match(resolved, /^[0-2]-59\/3 \* \* \* \* \*$/);
    const slots = printed[0]?.next.map((n) => Date.parse(n.utc)) ?? [];
    assert.equal(slots.length, 3);
    for (const s of slots) assert.equal((s / 1000) % 3, Number(resolved.split('-')[0]), 'every 3 s from the hashed offset');
    await sleepUntil((slots[2] as number) + 2_000);
    const created = new Set((await listJobs(ns.name, 'hspread')).map((j) => j.slotMs));
    for (const s of slots) assert.ok(created.has(s), `a Job for ${new Date(s).toISOString()}; got ${[...created].map((c) => new Date(c).toISOString()).join(' ')}`);
    assert.equal((await getScj<{ status?: { resolvedSchedule?: string } }>(ns.name, 'hspread')).status?.resolvedSchedule, resolved);
    const wide = (await kubectlOk(['get', 'scj', 'hspread', '-n', ns.name, '-o', 'wide'])).split('\n');
    assert.match(wide[0] ?? '', /^NAME\s+READY\s+REASON\s+SCHEDULE\s+SCHEDULES\s+RESOLVED\s+INTERVAL\s/);
    assert.match(wide[1] ?? '', new RegExp(`H/3 \\* \\* \\* \\* \\*\\s+${resolved.replace(/[*/]/g, '\\$&')}\\s`), wide.join('\n'));
    const validated = await pluginOk(['validate', '-f', file('hspread.yaml', scjManifest(ns.name, 'hspread', { schedule: 'H/3 * * * * *' }))]);
    assert.ok(validated.includes(`: valid: cron "H/3 * * * * *" resolved to "${resolved}"`), validated);
    await kubectlOk(['delete', 'scj', 'hspread', '-n', ns.name]);
  });

  test('run: a manual Job the operator treats as its own (active list, history limit); history shows it', async () => {
    await applyScj(ns.name, 'manual', { intervalSeconds: 86_400, successfulJobsHistoryLimit: 1, jobTemplate: podTemplate({ [RUN_SECONDS_ANNOTATION]: '3' }) });
    const scj = await getScj<{ metadata: { uid: string } }>(ns.name, 'manual');
    const first = /^job\.batch\/(manual-manual-[a-z0-9]{5}) created$/.exec((await pluginOk(['run', 'manual'])).trim())?.[1];
    assert.ok(first, 'prints the created Job');
    const job = JSON.parse(await kubectlOk(['get', 'job', first, '-n', ns.name, '-o', 'json'])) as OwnedJob;
    assert.equal(job.metadata.annotations?.['secondcron.io/instantiate'], 'manual');
    assert.equal(job.metadata.labels?.['secondcron.io/secondcronjob'], 'manual');
    assert.deepEqual(job.metadata.ownerReferences?.map((r) => [r.uid, r.controller]), [[scj.metadata.uid, true]]);
    await eventually('the operator lists the manual Job as active', async () => {
      const s = await getScj<{ status?: { active?: { name: string }[] } }>(ns.name, 'manual');
      return s.status?.active?.some((a) => a.name === first) ? true : undefined;
    }, { timeoutMs: 15_000 });
    const history = JSON.parse(await pluginOk(['history', 'manual', '-o', 'json'])) as { job: string; manual: boolean; slot?: string }[];
    assert.deepEqual(history.map((h) => [h.job, h.manual, h.slot]), [[first, true, undefined]]);
    const second = /job\.batch\/(\S+) created/.exec(await pluginOk(['run', 'manual']))?.[1];
    assert.ok(second && second !== first);
    // Both complete after ~3 s; successfulJobsHistoryLimit 1 keeps only the newer one.
    await eventually('the older manual Job is pruned', async () => {
      const names = (await listJobs(ns.name, 'manual')).filter((j) => !j.deleting).map((j) => j.name);
      return names.length === 1 && names[0] === second ? true : undefined;
    }, { timeoutMs: 30_000 });
    const table = await pluginOk(['history', 'manual']);
    assert.match(table, new RegExp(`${second}\\s+manual\\s+\\S+\\s+-\\s+Complete\\s+\\d+s`));
  });

  test('schedules and a window: next lists the union inside the window only, validate and the wide column agree', async () => {
    // 2030-01-01 is a Tuesday; Berlin is UTC+1 in January. The window ends before Tuesday 8 January's slot.
    const spec = { schedules: ['0 30 8 * * MON-FRI', '0 0 10 * * SAT,SUN'], timeZone: 'Europe/Berlin', notBefore: '2030-01-01T00:00:00Z', notAfter: '2030-01-08T00:00:00Z' };
    await applyScj(ns.name, 'twice', spec);
    const [printed] = JSON.parse(await pluginOk(['next', 'twice', '--count', '10', '-o', 'json'])) as { schedules: string[]; resolvedSchedules: string[]; window: string; next: { time: string; utc: string }[] }[];
    assert.deepEqual(printed?.next.map((n) => n.utc), [
      '2030-01-01T07:30:00Z', '2030-01-02T07:30:00Z', '2030-01-03T07:30:00Z', '2030-01-04T07:30:00Z', '2030-01-05T09:00:00Z', '2030-01-06T09:00:00Z', '2030-01-07T07:30:00Z',
    ]);
    assert.equal(printed?.next[0]?.time, '2030-01-01T08:30:00+01:00');
    assert.deepEqual({ window: printed?.window, resolved: printed?.resolvedSchedules }, { window: 'NotYetActive', resolved: spec.schedules });
    const text = await pluginOk(['next', 'twice', '--count', '10']);
    assert.match(text, /^not yet active: no slot before notBefore 2030-01-01T00:00:00Z \(nor after notAfter 2030-01-08T00:00:00Z\)\n/);
    const validated = await pluginOk(['validate', '-f', file('twice.yaml', scjManifest(ns.name, 'twice', spec))]);
    assert.ok(validated.includes(': valid: cron union of 2 ["0 30 8 * * MON-FRI", "0 0 10 * * SAT,SUN"] in Europe/Berlin, only from 2030-01-01T00:00:00.000Z until 2030-01-08T00:00:00.000Z'), validated);
    const wide = await kubectlOk(['get', 'scj', 'twice', '-n', ns.name, '-o', 'wide']);
    assert.ok(wide.includes('["0 30 8 * * MON-FRI","0 0 10 * * SAT,SUN"]'), wide);
    await kubectlOk(['delete', 'scj', 'twice', '-n', ns.name]);
  });

  test('run --env: the manual Job with the variables set or replaced, recorded in an annotation; clear errors', async () => {
    const template = podTemplate();
    const podSpec = (template.spec as { template: { spec: { containers: Record<string, unknown>[] } } }).template.spec;
    podSpec.containers = [{ name: 'work', image: 'busybox:1.36', command: ['true'], env: [{ name: 'MODE', value: 'daily' }] }, { name: 'helper', image: 'busybox:1.36', command: ['true'] }];
    await applyScj(ns.name, 'envy', { intervalSeconds: 86_400, jobTemplate: template });
    type EnvJob = OwnedJob & { spec: { template: { spec: { containers: { name: string; env?: { name: string; value?: string }[] }[] } } } };
    const envOf = (job: EnvJob): Record<string, unknown> => Object.fromEntries(job.spec.template.spec.containers.map((c) => [c.name, c.env]));

    const preview = load(await pluginOk(['run', 'envy', '--env', 'MODE=backfill', '--env', 'DAY=2026-12-01', '--dry-run=client', '-o', 'yaml'])) as EnvJob;
    assert.deepEqual(envOf(preview), {
      work: [{ name: 'MODE', value: 'backfill' }, { name: 'DAY', value: '2026-12-01' }],
      helper: [{ name: 'MODE', value: 'backfill' }, { name: 'DAY', value: '2026-12-01' }],
    });
    assert.equal(preview.metadata.annotations?.['secondcron.io/env-overrides'], '{"containers":["work","helper"],"env":{"MODE":"backfill","DAY":"2026-12-01"}}');
    assert.equal((await listJobs(ns.name, 'envy')).length, 0, 'a client dry run stores nothing');

    const created = /^job\.batch\/(envy-manual-[a-z0-9]{5}) created$/.exec((await pluginOk(['run', 'envy', '--env', 'MODE=backfill', '--container', 'work'])).trim())?.[1];
    assert.ok(created, 'prints the created Job');
    const stored = JSON.parse(await kubectlOk(['get', 'job', created, '-n', ns.name, '-o', 'json'])) as EnvJob;
    assert.deepEqual(envOf(stored), { work: [{ name: 'MODE', value: 'backfill' }], helper: undefined });
    assert.equal(stored.metadata.annotations?.['secondcron.io/env-overrides'], '{"containers":["work"],"env":{"MODE":"backfill"}}');
    assert.equal(stored.metadata.annotations?.['secondcron.io/instantiate'], 'manual');

    const unknown = await plugin(['run', 'envy', '--env', 'A=1', '--container', 'wrok']);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'error: secondcronjob.secondcron.io/envy: container "wrok" not found in the Job template; its containers: work, helper\n');
    const malformed = await plugin(['run', 'envy', '--env', 'MODE']);
    assert.notEqual(malformed.code, 0);
    assert.match(malformed.stderr, /^error: --env "MODE" is not NAME=VALUE \(no "="\)\nSee 'kubectl secondcron run --help' for usage\.$/m);
    assert.equal((await listJobs(ns.name, 'envy')).length, 1, 'only the one Job was created');
  });

  test('suspend and resume set spec.suspend', async () => {
    await applyScj(ns.name, 'pausable', { intervalSeconds: 86_400 });
    assert.equal((await pluginOk(['suspend', 'pausable'])).trim(), 'secondcronjob.secondcron.io/pausable suspended');
    assert.equal((await getScj<{ spec: { suspend: boolean } }>(ns.name, 'pausable')).spec.suspend, true);
    assert.equal((await pluginOk(['suspend', 'pausable'])).trim(), 'secondcronjob.secondcron.io/pausable suspended (no change)');
    assert.equal((await pluginOk(['resume', 'pausable'])).trim(), 'secondcronjob.secondcron.io/pausable resumed');
    assert.equal((await getScj<{ spec: { suspend: boolean } }>(ns.name, 'pausable')).spec.suspend, false);
  });

  test('validate: the examples pass; every bad input of the operator tests fails with the operator\'s words', async () => {
    const examples = readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.yaml')).map((f) => join(ROOT, 'examples', f));
    const ok = await pluginOk(['validate', ...examples.flatMap((f) => ['-f', f])]);
    assert.equal(ok.match(/: valid: /g)?.length, examples.length, ok);

    const tpl = podTemplate();
    const bad = (spec: Record<string, unknown>, name = 'bad'): Record<string, unknown> => ({ apiVersion: 'secondcron.io/v1', kind: 'SecondCronJob', metadata: { name }, spec: { jobTemplate: tpl, ...spec } });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['both schedule and interval', bad({ schedule: '* * * * * *', intervalSeconds: 1 }), /exactly one of spec.schedule, spec.schedules or spec.intervalSeconds/],
      ['neither', bad({}), /exactly one of spec.schedule, spec.schedules or spec.intervalSeconds/],
      ['schedule and schedules', bad({ schedule: '* * * * * *', schedules: ['0 * * * * *'] }), /exactly one of spec.schedule, spec.schedules or spec.intervalSeconds/],
      ['a bad expression in schedules', bad({ schedules: ['0 * * * * *', '61 * * * * *'] }), /InvalidSchedule: schedules\[1\]: .*61/],
      ['maxConcurrency with Allow', bad({ intervalSeconds: 5, maxConcurrency: 2 }), /spec.maxConcurrency is only valid with concurrencyPolicy Forbid or Enqueue/],
      ['an empty window', bad({ intervalSeconds: 5, notBefore: '2027-01-01T00:00:00Z', notAfter: '2026-01-01T00:00:00Z' }), /spec.notAfter must be later than spec.notBefore/],
      ['interval < 1', bad({ intervalSeconds: 0 }), /spec.intervalSeconds/],
      ['timeZone without schedule', bad({ intervalSeconds: 5, timeZone: 'UTC' }), /spec.timeZone is only valid together with spec.schedule or spec.schedules/],
      ['negative deadline', bad({ intervalSeconds: 5, startingDeadlineSeconds: -1 }), /spec.startingDeadlineSeconds/],
      ['negative success history', bad({ intervalSeconds: 5, successfulJobsHistoryLimit: -1 }), /spec.successfulJobsHistoryLimit/],
      ['negative failed history', bad({ intervalSeconds: 5, failedJobsHistoryLimit: -2 }), /spec.failedJobsHistoryLimit/],
      ['unknown policy', bad({ intervalSeconds: 5, concurrencyPolicy: 'Sometimes' }), /Unsupported value: "Sometimes"/],
      ['name longer than 52', bad({ intervalSeconds: 5 }, 'x'.repeat(53)), /at most 52 characters/],
      ['missing jobTemplate', { ...bad({}), spec: { intervalSeconds: 5 } }, /spec.jobTemplate: Required value/],
      ['no restartPolicy', bad({ intervalSeconds: 5, jobTemplate: { spec: { template: { spec: { containers: [{ name: 'a', image: 'b' }] } } } } }), /restartPolicy: Required value/],
      ['misspelt template field', bad({ intervalSeconds: 5, jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', imagee: 'b' }] } } } } }), /unknown field "spec.jobTemplate.spec.template.spec.containers\[0\].imagee"/],
      ['never fires', bad({ schedule: '0 0 0 30 2 *' }), /InvalidSchedule: .*never fires/],
      ['unknown zone', bad({ schedule: '* * * * * *', timeZone: 'Mars/Olympus' }), /UnknownTimeZone: .*Mars\/Olympus/],
      ['bad syntax', bad({ schedule: '61 * * * * *' }), /InvalidSchedule: .*61/],
      ['template the Job API rejects', bad({ intervalSeconds: 1, jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'b', ports: [{ containerPort: 99999 }] }] } } } } }), /InvalidJobTemplate: .*containerPort/],
    ];
    for (const [what, manifest, message] of cases) {
      const res = await plugin(['validate', '-f', file('bad.yaml', manifest)]);
      assert.equal(res.code, 1, `${what}: exit 1 (stdout ${res.stdout}, stderr ${res.stderr})`);
      assert.match(res.stdout, message, `${what}: ${res.stdout}${res.stderr}`);
      assert.match(res.stderr, /error: 1 of 1 SecondCronJob\(s\) invalid/);
    }
    assert.equal((await kubectl(['get', 'scj', 'bad', '-n', ns.name])).code, 1, 'a dry run stores nothing');
  });

  test('clear errors: a missing resource, a bad file, no cluster', async () => {
    const missing = await plugin(['run', 'nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: Error from server \(NotFound\): secondcronjobs.secondcron.io "nope" not found/);
    const badYaml = await plugin(['next', '-f', file('broken.yaml', 'spec: [unclosed')]);
    assert.equal(badYaml.code, 1);
    assert.match(badYaml.stderr, /broken\.yaml is not valid YAML or JSON/);
    const noScj = await plugin(['validate', '-f', file('pod.yaml', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } })]);
    assert.match(noScj.stderr, /no SecondCronJob \(secondcron.io\/v1\) in /);
    const noConfig = await plugin(['history', 'x', '--kubeconfig', join(tmp, 'absent')]);
    assert.equal(noConfig.code, 1);
    assert.match(noConfig.stderr, /error: no cluster: kubeconfig \S+absent: file not found/);
    const closed = file('closed.kubeconfig', {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    });
    const unreachable = await plugin(['history', 'x', '--kubeconfig', closed]);
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /error: cannot reach the API server at https:\/\/127\.0\.0\.1:1/);
  });

  test('connection like kubectl: KUBECONFIG with several files, --context, the context\'s namespace', async () => {
    await applyScj(ns.name, 'ctx', { intervalSeconds: 86_400 });
    const admin = load(readFileSync(testKubeconfig(), 'utf8')) as { contexts: { name: string; context: { cluster: string; user: string } }[] };
    const ctx = admin.contexts[0]?.context;
    const extra = file('extra.kubeconfig', { apiVersion: 'v1', kind: 'Config', contexts: [{ name: 'in-test-ns', context: { ...ctx, namespace: ns.name } }] });
    const env = { KUBECONFIG: [testKubeconfig(), extra].join(delimiter) };
    const out = await pluginOk(['suspend', 'ctx', '--context', 'in-test-ns'], { env, namespace: false });
    assert.equal(out.trim(), 'secondcronjob.secondcron.io/ctx suspended');
    const wrong = await plugin(['suspend', 'ctx'], { env, namespace: false });
    assert.match(wrong.stderr, /NotFound/, 'without --context the current context (namespace default) is used');
  });

  test('like kubectl: per-command --help, usage errors exit as kubectl\'s do, TYPE/NAME, -A, -o name|wide|jsonpath', async () => {
    const runHelp = await pluginOk(['run', '--help'], { namespace: false });
    assert.match(runHelp, /^Start a Job now from a SecondCronJob's template/);
    assert.match(runHelp, /^Examples:\n {2}# A Job now\n {2}kubectl secondcron run heartbeat$/m);
    // kubectl's own exit code and wording for an unknown flag, next to ours.
    const theirs = await kubectl(['get', 'pods', '--bogus']);
    const ours = await plugin(['run', 'x', '--bogus']);
    assert.equal(ours.code, theirs.code);
    assert.match(theirs.stderr, /^error: unknown flag: --bogus\nSee 'kubectl get --help' for usage\.$/m);
    assert.equal(ours.stderr, "error: unknown flag: --bogus\nSee 'kubectl secondcron run --help' for usage.\n");

    await applyScj(ns.name, 'typed', { intervalSeconds: 86_400 });
    assert.equal((await pluginOk(['suspend', 'scj/typed'])).trim(), 'secondcronjob.secondcron.io/typed suspended');
    assert.equal((await pluginOk(['resume', 'secondcronjobs.secondcron.io/typed', '-o', 'name'])).trim(), 'secondcronjob.secondcron.io/typed');
    const wrongType = await plugin(['run', 'cronjob/typed']);
    assert.equal(wrongType.code, theirs.code);
    assert.match(wrongType.stderr, /"run" takes SecondCronJobs \(scj\/NAME\), not "cronjob"/);

    // Without NAME: the namespace's SecondCronJobs, as `kubectl get scj` lists them; -A: every namespace's.
    const listed = (await kubectlOk(['get', 'scj', '-n', ns.name, '-o', 'jsonpath={.items[*].metadata.name}'])).trim().split(' ').sort();
    const ours1 = (await pluginOk(['next', '--count', '1', '-o', 'jsonpath={[*].name}'])).split(' ').sort();
    assert.deepEqual(ours1, listed);
    // Other test files run schedules of their own (some invalid on purpose) in other namespaces: -A
    // is checked on history, which judges no schedule, against this namespace's own listing.
    const here = JSON.parse(await pluginOk(['history', '-o', 'json'])) as { namespace: string; job: string }[];
    assert.ok(here.length > 0, 'the manual Jobs of the run test');
    const everywhere = JSON.parse(await pluginOk(['history', '-A', '-o', 'json'], { namespace: false })) as { namespace: string; job: string }[];
    assert.deepEqual(everywhere.filter((e) => e.namespace === ns.name).map((e) => e.job), here.map((e) => e.job));
    const wide = await pluginOk(['next', 'typed', '--count', '2', '-o', 'wide']);
    assert.match(wide, new RegExp(`^NAMESPACE\\s+NAME\\s+#\\s+TIME\\s+TIME ZONE\\s+UTC\\s+FROM NOW\\s+SUSPENDED\\n${ns.name}\\s+typed\\s+1\\s`));
    const byName = await plugin(['history', 'typed', '-A']);
    assert.equal(byName.code, theirs.code);
    assert.match(byName.stderr, /cannot be retrieved by name across all namespaces/);
  });

  test('run --job-name and --dry-run=client|server on run, suspend and resume: nothing stored by a dry run', async () => {
    await applyScj(ns.name, 'dry', { intervalSeconds: 86_400 });
    const client = await pluginOk(['run', 'scj/dry', '--job-name', 'dry-hotfix', '--dry-run=client']);
    assert.equal(client.trim(), 'job.batch/dry-hotfix created (dry run)');
    const server = JSON.parse(await pluginOk(['run', 'dry', '--job-name', 'dry-hotfix', '--dry-run=server', '-o', 'json'])) as OwnedJob & { metadata: { uid?: string } };
    assert.equal(server.metadata.name, 'dry-hotfix');
    assert.ok(server.metadata.uid, 'the API server admitted it (a server dry run fills in the uid)');
    assert.equal((await listJobs(ns.name, 'dry')).length, 0, 'a dry run stores no Job');
    assert.equal((await pluginOk(['run', 'dry', '--job-name', 'dry-hotfix', '-o', 'name'])).trim(), 'job.batch/dry-hotfix');
    const job = JSON.parse(await kubectlOk(['get', 'job', 'dry-hotfix', '-n', ns.name, '-o', 'json'])) as OwnedJob;
    assert.equal(job.metadata.annotations?.['secondcron.io/instantiate'], 'manual');
    const taken = await plugin(['run', 'dry', '--job-name', 'dry-hotfix']);
    assert.match(taken.stderr, /AlreadyExists/);
    const slotShaped = await plugin(['run', 'dry', '--job-name', 'dry-1796205605']);
    assert.match(slotShaped.stderr, /has the form of a scheduled Job's name/);

    for (const dryRun of ['client', 'server']) {
      const out = await pluginOk(['suspend', 'dry', `--dry-run=${dryRun}`]);
      assert.equal(out.trim(), `secondcronjob.secondcron.io/dry suspended (${dryRun === 'server' ? 'server ' : ''}dry run)`);
      assert.equal((await getScj<{ spec: { suspend?: boolean } }>(ns.name, 'dry')).spec.suspend ?? false, false, `--dry-run=${dryRun} left spec.suspend alone`);
    }
    const asYaml = load(await pluginOk(['suspend', 'dry', '--dry-run=server', '-o', 'yaml'])) as { spec: { suspend: boolean } };
    assert.equal(asYaml.spec.suspend, true, 'the object as it would be');
    assert.equal((await pluginOk(['resume', 'dry', '--dry-run=server'])).trim(), 'secondcronjob.secondcron.io/dry resumed (no change)');
  });

  test('kubectl\'s global flags: --as/--as-group, --server/--token/--insecure-skip-tls-verify, --cluster/--user, --request-timeout', async () => {
    await applyScj(ns.name, 'flags', { intervalSeconds: 86_400 });
    // A Role for a group; impersonating a user in it (and another group: the header is repeated) may read.
    await kubectlOk(['create', 'role', 'scj-reader', '-n', ns.name, '--verb=get,list', '--resource=secondcronjobs.secondcron.io,jobs.batch']);
    await kubectlOk(['create', 'rolebinding', 'scj-reader', '-n', ns.name, '--role=scj-reader', '--group=scj-readers']);
    const denied = await plugin(['history', 'flags', '--as', 'jane']);
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /Forbidden.*User "jane" cannot get resource "secondcronjobs"/);
    await eventually('the RoleBinding takes effect', async () =>
      ((await plugin(['history', 'flags', '--as', 'jane', '--as-group', 'other', '--as-group', 'scj-readers'])).code === 0 ? true : undefined), { timeoutMs: 10_000 });

    // No kubeconfig at all: --server, a ServiceAccount's --token, no CA.
    const admin = load(readFileSync(testKubeconfig(), 'utf8')) as { clusters: { cluster: { server: string } }[]; users: { user: { token: string } }[] };
    const server = admin.clusters[0]?.cluster.server as string;
    await kubectlOk(['create', 'serviceaccount', 'nobody', '-n', ns.name]);
    const token = (await kubectlOk(['create', 'token', 'nobody', '-n', ns.name])).trim();
    const direct = await plugin(['history', 'flags', '--server', server, '--token', token, '--insecure-skip-tls-verify'], { env: { KUBECONFIG: join(tmp, 'absent') } });
    assert.match(direct.stderr, new RegExp(`User "system:serviceaccount:${ns.name}:nobody" cannot get resource "secondcronjobs"`));

    // --cluster and --user over a context that names others.
    const k = file('two.kubeconfig', {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'closed', cluster: { server: 'https://127.0.0.1:1' } }, { name: 'real', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'anon', user: {} }, { name: 'admin', user: { token: admin.users[0]?.user.token } }],
      contexts: [{ name: 'x', context: { cluster: 'closed', user: 'anon' } }],
      'current-context': 'x',
    });
    assert.match((await plugin(['history', 'flags', '--kubeconfig', k])).stderr, /cannot reach the API server at https:\/\/127\.0\.0\.1:1/);
    assert.match(await pluginOk(['history', 'flags', '--kubeconfig', k, '--cluster', 'real', '--user', 'admin']), /^No Jobs of secondcronjob.secondcron.io\/flags/);
    const slow = await plugin(['history', 'flags', '--request-timeout', '1ms']);
    assert.equal(slow.code, 1);
    assert.match(slow.stderr, /timed out/);
  });

  test('validate --local needs no cluster', async () => {
    const noCluster = { env: { KUBECONFIG: join(tmp, 'absent') }, namespace: false };
    const example = join(ROOT, 'examples', readdirSync(join(ROOT, 'examples')).find((f) => f.endsWith('.yaml')) as string);
    assert.match(await pluginOk(['validate', '--local', '-f', example], noCluster), /: valid \(local: /);
    const bad = await plugin(['validate', '--local', '-f', file('local-bad.yaml', { apiVersion: 'secondcron.io/v1', kind: 'SecondCronJob', metadata: { name: 'b' }, spec: { schedule: '61 * * * * *' } })], noCluster);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /Schedule: InvalidSchedule: .*61/);
  });

  test('from-cronjob: a real CronJob migrates, applies and fires on the same minutes', async () => {
    const cronJob = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'minutely', namespace: ns.name },
      spec: { schedule: '* * * * *', successfulJobsHistoryLimit: 5, jobTemplate: podTemplate() },
    };
    await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(cronJob) });
    const printed = load(await pluginOk(['from-cronjob', 'minutely'])) as { kind: string; spec: Record<string, unknown> };
    assert.equal(printed.kind, 'SecondCronJob');
    assert.equal(printed.spec.schedule, '* * * * *');
    const applied = await pluginOk(['from-cronjob', 'minutely', '--apply']);
    assert.match(applied, /secondcronjob.secondcron.io\/minutely serverside-applied/);
    // Both fire at second 0 of every minute: wait for a minute both have run.
    const common = await eventually('a minute with a Job from each', async () => {
      const ours = new Set((await listJobs(ns.name, 'minutely')).map((j) => j.slotMs));
      const out = await kubectlOk(['get', 'jobs', '-n', ns.name, '-o', 'json']);
      const theirs = (JSON.parse(out) as { items: OwnedJob[] }).items
        .map((j) => Date.parse(j.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'] ?? ''))
        .filter((ms) => !Number.isNaN(ms));
      return theirs.find((ms) => ours.has(ms));
    }, { timeoutMs: 150_000, intervalMs: 2_000 });
    assert.equal(common % 60_000, 0, 'second 0 of a minute');
    const suspended = await pluginOk(['from-cronjob', 'minutely', '--apply', '--suspend-source']);
    assert.match(suspended, /cronjob.batch\/minutely suspended/);
    assert.equal((JSON.parse(await kubectlOk(['get', 'cronjob', 'minutely', '-n', ns.name, '-o', 'json'])) as { spec: { suspend: boolean } }).spec.suspend, true);
  });
});
