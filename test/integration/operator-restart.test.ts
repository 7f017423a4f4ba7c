// Operator stopped for 10 s and started again: the missed-slot rule (only the most recent missed
// slot runs, and only within startingDeadlineSeconds), no duplicates, finalizers honoured late.
// The first test audits every slot from the last Job before the stop to well after the restart
// (helpers/slot-audit.ts): the counts of the stopped and the restarted process together must equal
// the slots without a Job, schedule by schedule, and a restarted operator that creates no Job fails it.
// The every-second schedule keeps no history (limit 0): its slots, and whether one ran twice, are read
// from the API server's audit log (helpers/audit-creates.ts), where a re-run shows as a second 201.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { type TestNamespace, kubectl, kubectlOk, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startOperator } from './helpers/operator.js';
import { auditedJobWrites, createProblems, describeJobWrites, slotOfJobName } from './helpers/audit-creates.js';
import { ReplicaCounters, countedInNamespace, minus } from './helpers/replica-counters.js';
import { applyScj, events, listJobs, sleepUntil } from './helpers/scj.js';
import { auditSlots, describeAudit, nextMidSecond, perScheduleProblems, slotProblems } from './helpers/slot-audit.js';
import { installCrd } from '../cluster/crd.js';

let ns: TestNamespace;
let op: OperatorProcess;
let counters: ReplicaCounters;

before(async () => {
  await installCrd(kubectl);
  ns = await uniqueNamespace('restart');
  op = await startOperator({ namespaces: [ns.name], identity: 'op-restart', args: ['--leader-election-namespace', ns.name] });
  counters = new ReplicaCounters(() => [op]).start();
});

/** Slots of one schedule whose Job the API server stored (a 201 in its audit log), in order. */
async function storedSlots(name: string, settleMs = 0): Promise<number[]> {
  const writes = await auditedJobWrites({ namespace: ns.name, owners: [name] }, { settleMs });
  return writes.filter((w) => w.verb === 'create' && w.code === 201).map((w) => slotOfJobName(w.name)).sort((a, b) => a - b);
}

after(async () => {
  await counters?.stop();
  await op?.dispose();
  await ns?.cleanup();
});

test('stopped for 10 s: one catch-up Job per schedule (none past the deadline), no duplicates', async (t) => {
  const t0 = Math.ceil(Date.now() / 1000) * 1000;
  // A once-a-minute slot that falls due 6 s from now, inside the outage.
  const outageSlot = t0 + 6_000;
  const second = new Date(outageSlot).getUTCSeconds();
  await applyScj(ns.name, 'minutely', { schedule: `${second} * * * * *` });
  await applyScj(ns.name, 'minutely-deadline', { schedule: `${second} * * * * *`, startingDeadlineSeconds: 2 });
  await applyScj(ns.name, 'every-second', { intervalSeconds: 1, startingDeadlineSeconds: 30, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 });
  await eventually('the every-second schedule runs', async () => ((await storedSlots('every-second')).length >= 1 ? true : undefined), { timeoutMs: 10_000 });

  const countsBefore = await counters.total();
  await op.stop(); // SIGTERM: stops scheduling, releases the Lease, exits
  const stoppedAt = Date.now();
  assert.ok(stoppedAt < outageSlot - 1_000, `the operator must be down before the outage slot (stopped ${outageSlot - stoppedAt} ms before it)`);
  const lastBefore = Math.max(...(await storedSlots('every-second', 1_500)));

  await sleepUntil(stoppedAt + 10_000);
  assert.equal((await listJobs(ns.name, 'minutely')).length, 0, 'nothing ran while the operator was down');
  await op.start();
  await op.ready();
  const upAt = Date.now();
  await eventually('catch-up Job for the minutely schedule', async () => ((await listJobs(ns.name, 'minutely')).length === 1 ? true : undefined), { timeoutMs: 10_000 });
  await new Promise((r) => setTimeout(r, 3_000));

  const minutely = await listJobs(ns.name, 'minutely');
  assert.deepEqual(minutely.map((j) => j.slotMs), [outageSlot], 'the missed slot ran exactly once, late');
  assert.equal((await listJobs(ns.name, 'minutely-deadline')).length, 0, 'past startingDeadlineSeconds: not run');
  const missedEvent = (await events(ns.name, 'minutely-deadline')).find((e) => e.reason === 'MissedSchedule');
  assert.ok(missedEvent, 'the skipped slot is reported as a MissedSchedule Event');
  assert.ok(((await op.metric('secondcron_triggers_missed_total', 'reason="deadline"')) ?? 0) >= 1, 'and counted in missed{reason=deadline}');

  const writes = await auditedJobWrites({ namespace: ns.name });
  t.diagnostic(describeJobWrites(writes));
  assert.deepEqual(createProblems(writes), [], 'API server audit: no Job name created twice (every-second keeps no history), no 409');
  const everySecond = (await storedSlots('every-second')).map((slotMs) => ({ slotMs }));
  // The new leader logs the slot it caught up; every slot between the last one before the outage
  // and that one was skipped (counted), and regular slots follow it one second apart.
  const catchUp = op
    .logs()
    .split('\n')
    .filter((l) => l.includes('catching up missed slot') && l.includes('/every-second'))
    .map((l) => JSON.parse(l) as { time: string; slot: string })
    .filter((entry) => Date.parse(entry.time) > stoppedAt) // the restarted process, not the first one
    .map((entry) => Date.parse(entry.slot));
  assert.equal(catchUp.length, 1, 'one catch-up for the every-second schedule');
  const caughtUp = catchUp[0] as number;
  assert.ok(caughtUp >= stoppedAt + 9_000 && caughtUp <= upAt + 5_000, 'the caught-up slot is the latest of the gap');
  const inGap = everySecond.filter((j) => j.slotMs > lastBefore && j.slotMs <= caughtUp);
  assert.deepEqual(inGap.map((j) => j.slotMs), [caughtUp], 'only the latest missed slot of the gap runs');
  const after = everySecond.filter((j) => j.slotMs > caughtUp).map((j) => j.slotMs);
  assert.ok(after.length >= 2, 'regular slots resume');
  assert.ok(after.every((s, i) => i === 0 || s - (after[i - 1] as number) === 1_000), 'one second apart, none lost');

  // The whole window, from the last Job before the stop to 12 s after the restart.
  await sleepUntil(upAt + 12_000);
  await sleepUntil(nextMidSecond(Date.now()));
  const toMs = Math.floor(Date.now() / 1000) * 1000;
  const counted = minus(await counters.total(), countsBefore);
  await sleep(2_500); // the Jobs of the window's last slots have been created
  const slotsOf = async (name: string): Promise<{ name: string; jobSlots: number[] }> => ({ name, jobSlots: (await listJobs(ns.name, name)).map((j) => j.slotMs) });
  const seconds = auditSlots([{ name: 'every-second', jobSlots: await storedSlots('every-second', 1_500) }], { fromMs: lastBefore, toMs });
  const minutes = auditSlots([await slotsOf('minutely'), await slotsOf('minutely-deadline')], { fromMs: lastBefore, toMs, periodMs: 60_000, phaseMs: second * 1000 });
  t.diagnostic(`every-second: ${describeAudit(seconds)}; minutely: ${minutes.withoutJob} of ${minutes.slots} slots without a Job; counted missed ${counted.missed}, already_exists ${counted.alreadyExists}`);
  assert.deepEqual(minutes.withoutJobBySchedule, { minutely: 0, 'minutely-deadline': 1 });
  // The outage (from the last Job before the stop to Ready again) plus 5 s for the election and the catch-up.
  const maxGapMs = Math.ceil((upAt - lastBefore + 5_000) / 1_000) * 1_000;
  assert.deepEqual(slotProblems(seconds, { maxGapMs, counted: counted.missed - minutes.withoutJob, alreadyExists: counted.alreadyExists }), [],
    'every slot of the every-second schedule has a Job or is counted once (the minutely-deadline slot counted once too)');
  const perSchedule = countedInNamespace(counted, ns.name);
  assert.deepEqual([...new Set([...perScheduleProblems(seconds, perSchedule), ...perScheduleProblems(minutes, perSchedule)])], [], 'misses counted per schedule == slots without a Job');
  assert.deepEqual(createProblems(await auditedJobWrites({ namespace: ns.name })), [], 'API server audit, the whole window: no Job name created twice, no 409');
});

test('a deletion that happened while the operator was down is finished when it returns', async () => {
  await applyScj(ns.name, 'orphan', { intervalSeconds: 1 });
  await eventually('orphan has Jobs', async () => ((await listJobs(ns.name, 'orphan')).length >= 1 ? true : undefined), { timeoutMs: 10_000 });
  await op.kill();
  await kubectlOk(['delete', 'secondcronjob', 'orphan', '-n', ns.name, '--wait=false']);
  await new Promise((r) => setTimeout(r, 1_000));
  const held = await kubectl(['get', 'secondcronjob', 'orphan', '-n', ns.name, '-o', 'jsonpath={.metadata.deletionTimestamp}']);
  assert.equal(held.code, 0, 'the finalizer holds the resource while no operator runs');
  assert.notEqual(held.stdout.trim(), '');
  await op.start();
  await op.ready();
  await eventually('resource gone', async () => ((await kubectl(['get', 'secondcronjob', 'orphan', '-n', ns.name])).code !== 0 ? true : undefined), { timeoutMs: 30_000 });
  assert.equal((await listJobs(ns.name, 'orphan')).filter((j) => !j.deleting).length, 0, 'its Jobs were deleted first');
  assert.deepEqual(createProblems(await auditedJobWrites({ namespace: ns.name, owners: ['orphan'] })), [], 'API server audit: no Job name created twice across the SIGKILL and restart, no 409');
});
