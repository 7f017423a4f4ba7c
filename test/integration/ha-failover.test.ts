// Failover with three real replicas and a 1 s schedule, observed by an independent Job watcher:
// a graceful handover (SIGTERM) and a crash (SIGKILL). Short election timings: 4 s / 3 s / 0.5 s.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { JobWatcher } from '../cluster/job-watcher.js';
import { type TestNamespace, kubectl, kubectlOk, testKubeconfig, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startReplicas } from './helpers/operator.js';
import { applyScj } from './helpers/scj.js';
import { installCrd } from '../cluster/crd.js';

const LEASE_MS = 4_000;
const RETRY_MS = 500;

let ns: TestNamespace;
let watcher: JobWatcher;
let ops: OperatorProcess[] = [];

before(async () => {
  await installCrd(kubectl);
  ns = await uniqueNamespace('ha-failover');
  watcher = await new JobWatcher({ kubeconfigPath: testKubeconfig(), namespace: ns.name }).start();
  ops = await startReplicas(3, ns.name);
  await applyScj(ns.name, 'tick', { intervalSeconds: 1, successfulJobsHistoryLimit: 5 });
  await eventually('Jobs flowing', async () => (watcher.slotsOf('tick').length >= 3 ? true : undefined), { timeoutMs: 15_000 });
});

after(async () => {
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

function leader(identity: string): OperatorProcess {
  const op = ops.find((o) => o.identity === identity);
  assert.ok(op, `leader ${identity} is one of ours`);
  return op;
}

test('SIGTERM the leader: the Lease is released, a follower takes over within about one retry period, no slot lost or doubled', async (t) => {
  const old = await holder();
  const killedAt = Date.now();
  await leader(old).stop();
  const next = await newHolderAfter(old);
  const takeoverMs = next.atMs - killedAt;
  await new Promise((r) => setTimeout(r, 4_000));

  const around = watcher.seen.filter((j) => j.owner === 'tick' && j.slotMs >= killedAt - 3_000 && j.slotMs <= killedAt + 3_000).sort((a, b) => a.slotMs - b.slotMs);
  const slotGaps = around.slice(1).map((j, i) => j.slotMs - (around[i] as { slotMs: number }).slotMs);
  const arrivalGaps = around.slice(1).map((j, i) => j.arrivedMs - (around[i] as { arrivedMs: number }).arrivedMs);
  const maxArrivalGap = Math.max(...arrivalGaps);
  t.diagnostic(`graceful handover: takeover ${takeoverMs} ms; max gap between consecutive Jobs ${maxArrivalGap} ms; latencies ${around.map((j) => j.arrivedMs - j.slotMs).join(',')} ms`);
  assert.deepEqual(watcher.duplicates(), [], 'no slot created twice');
  assert.ok(slotGaps.every((g) => g === 1_000), `no slot lost around the handover (slot gaps ${slotGaps.join(',')})`);
  assert.ok(takeoverMs <= RETRY_MS * 1.2 * 2 + 1_500, `takeover ${takeoverMs} ms should be about one retry period`);
  assert.ok(maxArrivalGap <= RETRY_MS + 1_000 + 1_000, `gap ${maxArrivalGap} ms (goal: retry period + 1 s)`);
  await leader(old).start(); // back as a follower for the next test
  await leader(old).ready();
});

test('SIGKILL the leader: takeover within lease duration + retry period; only the latest missed slot runs', async (t) => {
  const old = await holder();
  const before = watcher.slotsOf('tick');
  const killedAt = Date.now();
  await leader(old).kill();
  const next = await newHolderAfter(old);
  const takeoverMs = next.atMs - killedAt;
  await new Promise((r) => setTimeout(r, 4_000));

  const lastBefore = Math.max(...before.filter((s) => s <= killedAt));
  const after = watcher.slotsOf('tick').filter((s) => s > lastBefore);
  const firstAfter = after[0] as number;
  const skipped = (firstAfter - lastBefore) / 1000 - 1;
  t.diagnostic(`crash: takeover ${takeoverMs} ms after SIGKILL; ${skipped} slot(s) skipped by the missed-slot rule`);
  assert.deepEqual(watcher.duplicates(), [], 'no slot created twice');
  assert.ok(takeoverMs <= LEASE_MS + RETRY_MS * 2.2 + 1_500, `takeover ${takeoverMs} ms within lease duration + retry period + margin`);
  // The new leader ran one catch-up slot for the gap, then every slot in order.
  assert.ok(after.slice(1).every((s, i) => s - (after[i] as number) === 1_000), 'after the catch-up, no slot lost');
  const newLeader = leader(next.identity);
  const late = await newLeader.metric('secondcron_triggers_missed_total', 'reason="late"');
  assert.ok(skipped === 0 || (late ?? 0) >= skipped, `skipped slots are counted as missed{reason="late"} (${late} >= ${skipped})`);
});
