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

  test('columns: TimeZone by default, Containers and Images with -o wide', async () => {
    await applyScj(ns.name, 'cols', { schedule: '0 0 3 * * *', timeZone: 'Asia/Tokyo' });
    const plain = await kubectlOk(['get', 'scj', 'cols', '-n', ns.name]);
    const [header, row] = plain.trim().split('\n');
    assert.match(header ?? '', /^NAME\s+SCHEDULE\s+INTERVAL\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+NEXT SCHEDULE\s+AGE$/);
    assert.match(row ?? '', /Asia\/Tokyo/);
    await eventually('next schedule shown as a time', async () => {
      const out = await kubectlOk(['get', 'scj', 'cols', '-n', ns.name, '--no-headers']);
      return /\d{4}-\d\d-\d\dT18:00:00Z/.test(out) ? true : undefined;
    }, { timeoutMs: 15_000 });
    const wide = await kubectlOk(['get', 'scj', 'cols', '-n', ns.name, '-o', 'wide']);
    assert.match(wide, /READY\s+CONTAINERS\s+IMAGES\s+AGE/);
    assert.match(wide, /True\s+work\s+busybox:1\.36/);
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
      ['both schedule and interval', bad({ schedule: '* * * * * *', intervalSeconds: 1 }), /exactly one of spec.schedule or spec.intervalSeconds/],
      ['neither', bad({}), /exactly one of spec.schedule or spec.intervalSeconds/],
      ['interval < 1', bad({ intervalSeconds: 0 }), /spec.intervalSeconds/],
      ['timeZone without schedule', bad({ intervalSeconds: 5, timeZone: 'UTC' }), /spec.timeZone is only valid together with spec.schedule/],
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
