// DESIGN §2 "Beyond CronJob" on the real control plane (kwok runs the pods): Jobs from two cron
// expressions, Enqueue with Jobs that run longer than the period, and a window opening and closing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { RUN_SECONDS_ANNOTATION } from '../cluster/cluster.js';
import { installCrd } from '../cluster/crd.js';
import { type TestNamespace, kubectl, kubectlOk, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startOperator } from './helpers/operator.js';
import { applyScj, getScj, listJobs, podTemplate, sleepUntil } from './helpers/scj.js';

interface Status {
  status?: { queuedScheduleTime?: string; conditions?: { type: string; status: string; reason: string }[] };
}

describe('beyond CronJob', () => {
  let ns: TestNamespace;
  let op: OperatorProcess;

  before(async () => {
    await installCrd(kubectl);
    ns = await uniqueNamespace('beyond');
    op = await startOperator({ namespaces: [ns.name], identity: 'op-beyond', args: ['--leader-election-namespace', ns.name] });
  });

  const missedTotal = async (): Promise<number> => {
    let n = 0;
    for (const reason of ['late', 'deadline', 'forbid', 'error']) n += (await op.metric('secondcron_triggers_missed_total', `reason="${reason}"`)) ?? 0;
    return n;
  };

  after(async () => {
    await op?.dispose();
    await ns?.cleanup();
  });

  test('schedules: Jobs at exactly the union of two expressions, one per instant', async () => {
    const { createdMs } = await applyScj(ns.name, 'union', { schedules: ['*/2 * * * * *', '*/3 * * * * *'] });
    await sleepUntil(createdMs + 9_500);
    const end = createdMs + 9_000;
    const slots = (await listJobs(ns.name, 'union')).map((j) => j.slotMs / 1000).filter((s) => s * 1000 <= end);
    const want: number[] = [];
    for (let s = createdMs / 1000 + 1; s * 1000 <= end; s++) if (s % 2 === 0 || s % 3 === 0) want.push(s);
    assert.deepEqual(slots, want);
    await kubectlOk(['delete', 'secondcronjob', 'union', '-n', ns.name]);
  });

  test('Enqueue: a Job longer than the period; the next starts as soon as it finished, never beside it, with its own slot', async () => {
    const { createdMs } = await applyScj(ns.name, 'queue', {
      intervalSeconds: 2,
      concurrencyPolicy: 'Enqueue',
      jobTemplate: podTemplate({ [RUN_SECONDS_ANNOTATION]: '4' }),
    });
    let queuedSeen: string | undefined;
    await eventually(
      'three Jobs, each after the previous finished',
      async () => {
        queuedSeen ??= (await getScj<Status>(ns.name, 'queue')).status?.queuedScheduleTime;
        const jobs = await listJobs(ns.name, 'queue');
        return jobs.length >= 3 ? true : undefined;
      },
      { timeoutMs: 40_000, intervalMs: 250 },
    );
    const jobs = await listJobs(ns.name, 'queue');
    for (let i = 1; i < jobs.length; i++) {
      const prev = jobs[i - 1];
      const next = jobs[i];
      assert.ok(prev && next);
      if (prev.completedMs === undefined) assert.fail(`${next.name} created while ${prev.name} had not completed`);
      // Timestamps are whole seconds: created no earlier than the completion's second, within 2 s of it.
      assert.ok(next.createdMs >= prev.completedMs, `${next.name} created at ${next.createdMs} before ${prev.name} completed at ${prev.completedMs}`);
      assert.ok(next.createdMs - prev.completedMs <= 2_000, `${next.name} waited ${next.createdMs - prev.completedMs} ms after ${prev.name} completed`);
      // Its own slot's name, never a later one (creationTimestamp is whole seconds: a Job created in its
      // slot's second shows the same second).
      assert.ok(next.slotMs <= next.createdMs, `${next.name} keeps its slot (${next.slotMs}), not later than its creation (${next.createdMs})`);
      assert.equal(next.name, `queue-${next.slotMs / 1000}`);
      assert.equal((next.slotMs - createdMs) % 2_000, 0, `${next.name} is a slot of the schedule`);
    }
    assert.ok(queuedSeen, 'status.queuedScheduleTime was set while a slot waited');
    await kubectlOk(['delete', 'secondcronjob', 'queue', '-n', ns.name]);
  });

  test('window: no Job before notBefore or after notAfter; Ready NotYetActive, then WindowEnded', async () => {
    const missedBefore = await missedTotal();
    const from = Math.ceil(Date.now() / 1000) * 1000 + 4_000;
    const to = from + 3_000;
    const { createdMs } = await applyScj(ns.name, 'window', { schedule: '* * * * * *', notBefore: new Date(from).toISOString(), notAfter: new Date(to).toISOString() });
    await eventually('Ready NotYetActive', async () => ((await getScj<Status>(ns.name, 'window')).status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'NotYetActive' ? true : undefined), { timeoutMs: 3_000, intervalMs: 100 });
    assert.deepEqual(await listJobs(ns.name, 'window'), []);
    await sleepUntil(to + 3_000);
    const slots = (await listJobs(ns.name, 'window')).map((j) => j.slotMs);
    assert.deepEqual(slots, [from, from + 1_000, from + 2_000, from + 3_000], `created ${createdMs}`);
    await eventually('Ready WindowEnded', async () => ((await getScj<Status>(ns.name, 'window')).status?.conditions?.find((c) => c.type === 'Ready')?.reason === 'WindowEnded' ? true : undefined), { timeoutMs: 5_000, intervalMs: 200 });
    const windowMissed = (await op.metric('secondcron_schedule_missed_slots_total', `namespace="${ns.name}",name="window"`)) ?? 0;
    assert.equal(windowMissed, 0, `slots outside the window are not counted (all schedules: ${missedBefore} → ${await missedTotal()})`);
    await kubectlOk(['delete', 'secondcronjob', 'window', '-n', ns.name]);
  });
});
