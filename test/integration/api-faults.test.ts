// Faults injected into one operator's Job writes by a TLS-terminating proxy between it and the real
// kube-apiserver (test/cluster/fault-proxy.ts): creates slower than the period under Forbid, creates
// answered 429 + Retry-After for 15 s at 20 schedules × 1 s, creates answered 429/503 only 1.5–2.5 s
// late (after the next slot is due) for 15 s, deletes slowed under Replace, and one create stored whose
// answer is lost while the operator's Job watch loses that Job's events (the operator must read the Job
// by name: executor lookUp, the one use of `get batch/jobs`). Every create's answer is
// also read from the API server's audit log (helpers/audit-creates.ts): a second 201 for one Job name
// or any 409 fails a test; misses are compared schedule by schedule. Jobs are
// observed by an independent watcher that talks to the apiserver directly; the proxy records when
// each create and delete arrived. Both use one in-process high-resolution clock, so their records
// can be ordered against each other (the operator learns of a Job's end only through the proxy,
// after the watcher here has seen it).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { KubeConfig } from '@kubernetes/client-node';

import { MISSING_JOB_LOOKUP_MS } from '../../src/controller/executor.js';
import { installCrd } from '../cluster/crd.js';
import { FaultProxy } from '../cluster/fault-proxy.js';
import { JobWatcher, type SeenJob } from '../cluster/job-watcher.js';
import { OPERATOR_USER } from '../cluster/operator-rbac.js';
import { type TestNamespace, kubectl, kubectlOk, operatorKubeconfig, testKubeconfig, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startOperator } from './helpers/operator.js';
import {
  auditedJobReads,
  auditedJobWrites,
  createCodesByName,
  createProblems,
  describeJobWrites,
  replaceOrderProblems,
  resentAfterSupersedingRefusal,
  supersededCreateProblems,
} from './helpers/audit-creates.js';
import { type Counts, ReplicaCounters, countedInNamespace, minus } from './helpers/replica-counters.js';
import { podTemplate, scjManifest, sleepUntil } from './helpers/scj.js';
import { auditSlots, describeAudit, nextMidSecond, perScheduleProblems, slotProblems } from './helpers/slot-audit.js';

const clock = (): number => performance.timeOrigin + performance.now();

let ns: TestNamespace;
let proxy: FaultProxy;
let watcher: JobWatcher;
let op: OperatorProcess;
let counters: ReplicaCounters;
let scratch: string;

before(async () => {
  await installCrd(kubectl);
  ns = await uniqueNamespace('api-faults');
  const kc = new KubeConfig();
  // The operator's own identity through the proxy: its paths under faults are judged against the chart's RBAC too.
  kc.loadFromFile(operatorKubeconfig());
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  assert.ok(cluster && user?.token, 'the operator kubeconfig has a server and a bearer token');
  const caPem = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : readFileSync(cluster.caFile ?? '', 'utf8');
  proxy = await FaultProxy.start({ upstream: cluster.server, upstreamCaPem: caPem, now: clock });
  scratch = mkdtempSync(join(tmpdir(), 'secondcron-faults-'));
  const kubeconfig = join(scratch, 'kubeconfig');
  proxy.writeKubeconfig(kubeconfig, user.name, user.token);
  watcher = await new JobWatcher({ kubeconfigPath: testKubeconfig(), namespace: ns.name, now: clock }).start();
  // The only scheduler (no election): every decision is this process's, made through the proxy.
  op = await startOperator({ kubeconfig, namespaces: [ns.name], identity: 'behind-proxy', logLevel: 'info', args: ['--leader-elect=false'] });
  counters = new ReplicaCounters(() => [op]).start();
});

after(async () => {
  await counters?.stop();
  await op?.dispose();
  watcher?.stop();
  await proxy?.stop();
  await ns?.cleanup();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Waits for the middle of the next second: every slot up to the whole second before it is decided. */
async function mark(): Promise<{ ms: number; counts: Counts }> {
  await sleepUntil(nextMidSecond(Date.now()));
  return { ms: Math.floor(Date.now() / 1000) * 1000, counts: await counters.total() };
}

async function apply(items: Record<string, unknown>[]): Promise<void> {
  await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
}

async function remove(names: string[]): Promise<void> {
  await kubectlOk(['delete', 'secondcronjob', ...names, '-n', ns.name, '--wait=false']);
}

function jobsOf(owner: string): SeenJob[] {
  return watcher.seen.filter((j) => j.owner === owner).sort((a, b) => a.arrivedMs - b.arrivedMs);
}

test('Forbid with creates slower than the period: never two Jobs active or being created at once, every skipped slot counted', async (t) => {
  const name = 'forbid';
  proxy.createDelayMs = 2_500;
  try {
    await apply([scjManifest(ns.name, name, { intervalSeconds: 1, concurrencyPolicy: 'Forbid', jobTemplate: podTemplate({ 'secondcron.test/run-seconds': '3' }) })]);
    await eventually('the first create reached the apiserver', async () => (proxy.creates.some((c) => c.owner === name) ? true : undefined), { timeoutMs: 15_000 });
    const start = await mark();
    await sleep(25_000);
    const end = await mark();
    await sleep(4_000); // > the create delay: every create sent for a slot of the window has been answered
    const jobs = jobsOf(name);

    // "Active or being created": from the moment the create reached the proxy (or, for a Job created
    // before, its first watch event) until the watcher saw it finished or being deleted; a create that
    // left no Job ends when it was answered.
    const intervals = proxy.creates
      .filter((c) => c.owner === name)
      .map((c) => {
        const job = jobs.find((j) => j.name === c.name);
        return { name: c.name, from: c.receivedMs, to: job ? (job.inactiveMs ?? Infinity) : (c.answeredMs ?? Infinity) };
      })
      .sort((a, b) => a.from - b.from);
    const overlaps: string[] = [];
    let maxAtOnce = 0;
    for (const [i, a] of intervals.entries()) {
      const during = intervals.filter((b) => b !== a && b.from <= a.from && b.to > a.from);
      maxAtOnce = Math.max(maxAtOnce, during.length + 1);
      if (during.length) overlaps.push(`${a.name} sent while ${during.map((b) => b.name).join(', ')} active or being created (#${i})`);
    }
    const audit = auditSlots([{ name, jobSlots: jobs.map((j) => j.slotMs) }], { fromMs: start.ms, toMs: end.ms });
    const counted = minus(end.counts, start.counts);
    const message = `${intervals.length} creates, at most ${maxAtOnce} Job(s) active or being created at once, ${overlaps.length} create(s) sent while another was; ${describeAudit(audit)}; counted missed ${counted.missed}`;
    const writes = await auditedJobWrites({ namespace: ns.name, owners: [name] });
    t.diagnostic(`${message}; ${describeJobWrites(writes)}`);
    process.stderr.write(`[api-faults forbid] ${message}; ${describeJobWrites(writes)}\n`);
    assert.deepEqual(createProblems(writes), [], 'API server audit: no Job name created twice, no 409');
    assert.ok(intervals.length >= 3, `Jobs kept being created (${intervals.length})`);
    assert.deepEqual(overlaps.slice(0, 10), [], 'Forbid: never two Jobs of the schedule active or being created at once');
    // A create takes 2.5 s, the Job runs 3 s, its end is seen ~1 s later, the next slot within 1 s:
    // a new Job about every 8 s; 7 s of margin for a loaded machine.
    assert.deepEqual(slotProblems(audit, { maxGapMs: 15_000, counted: counted.missed }), []);
    assert.deepEqual(perScheduleProblems(audit, countedInNamespace(counted, ns.name)), [], 'misses counted per schedule == slots without a Job');
  } finally {
    proxy.clearFaults();
    await remove([name]);
  }
});

test('creates answered 429 for 15 s at 20 schedules × 1 s: at most one late Job per schedule for that window, every other slot counted', async (t) => {
  const names = Array.from({ length: 20 }, (_, i) => `thr-${i}`);
  try {
    await apply(names.map((n) => scjManifest(ns.name, n, { intervalSeconds: 1, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 })));
    await eventually('every schedule creating Jobs', async () => (names.every((n) => watcher.seen.some((j) => j.owner === n)) ? true : undefined), { timeoutMs: 30_000 });
    await sleep(3_000);
    const start = await mark();
    await sleep(2_000);
    // From the middle of a second: slots (throttleFrom, throttleFrom + 15 s] meet a throttled API.
    await sleepUntil(nextMidSecond(Date.now()));
    const throttleFrom = Math.floor(Date.now() / 1000) * 1000;
    proxy.retryAfterSeconds = 1;
    proxy.throttleCreatesUntilMs = clock() + 15_000;
    await sleep(15_000 + 15_000);
    const end = await mark();
    await sleep(3_000);

    const throttleTo = throttleFrom + 15_000;
    const late = names.map((n) => ({ n, slots: watcher.seen.filter((j) => j.owner === n && j.slotMs > throttleFrom && j.slotMs <= throttleTo).map((j) => j.slotMs) }));
    const backfill = late.filter((l) => l.slots.length > 1);
    const audit = auditSlots(names.map((n) => ({ name: n, jobSlots: watcher.seen.filter((j) => j.owner === n).map((j) => j.slotMs) })), { fromMs: start.ms, toMs: end.ms });
    const counted = minus(end.counts, start.counts);
    const throttled = proxy.creates.filter((c) => c.throttled).length;
    const writes = await auditedJobWrites({ namespace: ns.name, owners: names });
    const message = `${throttled} creates answered 429; Jobs for the throttled window's slots per schedule: ${late.map((l) => l.slots.length).join(',')}; ${describeAudit(audit)}; counted missed ${counted.missed}, already_exists ${counted.alreadyExists}; ${describeJobWrites(writes)}`;
    t.diagnostic(message);
    process.stderr.write(`[api-faults throttle] ${message}\n`);
    assert.deepEqual(createProblems(writes), [], 'API server audit: no Job name created twice, no 409');
    assert.ok(throttled >= names.length * 10, `the throttle really answered the creates (${throttled})`);
    assert.deepEqual(backfill.map((l) => `${l.n}: ${l.slots.length} Jobs for slots inside the window`), [], 'no backfill: at most one late Job per schedule');
    // The throttle stored nothing, so no create can meet AlreadyExists; the gap is the 15 s window
    // (16 and 17 s measured: the first slot after it can still meet a Retry-After); 15 s of Jobs
    // follow the window, so an operator that stops creating after the throttle still fails.
    assert.deepEqual(slotProblems(audit, { maxGapMs: 19_000, counted: counted.missed, alreadyExists: counted.alreadyExists }), []);
    assert.deepEqual(perScheduleProblems(audit, countedInNamespace(counted, ns.name)), [], 'misses counted per schedule == slots without a Job');
  } finally {
    proxy.clearFaults();
    await remove(names);
  }
});

test('creates answered 429/503 only 1.5–2.5 s late for 15 s (Retry-After 1 s) at 10 schedules × 1 s: no slot created twice, no superseded create sent again, every other slot counted per schedule', async (t) => {
  const names = Array.from({ length: 10 }, (_, i) => `late-${i}`);
  try {
    await apply(names.map((n) => scjManifest(ns.name, n, { intervalSeconds: 1, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 })));
    await eventually('every schedule creating Jobs', async () => (names.every((n) => watcher.seen.some((j) => j.owner === n)) ? true : undefined), { timeoutMs: 30_000 });
    await sleep(3_000);
    const start = await mark();
    const firstRecord = proxy.creates.length;
    await sleep(2_000);
    // From the middle of a second: for 15 s every create is held 1.5–2.5 s, past the next slot, then
    // refused (429 and 503 in turn, nothing stored), as API Priority and Fairness or an overloaded
    // server answer late.
    await sleepUntil(nextMidSecond(Date.now()));
    proxy.retryAfterSeconds = 1;
    proxy.lateAnswer = { minMs: 1_500, maxMs: 2_500, statuses: [429, 503] };
    proxy.lateAnswerCreatesUntilMs = clock() + 15_000;
    await sleep(15_000 + 15_000);
    const end = await mark();
    await sleep(3_000);

    const sent = proxy.creates.slice(firstRecord).filter((c) => names.includes(c.owner));
    const refused = sent.filter((c) => c.throttled);
    const writes = await auditedJobWrites({ namespace: ns.name, owners: names });
    const audit = auditSlots(names.map((n) => ({ name: n, jobSlots: watcher.seen.filter((j) => j.owner === n).map((j) => j.slotMs) })), { fromMs: start.ms, toMs: end.ms });
    const counted = minus(end.counts, start.counts);
    // On the wire (the proxy saw every create, refused or forwarded) and as stored (the audit's order).
    const resent = supersededCreateProblems(sent.map((c) => ({ name: c.name, receivedMs: c.receivedMs, status: c.status })));
    const staleStored = supersededCreateProblems(writes.filter((w) => w.verb === 'create'));
    // A slot refused after the next one fell due is superseded: never sent again (issue 32: it was).
    const resentSuperseded = resentAfterSupersedingRefusal(sent, 1_000);
    const message = `${refused.length} creates answered late (${refused.filter((c) => c.status === 429).length}×429, ${refused.filter((c) => c.status === 503).length}×503), ${sent.length - refused.length} forwarded; ${resent.length} create(s) for a slot sent after a newer slot's (${resent.slice(0, 5).join('; ')}); ${resentSuperseded.length} slot(s) refused after the next was due and sent again (${resentSuperseded.slice(0, 5).join('; ')}); ${staleStored.length} stored after a newer slot's; ${describeAudit(audit)}; counted missed ${counted.missed}, already_exists ${counted.alreadyExists}; ${describeJobWrites(writes)}`;
    t.diagnostic(message);
    process.stderr.write(`[api-faults late] ${message}\n`);
    assert.ok(refused.length >= names.length * 5, `the late answers really happened (${refused.length})`);
    assert.deepEqual(createProblems(writes), [], 'API server audit: no Job name created twice, no 409');
    assert.deepEqual(staleStored.slice(0, 20), [], 'audit order: no create for a slot after a newer slot\'s create of the same schedule');
    assert.deepEqual(resentSuperseded.slice(0, 20), [], 'I4: a create refused after a newer slot was due is superseded, never sent again');
    assert.deepEqual(resent.slice(0, 20), [], 'I4: no create for a slot after a newer slot\'s create was sent');
    // The 15 s window plus the last late answer (2.5 s) and its Retry-After (1 s); 2.5 s of margin.
    assert.deepEqual(slotProblems(audit, { maxGapMs: 21_000, counted: counted.missed, alreadyExists: counted.alreadyExists }), []);
    assert.deepEqual(perScheduleProblems(audit, countedInNamespace(counted, ns.name)), [], 'misses counted per schedule == slots without a Job');
  } finally {
    proxy.clearFaults();
    await remove(names);
  }
});

test('Replace: the old Job\'s deletion is accepted before the new Job exists', async (t) => {
  const name = 'replace';
  proxy.deleteDelayMs = 1_500; // a create sent before the delete's answer would show on the watch
  try {
    await apply([scjManifest(ns.name, name, { schedule: '*/4 * * * * *', concurrencyPolicy: 'Replace', successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1, jobTemplate: podTemplate({ 'secondcron.test/run-seconds': '60' }) })]);
    await eventually('a first Job', async () => (jobsOf(name).length >= 1 ? true : undefined), { timeoutMs: 20_000 });
    const start = await mark();
    await eventually('four Jobs', async () => (jobsOf(name).length >= 4 ? true : undefined), { timeoutMs: 40_000 });
    const end = await mark();
    await sleep(4_000); // the window's last slot: its delete (1.5 s late) and create are done and seen
    const jobs = jobsOf(name);
    const early: string[] = [];
    for (const job of jobs) {
      const stillActive = jobs.filter((k) => k.arrivedMs < job.arrivedMs && (k.inactiveMs === undefined || k.inactiveMs > job.arrivedMs));
      if (stillActive.length) early.push(`${job.name} appeared while ${stillActive.map((k) => k.name).join(', ')} was not yet being deleted`);
    }
    const deletes = proxy.deletes.filter((d) => jobs.some((j) => j.name === d.name));
    const message = `${jobs.length} Jobs, ${deletes.length} deletes of them sent; order: ${jobs.map((j) => `${j.name.slice(-10)} +${Math.round(j.arrivedMs - (jobs[0]?.arrivedMs ?? 0))}ms deleting ${j.deletingMs === undefined ? '-' : `+${Math.round(j.deletingMs - (jobs[0]?.arrivedMs ?? 0))}ms`}`).join('; ')}`;
    // Every 4 s slot of the window gets a Job (Replace never skips); the counts say none was missed.
    const audit = auditSlots([{ name, jobSlots: jobs.map((j) => j.slotMs) }], { fromMs: start.ms, toMs: end.ms, periodMs: 4_000 });
    const counted = minus(end.counts, start.counts);
    const writes = await auditedJobWrites({ namespace: ns.name, owners: [name] });
    t.diagnostic(`${message}; ${describeAudit(audit)}; counted missed ${counted.missed}; ${describeJobWrites(writes)}`);
    process.stderr.write(`[api-faults replace] ${message}; ${describeAudit(audit)}; counted missed ${counted.missed}; ${describeJobWrites(writes)}\n`);
    assert.deepEqual(createProblems(writes), [], 'API server audit: no Job name created twice, no 409');
    assert.deepEqual(replaceOrderProblems(writes, name), [], 'API server audit: each create after the accepted delete of the Job before it');
    assert.ok(jobs.slice(0, -1).every((j) => j.deletingMs !== undefined), 'every Job but the newest was replaced (deleted)');
    assert.deepEqual(early, [], 'each old Job is being deleted before the new one exists');
    assert.deepEqual(slotProblems(audit, { maxGapMs: 4_000, counted: counted.missed, alreadyExists: counted.alreadyExists }), []);
    assert.deepEqual(perScheduleProblems(audit, countedInNamespace(counted, ns.name)), [], 'misses counted per schedule == slots without a Job');
  } finally {
    proxy.clearFaults();
    await remove([name]);
  }
});

test('a create stored whose answer is lost, its Job missing from the watch: the operator reads it by name (GET), adopts it, never creates the slot twice, and Forbid goes on', async (t) => {
  const name = 'lookup';
  try {
    // Forbid: the Job the operator cannot see blocks the next slots until a read shows it finished;
    // an operator that never read it would skip every slot after it.
    await apply([scjManifest(ns.name, name, { intervalSeconds: 2, concurrencyPolicy: 'Forbid' })]);
    await eventually('a first Job', async () => (jobsOf(name).length >= 1 ? true : undefined), { timeoutMs: 20_000 });
    const phaseMs = (jobsOf(name)[0]?.slotMs ?? 0) % 2_000; // slots are 2 s apart from the resource's creation
    const start = await mark();
    // The first create of the window: stored, the answer lost (the operator's connection reset), and
    // every event of that Job dropped from the operator's Job watch (and its Job lists).
    proxy.loseCreateAnswer = { match: (c) => c.owner === name && c.slotMs > start.ms, hide: true };
    const lost = await eventually('the create whose answer is lost', async () => proxy.creates.find((c) => c.answerLost && c.owner === name), { timeoutMs: 15_000 });
    await sleepUntil(lost.slotMs + 24_000);
    const end = await mark();
    await sleep(3_000); // the window's last slot: its Job seen by the watcher here
    const hiddenEvents = proxy.hidden.filter((h) => h.name === lost.name);
    // The watch catches up: the Job hidden no more, and changed, so an event of it reaches the operator.
    proxy.hiddenJobNames.delete(lost.name);
    await kubectlOk(['annotate', 'job', lost.name, '-n', ns.name, 'secondcron.test/seen=again']);
    const shownMs = Date.now();
    await sleep(MISSING_JOB_LOOKUP_MS + 2_000); // a lookup still due would have been sent by now

    const writes = await auditedJobWrites({ namespace: ns.name, owners: [name] });
    const reads = (await auditedJobReads({ namespace: ns.name, name: lost.name, user: OPERATOR_USER }, { settleMs: 0 })).sort((a, b) => a.receivedMs - b.receivedMs);
    const proxied = proxy.reads.filter((r) => r.name === lost.name);
    const lostCodes = createCodesByName(writes).get(lost.name) ?? [];
    const conflict = writes.find((w) => w.verb === 'create' && w.name === lost.name && w.code === 409);
    const gaps = reads.slice(1).map((r, i) => Math.round(r.receivedMs - (reads[i]?.receivedMs ?? 0)));
    const first = reads[0];
    const last = reads.at(-1);
    // A relist would show the Job's absence and look it up at once (a gap under the period): only
    // possible if a list of Jobs through the proxy had to leave it out.
    const relisted = hiddenEvents.some((h) => h.type === 'LIST');
    // One read at once after the AlreadyExists, then one each MISSING_JOB_LOOKUP_MS (+ a reconcile)
    // while the Job stays expected and unseen, until the watch shows it.
    const span = first ? shownMs - first.receivedMs : 0;
    const expected = { min: Math.ceil(span / (MISSING_JOB_LOOKUP_MS + 2_500)), max: 2 + Math.floor(span / MISSING_JOB_LOOKUP_MS) };
    const audit = auditSlots([{ name, jobSlots: jobsOf(name).map((j) => j.slotMs) }], { fromMs: start.ms, toMs: end.ms, periodMs: 2_000, phaseMs });
    const counted = minus(end.counts, start.counts);
    const message =
      `lost answer of ${lost.name} (upstream ${lost.status}); events hidden from the operator: ${hiddenEvents.map((h) => h.type).join(',') || 'none'}; ` +
      `creates of it ${lostCodes.join(',')}; operator GETs of it: ${reads.length} in the audit (${reads.map((r) => r.code).join(',')}), ${proxied.length} through the proxy, ` +
      `first ${first && conflict ? Math.round(first.receivedMs - conflict.answeredMs) : '?'} ms after the 409, gaps ${gaps.join(',')} ms, expected ${expected.min}..${expected.max} over ${span} ms, ` +
      `last ${last ? Math.round(last.receivedMs - shownMs) : '?'} ms after the watch was given the Job; ${describeAudit(audit)}; counted missed ${counted.missed}; ${describeJobWrites(writes)}`;
    t.diagnostic(message);
    process.stderr.write(`[api-faults lookup] ${message}\n`);

    assert.deepEqual([lost.status, lost.forwarded, lost.answerLost], [201, true, true], 'the create was stored and its answer lost');
    assert.ok(hiddenEvents.some((h) => h.type === 'ADDED'), 'the operator\'s Job watch carried the Job\'s ADDED event, and lost it');
    assert.ok(jobsOf(name).some((j) => j.name === lost.name), 'the Job exists (the watcher here sees it)');
    // API server audit: the slot created once; its create retried after the unknown outcome met AlreadyExists.
    assert.deepEqual(createProblems(writes, { allow409: (n) => n === lost.name }), [], 'no Job name created twice, no other 409');
    assert.deepEqual(lostCodes, [201, 409], 'the lost create stored the Job once; its retry met AlreadyExists');
    // API server audit: the operator's identity read the Job by name (what `get batch/jobs` is granted for).
    assert.ok(first && conflict, 'the operator sent GET of the Job');
    assert.ok(reads.every((r) => r.code === 200), `every read found the Job (${reads.map((r) => r.code).join(',')})`);
    assert.ok(first.receivedMs >= conflict.answeredMs && first.receivedMs - conflict.answeredMs < MISSING_JOB_LOOKUP_MS, 'read at once after the AlreadyExists');
    // At least two: the first right after the create cannot find the Job finished; Forbid needs a later one that does.
    assert.ok(reads.length >= 2, `read again while unseen (${reads.length})`);
    assert.ok(reads.length >= expected.min && reads.length <= expected.max, `${reads.length} reads, expected ${expected.min}..${expected.max}`);
    assert.ok(gaps.every((g) => g <= MISSING_JOB_LOOKUP_MS + 2_500), `no lookup later than due (gaps ${gaps.join(',')} ms)`);
    if (!relisted) assert.ok(gaps.every((g) => g >= MISSING_JOB_LOOKUP_MS - 50), `no lookup before due (gaps ${gaps.join(',')} ms)`);
    assert.ok(last && last.receivedMs <= shownMs + 1_000, 'no lookup once the watch showed the Job');
    // Both ways: the proxy saw exactly the reads the API server audited.
    assert.deepEqual(proxied.map((r) => r.status), reads.map((r) => r.code), 'the proxy\'s record of the reads == the audit\'s');
    // Slots: the one the lookup settled has its Job; a slot Forbid skipped while it looked active is counted.
    assert.deepEqual(slotProblems(audit, { maxGapMs: 10_000, counted: counted.missed }), []);
    assert.deepEqual(perScheduleProblems(audit, countedInNamespace(counted, ns.name)), [], 'misses counted per schedule == slots without a Job');
  } finally {
    proxy.clearFaults();
    await remove([name]);
  }
});
