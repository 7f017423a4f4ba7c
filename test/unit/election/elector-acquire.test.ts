import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster } from './harness.js';

const RETRY = 2_000;

describe('LeaderElector: acquiring and renewing', () => {
  it('a single candidate acquires at once and creates the Lease with itself as holder', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    assert.equal(a.elector.getState(), 'Idle');
    const startWall = c.clock.wall.nowMs();
    a.elector.start();
    await c.run(1);

    assert.equal(a.elector.getState(), 'Leader');
    assert.equal(a.elector.isLeaderFresh(), true);
    assert.equal(a.of('started').length, 1);
    const lease = c.store.current();
    assert.ok(lease);
    assert.equal(lease.record.holderIdentity, 'a');
    assert.equal(lease.record.leaseTransitions, 0);
    assert.equal(lease.record.leaseDurationSeconds, 15);
    assert.equal(lease.record.acquireTimeMs, startWall + 1);
    assert.equal(lease.record.renewTimeMs, lease.record.acquireTimeMs);
    assert.deepEqual(
      c.store.log.map((e) => `${e.op}:${e.result}`),
      ['get:ok', 'create:ok'],
    );
    assert.deepEqual(
      a.of('state').map((e) => e.detail),
      ['Candidate:', 'Leader:a'],
    );
    assert.deepEqual(a.elector.counters(), {
      leaderChangesObserved: 0,
      acquisitions: 1,
      leadershipLosses: 0,
      storeErrors: 0,
      storeTimeouts: 0,
      conflicts: 0,
    });
  });

  it('renews every retryPeriod, keeping acquireTime and transitions', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    a.elector.start();
    await c.run(1);
    const acquired = c.store.current();
    assert.ok(acquired);

    const renewTimes: number[] = [];
    for (let i = 0; i < 5; i++) {
      await c.run(RETRY);
      const lease = c.store.current();
      assert.ok(lease);
      assert.equal(lease.record.holderIdentity, 'a');
      assert.equal(lease.record.acquireTimeMs, acquired.record.acquireTimeMs);
      assert.equal(lease.record.leaseTransitions, 0);
      assert.notEqual(lease.resourceVersion, acquired.resourceVersion);
      renewTimes.push(lease.record.renewTimeMs ?? Number.NaN);
      assert.equal(a.elector.isLeaderFresh(), true);
    }
    const gaps = renewTimes.slice(1).map((t, i) => t - (renewTimes[i] ?? 0));
    assert.deepEqual(gaps, [RETRY, RETRY, RETRY, RETRY]);
    assert.equal(c.store.writes('a').filter((e) => e.op === 'update').length, 5);
    assert.equal(a.of('started').length, 1);
    assert.equal(a.of('stopped').length, 0);
  });

  it('two candidates racing to create the Lease: exactly one leads, the loser saw AlreadyExists', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    const b = c.replica('b');
    a.elector.start();
    b.elector.start();
    let leaderInstants = 0;
    await c.run(60_000, () => {
      const leaders = [a, b].filter((r) => r.elector.isLeader());
      assert.ok(leaders.length <= 1, 'never two leaders');
      if (leaders.length === 1) leaderInstants++;
    });
    assert.ok(leaderInstants > 0);

    // Both read "not found" before either wrote: a real race, decided by the store.
    assert.deepEqual(
      c.store.log.slice(0, 4).map((e) => `${e.client}:${e.op}:${e.result}`),
      ['a:get:ok', 'b:get:ok', 'a:create:ok', 'b:create:conflict'],
    );
    assert.equal(a.elector.getState(), 'Leader');
    assert.equal(b.elector.getState(), 'Candidate');
    assert.equal(b.elector.getLeader(), 'a');
    assert.equal(b.elector.counters().conflicts, 1);
    assert.equal(c.store.current()?.record.leaseTransitions, 0);
  });

  it('two candidates updating the same resourceVersion: one wins, the other gets 409', async () => {
    const c = new Cluster();
    // A released Lease: free for the taking by anybody at once.
    const releasedVersion = c.store.put({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTimeMs: 0,
      renewTimeMs: 0,
      leaseTransitions: 7,
    });
    const a = c.replica('a');
    const b = c.replica('b');
    a.elector.start();
    b.elector.start();
    await c.run(1);

    const updates = c.store.writes();
    assert.deepEqual(
      updates.map((e) => `${e.client}:${e.sentVersion}:${e.result}`),
      [`a:${releasedVersion}:ok`, `b:${releasedVersion}:conflict`],
    );
    assert.equal(a.elector.getState(), 'Leader');
    assert.equal(b.elector.getState(), 'Candidate');
    const lease = c.store.current();
    assert.equal(lease?.record.holderIdentity, 'a');
    assert.equal(lease?.record.leaseTransitions, 8, 'one holder change, one increment');

    await c.run(30_000, () => assert.ok(!(a.elector.isLeader() && b.elector.isLeader())));
    assert.equal(a.elector.getState(), 'Leader');
    assert.equal(b.elector.getState(), 'Candidate');
  });

  it('a blocked candidate retries every retryPeriod × (1 + random·1.2)', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    const b = c.replica('b', { random: () => 0.5 });
    a.elector.start();
    await c.run(1);
    b.elector.start();
    await c.run(20_000);
    const gets = c.store.log.filter((e) => e.client === 'b' && e.op === 'get').map((e) => e.atMs);
    assert.ok(gets.length >= 5);
    const gaps = gets.slice(1).map((t, i) => t - (gets[i] ?? 0));
    for (const gap of gaps) assert.equal(gap, RETRY * (1 + 0.5 * 1.2));
    assert.equal(b.elector.getState(), 'Candidate');
  });

  it('start() is idempotent while running and refused after stop()', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    a.elector.start();
    a.elector.start();
    await c.run(1);
    assert.equal(c.store.log.filter((e) => e.op === 'get').length, 1);
    a.elector.stop();
    assert.throws(() => a.elector.start(), /cannot start an elector after stop/);
  });
});
