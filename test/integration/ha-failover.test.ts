// Failover with three real replicas and a 1 s schedule, observed by an independent Job watcher:
// a graceful handover (SIGTERM) and a crash (SIGKILL). Short election timings: 4 s / 3 s / 0.5 s.
// Each test audits every slot of its whole window, up to a few seconds after the takeover
// (helpers/slot-audit.ts): a new leader that never creates another Job fails it, and the missed
// slots counted by every replica (the stopped or killed leader's last scrape included, see
// helpers/replica-counters.ts) must equal the slots without a Job, schedule by schedule. History limit
// 0: a finished Job is deleted at once, so a slot run again after the takeover is created again, and
// the API server's audit log (helpers/audit-creates.ts) shows a second 201 for its name.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { JobWatcher } from '../cluster/job-watcher.js';
import { type TestNamespace, kubectl, kubectlOk, testKubeconfig, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startReplicas } from './helpers/operator.js';
import { auditedJobWrites, createProblems, describeJobWrites } from './helpers/audit-creates.js';
import { type Counts, ReplicaCounters, countedInNamespace, minus } from './helpers/replica-counters.js';
import { applyScj, sleepUntil } from './helpers/scj.js';
import { auditSlots, describeAudit, nextMidSecond, perScheduleProblems, slotProblems } from './helpers/slot-audit.js';
import { installCrd } from '../cluster/crd.js';

const LEASE_MS = 4_000;
const RETRY_MS = 500;

let ns: TestNamespace;
let watcher: JobWatcher;
let ops: OperatorProcess[] = [];
let counters: ReplicaCounters;

before(async () => {
  await installCrd(kubectl);
  ns = await uniqueNamespace('ha-failover');
  watcher = await new JobWatcher({ kubeconfigPath: testKubeconfig(), namespace: ns.name }).start();
  ops = await startReplicas(3, ns.name);
  await applyScj(ns.name, 'tick', { intervalSeconds: 1, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 });
  await eventually('Jobs flowing', async () => (watcher.slotsOf('tick').length >= 3 ? true : undefined), { timeoutMs: 15_000 });
  counters = new ReplicaCounters(() => ops).start();
});

after(async () => {
  await counters?.stop();
  watcher?.stop();
  await Promise.all(ops.map((o) => o.dispose()));
  await ns?.cleanup();
});

async function holder(): Promise<string> {
  return (await kubectlOk(['get', 'lease', 'secondcron-leader', '-n', ns.name, '-o', 'jsonpath={.spec.holderIdentity}'])).trim();
}

/** Polls the Lease until its holder is a live replica other than `old`; returns when that was seen. */
async function newHolderAfter(old: string): Promise<{ identity: string; atMs: number }> {
  return eventually(
    'a new Lease holder',
    async () => {
      const h = await holder();
      return h && h !== old ? { identity: h, atMs: Date.now() } : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );
}

/** Waits for the middle of the next second (every slot up to the whole second before it is decided); the counters then. */
async function mark(): Promise<{ ms: number; counts: Counts }> {
  await sleepUntil(nextMidSecond(Date.now()));
  return { ms: Math.floor(Date.now() / 1000) * 1000, counts: await counters.total() };
}

/**
 * Ends the window a few seconds after the takeover and audits every slot of it: the largest gap
 * (a missing tail included), misses counted == slots without a Job, no create answered AlreadyExists.
 */
async function auditSince(start: { ms: number; counts: Counts }, maxGapMs: number): Promise<{ creates: string[]; problems: string[]; perSchedule: string[]; text: string }> {
  await sleep(4_000);
  const end = await mark();
  await sleep(2_500); // the Jobs of the window's last slots have been created and seen
  const audit = auditSlots([{ name: 'tick', jobSlots: watcher.slotsOf('tick') }], { fromMs: start.ms, toMs: end.ms });
  const counted = minus(end.counts, start.counts);
  const problems = slotProblems(audit, { maxGapMs, counted: counted.missed, alreadyExists: counted.alreadyExists });
  const perSchedule = perScheduleProblems(audit, countedInNamespace(counted, ns.name));
  // Every create of the namespace since the window began, as the API server answered it.
  const writes = await auditedJobWrites({ namespace: ns.name, fromMs: start.ms - 1_000 });
  return { creates: createProblems(writes), problems, perSchedule, text: `${describeAudit(audit)}; counted missed ${counted.missed}, already_exists ${counted.alreadyExists}; ${describeJobWrites(writes)}` };
}

function leader(identity: string): OperatorProcess {
  const op = ops.find((o) => o.identity === identity);
  assert.ok(op, `leader ${identity} is one of ours`);
  return op;
}

test('SIGTERM the leader: the Lease is released, a follower takes over within about one retry period, no slot lost or doubled', async (t) => {
  const start = await mark();
  const old = await holder();
  const killedAt = Date.now();
  await leader(old).stop();
  const next = await newHolderAfter(old);
  const takeoverMs = next.atMs - killedAt;
  // The stopped leader counted nothing in its last 250 ms unscraped (a steady state); the audit
  // runs to a few seconds after the takeover, so a new leader that creates no Job fails it.
  const audit = await auditSince(start, 1_000);

  const around = watcher.seen.filter((j) => j.owner === 'tick' && j.slotMs >= killedAt - 3_000 && j.slotMs <= killedAt + 3_000).sort((a, b) => a.slotMs - b.slotMs);
  const arrivalGaps = around.slice(1).map((j, i) => j.arrivedMs - (around[i] as { arrivedMs: number }).arrivedMs);
  const maxArrivalGap = Math.max(...arrivalGaps);
  const message = `graceful handover: takeover ${takeoverMs} ms; max gap between consecutive Jobs ${maxArrivalGap} ms; latencies ${around.map((j) => j.arrivedMs - j.slotMs).join(',')} ms; ${audit.text}`;
  t.diagnostic(message);
  process.stderr.write(`[ha-failover sigterm] ${message}\n`);
  // Restarted before the asserts: the next test needs three replicas whatever this one finds.
  await leader(old).start(); // back as a follower for the next test
  await leader(old).ready();
  assert.deepEqual(audit.creates, [], 'API server audit: no Job name created twice, no 409 (history limit 0: a re-run slot is created again)');
  assert.deepEqual(watcher.duplicates(), [], 'no slot created twice');
  assert.deepEqual(audit.problems, [], 'no slot lost around the handover, every slot without a Job counted once');
  assert.deepEqual(audit.perSchedule, [], 'misses counted per schedule == slots without a Job');
  assert.ok(takeoverMs <= RETRY_MS * 1.2 * 2 + 1_500, `takeover ${takeoverMs} ms should be about one retry period`);
  assert.ok(maxArrivalGap <= RETRY_MS + 1_000 + 1_000, `gap ${maxArrivalGap} ms (goal: retry period + 1 s)`);
});

test('four graceful handovers under five schedules without history: no slot created twice, misses per schedule', async (t) => {
  // The handover must not lose the latest slots' statuses: with history limit 0 their Jobs are gone
  // when the next leader looks, and a slot it runs again is created again (a second 201 for its name).
  const names = Array.from({ length: 5 }, (_, i) => `handover-${i}`);
  for (const [i, name] of names.entries()) {
    await applyScj(ns.name, name, { intervalSeconds: 1 + (i % 2), successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 });
  }
  await eventually('every schedule creating Jobs', async () => (names.every((n) => watcher.slotsOf(n).length >= 2) ? true : undefined), { timeoutMs: 30_000 });
  const start = await mark();
  const handovers: string[] = [];
  try {
    for (let round = 0; round < 4; round++) {
      const old = await holder();
      await leader(old).stop();
      const next = await newHolderAfter(old);
      handovers.push(`${old}→${next.identity}`);
      await leader(old).start(); // back as a follower
      await leader(old).ready();
      await sleep(2_000);
    }
    await sleep(3_000);
    const end = await mark();
    await sleep(3_000); // the window's last slots: created and seen
    const writes = await auditedJobWrites({ namespace: ns.name, fromMs: start.ms - 1_000 }); // tick's too
    const counted = minus(end.counts, start.counts);
    // The 2 s schedules' slots are on the odd or even seconds (their anchor): one audit each, phase from a Job's slot.
    // tick (the earlier tests' 1 s schedule) runs on: audited too, so the counts' sum compares.
    const audits = [...names, 'tick'].map((n, i) => {
      const slots = watcher.slotsOf(n);
      const periodMs = n === 'tick' ? 1_000 : (1 + (i % 2)) * 1_000;
      return auditSlots([{ name: n, jobSlots: slots }], { fromMs: start.ms, toMs: end.ms, periodMs, phaseMs: (slots[0] ?? 0) % periodMs });
    });
    const withoutJob = audits.reduce((sum, a) => sum + a.withoutJob, 0);
    const slots = audits.reduce((sum, a) => sum + a.slots, 0);
    const creates = createProblems(writes);
    const message = `handovers ${handovers.join(', ')}; ${slots} slots, ${withoutJob} without a Job; counted missed ${counted.missed}, already_exists ${counted.alreadyExists}; ${describeJobWrites(writes)}; ${creates.length} name(s) wrong: ${creates.slice(0, 20).join('; ')}`;
    t.diagnostic(message);
    process.stderr.write(`[ha-failover handovers] ${message}\n`);
    assert.deepEqual(creates, [], 'API server audit: no Job name created twice across graceful handovers (history limit 0), no 409');
    assert.deepEqual(audits.flatMap((a) => slotProblems(a, { maxGapMs: 2 * a.periodMs, counted: a.withoutJob })), [], 'a graceful handover loses at most one slot of a schedule (each counted: below)');
    assert.equal(counted.missed, withoutJob, 'missed slots counted (sum) == slots without a Job');
    assert.deepEqual([...new Set(audits.flatMap((a) => perScheduleProblems(a, countedInNamespace(counted, ns.name))))], [], 'misses counted per schedule == slots without a Job');
  } finally {
    await kubectlOk(['delete', 'secondcronjob', ...names, '-n', ns.name, '--wait=false']);
  }
});

test('SIGKILL the leader: takeover within lease duration + retry period; only the latest missed slot runs', async (t) => {
  const start = await mark();
  const old = await holder();
  const before = watcher.slotsOf('tick');
  const killedAt = Date.now();
  await leader(old).kill();
  const next = await newHolderAfter(old);
  const takeoverMs = next.atMs - killedAt;
  // The killed leader's counters after its last scrape (≤ 250 ms before the kill, a steady state in
  // which it counted nothing) are lost; the slots after the kill are counted by the survivors.
  // Gap: the lease runs out, a jittered retry (≤ 2.2 retry periods) takes over, the latest missed
  // slot runs at once; 1.5 s of margin for a loaded machine.
  const maxGapMs = Math.ceil((LEASE_MS + RETRY_MS * 2.2 + 1_500 + 1_000) / 1_000) * 1_000;
  const audit = await auditSince(start, maxGapMs);

  const lastBefore = Math.max(...before.filter((s) => s <= killedAt));
  const after = watcher.slotsOf('tick').filter((s) => s > lastBefore);
  const firstAfter = after[0] as number;
  const skipped = (firstAfter - lastBefore) / 1000 - 1;
  const message = `crash: takeover ${takeoverMs} ms after SIGKILL; ${skipped} slot(s) skipped by the missed-slot rule; ${audit.text}`;
  t.diagnostic(message);
  process.stderr.write(`[ha-failover sigkill] ${message}\n`);
  assert.deepEqual(audit.creates, [], 'API server audit: no Job name created twice, no 409');
  assert.deepEqual(watcher.duplicates(), [], 'no slot created twice');
  assert.ok(takeoverMs <= LEASE_MS + RETRY_MS * 2.2 + 1_500, `takeover ${takeoverMs} ms within lease duration + retry period + margin`);
  // The new leader ran one catch-up slot for the gap, then every slot in order, to the window's end.
  assert.ok(after.slice(1).every((s, i) => s - (after[i] as number) === 1_000), 'after the catch-up, no slot lost');
  assert.deepEqual(audit.problems, [], 'every slot of the window has a Job or is counted once as missed; the largest gap is the takeover');
  assert.deepEqual(audit.perSchedule, [], 'misses counted per schedule == slots without a Job');
});
