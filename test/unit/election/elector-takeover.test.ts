import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WallClock } from '../../../src/clock/clock.js';
import { Cluster } from './harness.js';
import type { Replica } from './harness.js';

const LEASE = 15_000;
const RETRY = 2_000;
const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

/** Index in the store log of `client`'s last successful write. */
function lastWriteIndex(c: Cluster, client: string): number {
  return c.store.log.findLastIndex((e) => e.client === client && e.op !== 'get' && e.result === 'ok');
}

/**
 * Leader `a` runs with a wall clock `skewMs` off; follower `b` runs on a monotonic clock with a
 * different origin. `a` crashes (stop, no release). Returns when `b` took over and the instant
 * `b` first saw `a`'s last write.
 */
async function crashLeaderWithSkewedClock(skewMs: number): Promise<{
  c: Cluster;
  a: Replica;
  b: Replica;
  firstSeenLastWriteAt: number;
  takeoverAt: number;
}> {
  const c = new Cluster();
  const skewedWall: WallClock = { nowMs: () => c.clock.wall.nowMs() + skewMs };
  const a = c.replica('a', { wall: skewedWall });
  const b = c.replica('b', { monotonic: { nowMs: () => c.clock.mono.nowMs() + 123_456_789 } });
  a.elector.start();
  await c.run(1);
  b.elector.start();

  // While the leader renews, the follower never takes over, however odd the timestamps look.
  await c.run(60_000, () => assert.equal(b.elector.isLeader(), false));
  assert.equal(a.elector.getState(), 'Leader');
  assert.equal(b.elector.getLeader(), 'a');
  const renewTime = c.store.current()?.record.renewTimeMs ?? 0;
  assert.ok(Math.abs(renewTime - c.clock.wall.nowMs() - skewMs) <= RETRY, 'renewTime carries the skew');

  await c.run(700); // crash at an instant unrelated to the retry grid
  const writesBeforeStop = c.store.writes().length;
  a.elector.stop();
  assert.equal(c.store.writes().length, writesBeforeStop, 'stop() does not touch the Lease');
  assert.equal(a.of('stopped').length, 1);

  const lastWrite = lastWriteIndex(c, 'a');
  const firstSeen = c.store.log.find((e, i) => i > lastWrite && e.client === 'b' && e.op === 'get');
  await c.runUntil(() => b.elector.isLeader(), 3 * LEASE);
  assert.ok(firstSeen);
  const takeover = b.of('started')[0];
  assert.ok(takeover);
  return { c, a, b, firstSeenLastWriteAt: firstSeen.atMs, takeoverAt: takeover.atMs };
}

describe('LeaderElector: takeover after a leader dies', () => {
  for (const [label, skewMs] of [
    ['ten years in the past', -TEN_YEARS_MS],
    ['ten years in the future', TEN_YEARS_MS],
  ] as const) {
    it(`ignores remote timestamps: leader wall clock ${label}, takeover after leaseDuration on the follower's own clock`, async () => {
      const { c, b, firstSeenLastWriteAt, takeoverAt } = await crashLeaderWithSkewedClock(skewMs);
      // The follower waits leaseDuration from when IT saw the last change and tries at that instant,
      // not at its next retry on the retry-period grid (which was leaseDuration + 1 s here).
      assert.equal(takeoverAt, firstSeenLastWriteAt + LEASE);
      const lease = c.store.current();
      assert.equal(lease?.record.holderIdentity, 'b');
      assert.equal(lease?.record.leaseTransitions, 1);
      assert.equal(lease?.record.acquireTimeMs, lease?.record.renewTimeMs, 'new holder sets acquireTime');
      assert.deepEqual(
        b.of('newLeader').map((e) => e.detail),
        ['a', 'b'],
      );
      assert.equal(b.elector.counters().leaderChangesObserved, 1);
    });
  }

  it('a follower that starts late still waits a full leaseDuration from its first observation', async () => {
    const c = new Cluster();
    // A Lease left behind by a process that is gone; its renewTime says "just now" in wall time.
    c.store.put({
      holderIdentity: 'ghost',
      leaseDurationSeconds: 15,
      acquireTimeMs: c.clock.wall.nowMs(),
      renewTimeMs: c.clock.wall.nowMs(),
      leaseTransitions: 3,
    });
    await c.run(60_000); // long past any expiry in wall time
    const b = c.replica('b');
    const startedAt = c.now();
    b.elector.start();
    const waited = await c.runUntil(() => b.elector.isLeader(), 3 * LEASE);
    const firstGet = c.store.log.find((e) => e.client === 'b');
    assert.equal(firstGet?.atMs, startedAt + 1);
    // Seen at +1, so the Lease expires for it at +15001, between its attempts at +14001 and +16001
    // (the retry grid): it tries at the expiry.
    assert.equal(waited, 15_001);
    assert.equal(c.store.current()?.record.leaseTransitions, 4);
  });

  it('uses the leaseDurationSeconds written in the record, not its own setting', async () => {
    const c = new Cluster();
    c.store.put({ holderIdentity: 'ghost', leaseDurationSeconds: 40, acquireTimeMs: 0, renewTimeMs: 0, leaseTransitions: 0 });
    const b = c.replica('b');
    b.elector.start();
    const waited = await c.runUntil(() => b.elector.isLeader(), 100_000);
    assert.equal(waited, 40_001); // seen at +1, expired for it 40 s later
  });
});

describe('LeaderElector: trying at the expiry adds no reads while the leader lives', () => {
  it('a follower of a renewing leader reads the Lease once per retry period, as before', async () => {
    const c = new Cluster();
    const { a, b } = await c.leaderAndFollower();
    await c.run(10_000);
    const from = c.now();
    await c.run(60_000, () => assert.equal(b.elector.isLeader(), false));
    const reads = c.store.log.filter((e) => e.client === 'b' && e.op === 'get' && e.atMs > from).length;
    assert.equal(reads, 60_000 / RETRY);
    assert.equal(a.elector.getState(), 'Leader');
  });
});

describe('LeaderElector: a follower that watches the Lease', () => {
  /** Leader 'a' on an absent Lease; 'b' starts 1.5 s later, so its reads come 1.5 s after each renew. */
  async function watchedLeaderCrash(watchLease: boolean): Promise<{ c: Cluster; b: Replica; lastWriteAt: number; takeoverAt: number }> {
    const c = new Cluster();
    const a = c.replica('a');
    const b = c.replica('b', { watchLease });
    a.elector.start();
    await c.run(1_500);
    b.elector.start();
    await c.run(60_000, () => assert.equal(b.elector.isLeader(), false));
    await c.run(700);
    a.elector.stop();
    const lastWrite = c.store.log[lastWriteIndex(c, 'a')];
    assert.ok(lastWrite);
    await c.runUntil(() => b.elector.isLeader(), 3 * LEASE);
    const takeover = b.of('started')[0];
    assert.ok(takeover);
    return { c, b, lastWriteAt: lastWrite.atMs, takeoverAt: takeover.atMs };
  }

  it("takes a dead leader's Lease a lease duration after that leader's last renew, not after the read that found it", async () => {
    const watched = await watchedLeaderCrash(true);
    assert.equal(watched.takeoverAt, watched.lastWriteAt + LEASE);
    assert.equal(watched.c.store.current()?.record.holderIdentity, 'b');
    // Without the watch, the same follower counts from its read 1.5 s after the renew.
    const reading = await watchedLeaderCrash(false);
    assert.equal(reading.takeoverAt, reading.lastWriteAt + 1_500 + LEASE);
  });

  it('reads no more often for it, and stop() ends the watch', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    const b = c.replica('b', { watchLease: true });
    a.elector.start();
    await c.run(1);
    b.elector.start();
    assert.equal(c.store.watchCount(), 1);
    await c.run(10_000);
    const from = c.now();
    await c.run(60_000, () => assert.equal(b.elector.isLeader(), false));
    const reads = c.store.log.filter((e) => e.client === 'b' && e.op === 'get' && e.atMs > from).length;
    assert.equal(reads, 60_000 / RETRY);
    b.elector.stop();
    assert.equal(c.store.watchCount(), 0);
  });
});
