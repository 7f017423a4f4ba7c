// Lease election against the real API server: one holder among three replicas, a real 409 race,
// and followers that stay Ready.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';


import { systemMonotonicClock, systemWallClock, createSystemTimers } from '../../src/clock/index.js';
import { LeaderElector, LeaseConflictError } from '../../src/election/index.js';
import { KubeLeaseStore } from '../../src/election/kube-lease-store.js';
import { readKubeconfig } from '../../src/kube/connection.js';
import { KubeRest } from '../../src/kube/rest.js';
import type { LeaseRecord, VersionedLease } from '../../src/election/lease-record.js';
import { silentLogger } from '../../src/log.js';
import { type TestNamespace, kubectl, kubectlOk, testKubeconfig, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startReplicas } from './helpers/operator.js';
import { installCrd } from '../cluster/crd.js';


let ns: TestNamespace;
let ops: OperatorProcess[] = [];

before(async () => {
  await installCrd(kubectl);
  ns = await uniqueNamespace('ha-election');
});

after(async () => {
  await Promise.all(ops.map((o) => o.dispose()));
  await ns?.cleanup();
});

const timers = createSystemTimers({ unref: true });

function leaseStore(rest: KubeRest, name: string): KubeLeaseStore {
  return new KubeLeaseStore({ rest, namespace: ns.name, name, log: silentLogger, mono: systemMonotonicClock, timers, random: Math.random });
}

function leaseRest(): KubeRest {
  const connection = readKubeconfig(testKubeconfig());
  assert.ok(connection, 'the test kubeconfig is read without client-node');
  return new KubeRest(connection);
}

async function holder(name: string): Promise<string> {
  return (await kubectlOk(['get', 'lease', name, '-n', ns.name, '-o', 'jsonpath={.spec.holderIdentity}'])).trim();
}

test('three replicas: exactly one holds the Lease, all three are Ready, secondcron_leader sums to 1', async () => {
  ops = await startReplicas(3, ns.name);
  const leader = await eventually('a Lease holder', async () => (await holder('secondcron-leader').catch(() => '')) || undefined);
  assert.ok(['replica-0', 'replica-1', 'replica-2'].includes(leader), `holder ${leader}`);
  await eventually('leader gauge settles', async () => {
    const gauges = await Promise.all(ops.map((o) => o.metric('secondcron_leader')));
    return gauges.reduce<number>((a, b) => a + (b ?? 0), 0) === 1 ? gauges : undefined;
  }, { timeoutMs: 10_000 });
  // Stays that way: renewals keep the same holder, followers never flip.
  await new Promise((r) => setTimeout(r, 3_000));
  assert.equal(await holder('secondcron-leader'), leader);
  const gauges = await Promise.all(ops.map((o) => o.metric('secondcron_leader')));
  assert.deepEqual(gauges.map((g, i) => (g === 1 ? `replica-${i}` : null)).filter(Boolean), [leader]);
  for (const o of ops) {
    const ready = await fetch(`http://127.0.0.1:${o.healthPort}/readyz`);
    const healthy = await fetch(`http://127.0.0.1:${o.healthPort}/healthz`);
    assert.equal(ready.status, 200, `${o.identity} ready`);
    assert.equal(healthy.status, 200, `${o.identity} healthy`);
  }
});

test('a real optimistic-concurrency race: the second write with the same resourceVersion gets 409', async () => {
  const rest = leaseRest();
  const a = leaseStore(rest, 'race');
  const b = leaseStore(rest, 'race');
  const signal = AbortSignal.timeout(10_000);
  const record = (holderIdentity: string) => ({ holderIdentity, leaseDurationSeconds: 4, acquireTimeMs: Date.now(), renewTimeMs: Date.now(), leaseTransitions: 0 });
  await a.create(record('a'), signal);
  await assert.rejects(b.create(record('b'), signal), LeaseConflictError, 'second create: AlreadyExists');
  const seenByA = await a.get(signal);
  const seenByB = await b.get(signal);
  assert.ok(seenByA && seenByB && seenByA.resourceVersion === seenByB.resourceVersion);
  await a.update(record('a'), seenByA.resourceVersion, signal);
  await assert.rejects(b.update(record('b'), seenByB.resourceVersion, signal), LeaseConflictError);
  assert.equal(await holder('race'), 'a');
  const renewed = await a.get(signal);
  assert.ok(renewed && Math.abs((renewed.record.renewTimeMs ?? 0) - Date.now()) < 60_000, 'MicroTime round-trips');
  await assert.rejects(a.get(AbortSignal.abort(new Error('gave up'))), 'an aborted signal stops the call');
});

test('two electors started in the same tick on an absent Lease: exactly one leads', async () => {
  const rest = leaseRest();
  const electors = ['left', 'right'].map(
    (identity) =>
      new LeaderElector({
        identity,
        store: leaseStore(rest, 'duel'),
        monotonic: systemMonotonicClock,
        wall: systemWallClock,
        timers,
        random: Math.random,
        leaseDurationMs: 4_000,
        renewDeadlineMs: 3_000,
        retryPeriodMs: 500,
      }),
  );
  try {
    for (const e of electors) e.start();
    await eventually('one leader', async () => (electors.some((e) => e.isLeader()) ? true : undefined), { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal(electors.filter((e) => e.isLeader()).length, 1);
    const winner = electors.find((e) => e.isLeader());
    assert.equal(await holder('duel'), winner?.identity);
  } finally {
    await Promise.all(electors.map((e) => e.release()));
  }
  assert.equal(await holder('duel'), '', 'release leaves an empty holder');
});

test("the store's watch delivers every version of its Lease as it is written, and no other Lease", async () => {
  const rest = leaseRest();
  const writer = leaseStore(rest, 'watched');
  const other = leaseStore(rest, 'watched-not');
  const signal = AbortSignal.timeout(20_000);
  const record = (): LeaseRecord => ({ holderIdentity: 'w', leaseDurationSeconds: 4, acquireTimeMs: 0, renewTimeMs: Date.now(), leaseTransitions: 0 });
  const written = [await writer.create(record(), signal)];
  await other.create(record(), signal);
  const seen: Array<VersionedLease | null> = [];
  const stop = leaseStore(rest, 'watched').watch((lease) => seen.push(lease));
  try {
    await eventually('the Lease as listed', async () => (seen.length === 1 ? true : undefined), { timeoutMs: 10_000 });
    for (let i = 0; i < 3; i++) {
      written.push(await writer.update(record(), (written.at(-1) as VersionedLease).resourceVersion, signal));
      await other.update(record(), (await other.get(signal))?.resourceVersion ?? '', signal);
    }
    await eventually('the three renewals arrive', async () => (seen.length >= written.length ? true : undefined), { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(seen, written);
    await kubectlOk(['delete', 'lease', 'watched', '-n', ns.name]);
    await eventually('the deletion arrives', async () => (seen.length > written.length ? true : undefined), { timeoutMs: 10_000 });
    assert.deepEqual(seen.slice(written.length), [null]);
  } finally {
    stop();
  }
});
