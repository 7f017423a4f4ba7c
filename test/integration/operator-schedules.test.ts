// The operator against a real control plane: slots, concurrency policy, suspend, history limits,
// deletion through the finalizer, and validation at `kubectl apply` and in status.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { RUN_SECONDS_ANNOTATION, FAIL_ANNOTATION } from '../cluster/cluster.js';
import { type TestNamespace, kubectl, kubectlOk, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startOperator } from './helpers/operator.js';
import { applyScj, events, getScj, listJobs, patchScj, podTemplate, sleepUntil, tryApply } from './helpers/scj.js';
import { installCrd } from '../cluster/crd.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('operator schedules Jobs', () => {
  let ns: TestNamespace;
  let op: OperatorProcess;

  before(async () => {
    await installCrd(kubectl);
    ns = await uniqueNamespace('scj');
    op = await startOperator({ namespaces: [ns.name], identity: 'op-schedules', args: ['--leader-election-namespace', ns.name] });
  });

  after(async () => {
    if (op) {
      const failedCreates = await op.metric('secondcron_jobs_created_total', 'result="error"').catch(() => undefined);
      if (failedCreates) process.stderr.write(`operator log tail:\n${op.logs(40)}\n`);
      await op.dispose();
    }
    await ns?.cleanup();
  });

  test('intervalSeconds 1 for 10 s: 10±1 Jobs named <name>-<slot>, slots anchored on creation', async () => {
    const { createdMs } = await applyScj(ns.name, 'every-second', { intervalSeconds: 1 });
    await sleepUntil(createdMs + 10_500);
    const jobs = await listJobs(ns.name, 'every-second');
    const seen = jobs.filter((j) => j.slotMs <= createdMs + 10_000);
    assert.ok(seen.length >= 9 && seen.length <= 11, `expected 10±1 Jobs in the first 10 s, got ${seen.length}: ${seen.map((j) => j.name).join(' ')}`);
    for (const j of jobs) {
      const k = (j.slotMs - createdMs) / 1000;
      assert.ok(Number.isInteger(k) && k >= 1, `slot of ${j.name} is not creation + k s`);
      assert.equal(j.name, `every-second-${j.slotMs / 1000}`);
    }
    assert.equal(new Set(jobs.map((j) => j.slotMs)).size, jobs.length, 'no slot twice');
    const created = await op.metric('secondcron_jobs_created_total', 'result="created"');
    assert.ok((created ?? 0) >= 9);
    const status = await getScj<{ status: { lastScheduleTime?: string; nextScheduleTime?: string } }>(ns.name, 'every-second');
    assert.ok(status.status.lastScheduleTime, 'status.lastScheduleTime is set');
    assert.ok(Date.parse(status.status.nextScheduleTime ?? '') > Date.parse(status.status.lastScheduleTime ?? ''));
    await kubectlOk(['delete', 'secondcronjob', 'every-second', '-n', ns.name]);
  });

  test('"*/2 * * * * *" fires on even seconds only', async () => {
    const { createdMs } = await applyScj(ns.name, 'even', { schedule: '*/2 * * * * *' });
    await sleepUntil(createdMs + 7_500);
    const jobs = await listJobs(ns.name, 'even');
    assert.ok(jobs.length >= 3, `expected at least 3 Jobs in 7 s, got ${jobs.length}`);
    for (const j of jobs) assert.equal((j.slotMs / 1000) % 2, 0, `${j.name} is not on an even second`);
    await kubectlOk(['delete', 'secondcronjob', 'even', '-n', ns.name]);
  });

  test('Forbid skips slots while a Job runs', async () => {
    const forbidBefore = (await op.metric('secondcron_triggers_missed_total', 'reason="forbid"')) ?? 0;
    const { createdMs } = await applyScj(ns.name, 'forbid', {
      intervalSeconds: 1,
      concurrencyPolicy: 'Forbid',
      jobTemplate: podTemplate({ [RUN_SECONDS_ANNOTATION]: '6' }),
    });
    await sleepUntil(createdMs + 5_000);
    const jobs = await listJobs(ns.name, 'forbid');
    assert.equal(jobs.length, 1, `Forbid: one Job while it runs, got ${jobs.map((j) => j.name).join(' ')}`);
    const forbidAfter = (await op.metric('secondcron_triggers_missed_total', 'reason="forbid"')) ?? 0;
    assert.ok(forbidAfter - forbidBefore >= 2, `skipped slots counted as missed{reason=forbid}: ${forbidAfter - forbidBefore}`);
    // Once the long Job completes (kwok ends it after 6 s), the next slot runs again.
    await eventually('a second Job after the first completed', async () => ((await listJobs(ns.name, 'forbid')).length >= 2 ? true : undefined), { timeoutMs: 20_000 });
    await kubectlOk(['delete', 'secondcronjob', 'forbid', '-n', ns.name]);
  });

  test('Replace deletes the running Job and starts the new one', async () => {
    await applyScj(ns.name, 'replace', {
      intervalSeconds: 2,
      concurrencyPolicy: 'Replace',
      jobTemplate: podTemplate({ [RUN_SECONDS_ANNOTATION]: '60' }),
    });
    const seen = new Set<string>();
    await eventually(
      'three Jobs created, each replacing the previous',
      async () => {
        for (const j of await listJobs(ns.name, 'replace')) seen.add(j.name);
        return seen.size >= 3 ? true : undefined;
      },
      { timeoutMs: 20_000 },
    );
    const live = (await listJobs(ns.name, 'replace')).filter((j) => !j.deleting);
    assert.ok(live.length <= 2, `replaced Jobs are deleted (live: ${live.map((j) => j.name).join(' ')})`);
    const evs = await events(ns.name, 'replace');
    assert.ok(evs.some((e) => e.reason === 'SuccessfulDelete' && /Replace/.test(e.message)), 'an Event tells of the replacement');
    await kubectlOk(['delete', 'secondcronjob', 'replace', '-n', ns.name]);
  });

  test('suspend stops new Jobs; resume starts them again', async () => {
    await applyScj(ns.name, 'pausable', { intervalSeconds: 1 });
    await eventually('first Jobs', async () => ((await listJobs(ns.name, 'pausable')).length >= 2 ? true : undefined), { timeoutMs: 10_000 });
    await patchScj(ns.name, 'pausable', { spec: { suspend: true } });
    await sleep(1_500); // in-flight slot may still land
    const whileSuspended = (await listJobs(ns.name, 'pausable')).length;
    await sleep(3_000);
    assert.equal((await listJobs(ns.name, 'pausable')).length, whileSuspended, 'no Job while suspended');
    const st = await getScj<{ status: { conditions: { reason: string }[] } }>(ns.name, 'pausable');
    assert.equal(st.status.conditions.find((c) => c.reason)?.reason, 'Suspended');
    await patchScj(ns.name, 'pausable', { spec: { suspend: false } });
    await eventually('Jobs after resume', async () => ((await listJobs(ns.name, 'pausable')).length >= whileSuspended + 2 ? true : undefined), { timeoutMs: 10_000 });
    await kubectlOk(['delete', 'secondcronjob', 'pausable', '-n', ns.name]);
  });

  test('history limits prune the oldest finished Jobs (successful and failed)', async () => {
    await applyScj(ns.name, 'history-ok', { intervalSeconds: 1, successfulJobsHistoryLimit: 2, failedJobsHistoryLimit: 1 });
    await applyScj(ns.name, 'history-bad', {
      intervalSeconds: 1,
      successfulJobsHistoryLimit: 2,
      failedJobsHistoryLimit: 1,
      jobTemplate: podTemplate({ [FAIL_ANNOTATION]: 'true' }),
    });
    await sleep(8_000);
    await eventually(
      'finished Jobs pruned to the limits',
      async () => {
        const ok = (await listJobs(ns.name, 'history-ok')).filter((j) => j.outcome === 'Complete' && !j.deleting);
        const bad = (await listJobs(ns.name, 'history-bad')).filter((j) => j.outcome === 'Failed' && !j.deleting);
        return ok.length <= 2 && ok.length >= 1 && bad.length === 1 ? true : undefined;
      },
      { timeoutMs: 10_000 },
    );
    const pruned = (await events(ns.name, 'history-ok')).filter((e) => e.reason === 'SuccessfulDelete');
    assert.ok(pruned.length >= 1, 'pruning is reported as Events');
    await kubectlOk(['delete', 'secondcronjob', 'history-ok', 'history-bad', '-n', ns.name]);
  });

  test('kubectl delete removes the owned Jobs, then the resource (finalizer)', async () => {
    await applyScj(ns.name, 'doomed', { intervalSeconds: 1, jobTemplate: podTemplate({ [RUN_SECONDS_ANNOTATION]: '60' }) });
    await eventually('running Jobs', async () => ((await listJobs(ns.name, 'doomed')).length >= 2 ? true : undefined), { timeoutMs: 10_000 });
    const scj = await getScj<{ metadata: { finalizers?: string[] } }>(ns.name, 'doomed');
    assert.deepEqual(scj.metadata.finalizers, ['secondcron.io/cleanup']);
    await kubectlOk(['delete', 'secondcronjob', 'doomed', '-n', ns.name, '--timeout=30s']);
    const gone = await kubectl(['get', 'secondcronjob', 'doomed', '-n', ns.name]);
    assert.notEqual(gone.code, 0, 'the SecondCronJob is gone');
    await eventually('no Jobs left', async () => ((await listJobs(ns.name, 'doomed')).length === 0 ? true : undefined), { timeoutMs: 15_000 });
  });

  test('kubectl apply rejects bad input with a clear message', async () => {
    const base = (spec: Record<string, unknown>, name = 'bad'): Record<string, unknown> => ({
      apiVersion: 'secondcron.io/v1',
      kind: 'SecondCronJob',
      metadata: { name, namespace: ns.name },
      spec: { jobTemplate: podTemplate(), ...spec },
    });
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['both schedule and interval', base({ schedule: '* * * * * *', intervalSeconds: 1 }), /exactly one of spec.schedule, spec.schedules or spec.intervalSeconds must be set/],
      ['neither schedule nor interval', base({}), /exactly one of spec.schedule, spec.schedules or spec.intervalSeconds must be set/],
      ['schedule and schedules', base({ schedule: '* * * * * *', schedules: ['0 * * * * *'] }), /exactly one of spec.schedule, spec.schedules or spec.intervalSeconds must be set/],
      ['schedules and interval', base({ schedules: ['0 * * * * *'], intervalSeconds: 1 }), /exactly one of spec.schedule, spec.schedules or spec.intervalSeconds must be set/],
      ['empty schedules', base({ schedules: [] }), /spec.schedules.*at least 1 items/],
      ['17 schedules', base({ schedules: Array.from({ length: 17 }, (_, i) => `${i} * * * * *`) }), /spec.schedules: Too many: 17: must have at most 16 items/],
      ['an empty expression in schedules', base({ schedules: ['0 * * * * *', ''] }), /spec.schedules\[1\].*at least 1 chars long/],
      ['interval < 1', base({ intervalSeconds: 0 }), /spec.intervalSeconds.*greater than or equal to 1/],
      ['timeZone without schedule', base({ intervalSeconds: 5, timeZone: 'UTC' }), /spec.timeZone is only valid together with spec.schedule or spec.schedules/],
      ['maxConcurrency with Allow (the default)', base({ intervalSeconds: 5, maxConcurrency: 2 }), /spec.maxConcurrency is only valid with concurrencyPolicy Forbid or Enqueue/],
      ['maxConcurrency with Replace', base({ intervalSeconds: 5, concurrencyPolicy: 'Replace', maxConcurrency: 1 }), /spec.maxConcurrency is only valid with concurrencyPolicy Forbid or Enqueue/],
      ['maxConcurrency 0', base({ intervalSeconds: 5, concurrencyPolicy: 'Enqueue', maxConcurrency: 0 }), /spec.maxConcurrency.*greater than or equal to 1/],
      ['notAfter equal to notBefore', base({ intervalSeconds: 5, notBefore: '2027-01-01T00:00:00Z', notAfter: '2027-01-01T00:00:00Z' }), /spec.notAfter must be later than spec.notBefore/],
      ['notAfter before notBefore (offsets compared as instants)', base({ intervalSeconds: 5, notBefore: '2027-01-01T01:00:01+01:00', notAfter: '2027-01-01T00:00:00Z' }), /spec.notAfter must be later than spec.notBefore/],
      ['notBefore not a date-time', base({ intervalSeconds: 5, notBefore: 'tomorrow' }), /spec.notBefore.*must be of type date-time/],
      ['negative deadline', base({ intervalSeconds: 5, startingDeadlineSeconds: -1 }), /spec.startingDeadlineSeconds.*greater than or equal to 1/],
      // Every slot is a few ms late by the time its Job exists: a zero deadline could never be met.
      ['zero deadline', base({ intervalSeconds: 5, startingDeadlineSeconds: 0 }), /startingDeadlineSeconds must be at least 1: a Job is created a few\s+milliseconds after its slot/],
      ['negative success history', base({ intervalSeconds: 5, successfulJobsHistoryLimit: -1 }), /spec.successfulJobsHistoryLimit.*greater than or equal to 0/],
      ['negative failed history', base({ intervalSeconds: 5, failedJobsHistoryLimit: -2 }), /spec.failedJobsHistoryLimit.*greater than or equal to 0/],
      ['unknown policy', base({ intervalSeconds: 5, concurrencyPolicy: 'Sometimes' }), /spec.concurrencyPolicy: Unsupported value: "Sometimes"/],
      ['name longer than 52', base({ intervalSeconds: 5 }, 'x'.repeat(53)), /metadata.name must be at most 52 characters/],
      ['missing jobTemplate', { ...base({ intervalSeconds: 5 }), spec: { intervalSeconds: 5 } }, /spec.jobTemplate: Required value/],
      ['Job template without restartPolicy', base({ intervalSeconds: 5, jobTemplate: { spec: { template: { spec: { containers: [{ name: 'a', image: 'b' }] } } } } }), /restartPolicy: Required value/],
    ];
    for (const [what, manifest, message] of cases) {
      const res = await tryApply(manifest);
      assert.notEqual(res.code, 0, `${what}: apply must fail`);
      assert.match(res.stderr, message, `${what}: ${res.stderr}`);
    }
  });

  test('kubectl apply accepts the Beyond-CronJob fields where they are valid (server dry run)', async () => {
    const base = (spec: Record<string, unknown>): Record<string, unknown> => ({
      apiVersion: 'secondcron.io/v1',
      kind: 'SecondCronJob',
      metadata: { name: 'beyond', namespace: ns.name },
      spec: { jobTemplate: podTemplate(), ...spec },
    });
    const cases: [string, Record<string, unknown>][] = [
      ['schedules with a time zone', base({ schedules: ['0 30 8 * * MON-FRI', '0 0 10 * * SAT,SUN'], timeZone: 'Europe/Berlin' })],
      ['16 schedules', base({ schedules: Array.from({ length: 16 }, (_, i) => `${i} * * * * *`) })],
      ['Enqueue with maxConcurrency', base({ intervalSeconds: 5, concurrencyPolicy: 'Enqueue', maxConcurrency: 3 })],
      ['Enqueue without maxConcurrency', base({ intervalSeconds: 5, concurrencyPolicy: 'Enqueue' })],
      ['Forbid with maxConcurrency', base({ schedule: '* * * * * *', concurrencyPolicy: 'Forbid', maxConcurrency: 2 })],
      ['a window (offsets compared as instants)', base({ intervalSeconds: 5, notBefore: '2027-01-01T01:00:00+01:00', notAfter: '2027-01-01T00:00:01Z' })],
      ['only notAfter', base({ intervalSeconds: 5, notAfter: '2027-01-01T00:00:00Z' })],
    ];
    for (const [what, manifest] of cases) {
      const res = await kubectl(['apply', '--dry-run=server', '-f', '-'], { input: JSON.stringify(manifest) });
      assert.equal(res.code, 0, `${what}: ${res.stderr}`);
    }
  });

  test('what the schema cannot check: Ready=False, a Warning Event, no Jobs, others unaffected', async () => {
    await applyScj(ns.name, 'good-neighbour', { intervalSeconds: 1 });
    await applyScj(ns.name, 'never', { schedule: '0 0 0 30 2 *' });
    await applyScj(ns.name, 'bad-zone', { schedule: '* * * * * *', timeZone: 'Mars/Olympus' });
    await applyScj(ns.name, 'bad-syntax', { schedule: '61 * * * * *' });
    await applyScj(ns.name, 'bad-template', {
      intervalSeconds: 1,
      jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'b', ports: [{ containerPort: 99999 }] }] } } } },
    });
    const expectations: [string, string, RegExp][] = [
      ['never', 'InvalidSchedule', /never fires/],
      ['bad-zone', 'UnknownTimeZone', /Mars\/Olympus/],
      ['bad-syntax', 'InvalidSchedule', /61/],
      ['bad-template', 'InvalidJobTemplate', /containerPort/],
    ];
    for (const [name, reason, message] of expectations) {
      const cond = await eventually(`${name}: Ready=False ${reason}`, async () => {
        const obj = await getScj<{ status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } }>(ns.name, name);
        const c = obj.status?.conditions?.find((x) => x.type === 'Ready');
        return c?.status === 'False' && c.reason === reason ? c : undefined;
      }, { timeoutMs: 15_000 });
      assert.match(cond.message, message);
      const warned = await eventually(`${name}: Warning Event`, async () => {
        const evs = await events(ns.name, name);
        return evs.find((e) => e.type === 'Warning' && e.reason === reason);
      }, { timeoutMs: 10_000 });
      assert.match(warned.message, message);
    }
    await sleep(2_000);
    for (const name of ['never', 'bad-zone', 'bad-syntax']) assert.equal((await listJobs(ns.name, name)).length, 0, `${name} creates no Jobs`);
    assert.ok((await listJobs(ns.name, 'good-neighbour')).length >= 2, 'a valid neighbour keeps running');
    // Fixing the spec clears the condition.
    await patchScj(ns.name, 'never', { spec: { schedule: '* * * * * *' } });
    await eventually('fixed schedule becomes Ready', async () => {
      const obj = await getScj<{ status?: { conditions?: { type: string; status: string }[] } }>(ns.name, 'never');
      return obj.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? true : undefined;
    }, { timeoutMs: 10_000 });
    assert.equal(op.running, true, 'the operator did not crash');
    // Gone while this operator still runs (it removes the finalizers): a namespace deleted after the
    // operator stopped keeps them, and `kubectl secondcron next -A` in a later test would list them.
    await kubectlOk(['delete', 'secondcronjob', 'good-neighbour', 'never', 'bad-zone', 'bad-syntax', 'bad-template', '-n', ns.name]);
  });
});
