import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LeaseRecord } from '../../../src/election/lease-record.js';
import { Cluster } from './harness.js';

const RETRY = 2_000;
const CALL_TIMEOUT = 4_900;

describe('LeaderElector: release()', () => {
  it('hands the Lease back (empty holder, 1 s, transitions and acquireTime kept) and a follower takes over at its next retry', async () => {
    const c = new Cluster();
    let seenAtStop: { holder: string | undefined; fresh: boolean } | undefined;
    const a = c.replica('a', {
      onStoppedLeading: () => {
        seenAtStop = { holder: c.store.current()?.record.holderIdentity, fresh: a.elector.isLeaderFresh() };
      },
    });
    const b = c.replica('b');
    a.elector.start();
    await c.run(1);
    b.elector.start();
    await c.run(9_000);
    const before = c.store.current();
    assert.ok(before);
    assert.equal(before.record.holderIdentity, 'a');

    const releasedAt = c.now();
    await a.elector.release();

    // The scheduler was told to stop (and fencing was off) while the Lease still named us.
    assert.deepEqual(seenAtStop, { holder: 'a', fresh: false });
    const released = c.store.current();
    assert.ok(released);
    assert.equal(released.record.holderIdentity, '');
    assert.equal(released.record.leaseDurationSeconds, 1);
    assert.equal(released.record.leaseTransitions, before.record.leaseTransitions);
    assert.equal(released.record.acquireTimeMs, before.record.acquireTimeMs);
    assert.equal(a.elector.getState(), 'Stopped');
    assert.equal(a.elector.isLeaderFresh(), false);

    const waited = await c.runUntil(() => b.elector.isLeader(), 20_000);
    assert.ok(waited > 0 && waited <= RETRY, `follower took ${waited} ms`);
    const taken = c.store.current();
    assert.equal(taken?.record.holderIdentity, 'b');
    assert.equal(taken?.record.leaseTransitions, before.record.leaseTransitions + 1);
    assert.equal(taken?.record.leaseDurationSeconds, 15);
    assert.equal(b.of('started')[0]?.atMs, releasedAt + waited);
    assert.deepEqual(b.of('newLeader').map((e) => e.detail), ['a', '', 'b']);
    assert.equal(b.elector.counters().leaderChangesObserved, 2);
    assert.deepEqual(a.of('state').map((e) => e.detail), ['Candidate:', 'Leader:a', 'Stopped:a']);
  });

  it('is idempotent: a second call writes nothing', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    a.elector.start();
    await c.run(1);
    const first = a.elector.release();
    const second = a.elector.release();
    assert.equal(first, second);
    await first;
    const writes = c.store.writes().length;
    await a.elector.release();
    a.elector.stop();
    await c.run(5_000);
    assert.equal(c.store.writes().length, writes);
    assert.equal(a.of('stopped').length, 1);
  });

  it('does not write when this process never held the Lease', async () => {
    const c = new Cluster();
    const { b } = await c.leaderAndFollower();
    await c.run(3_000);
    const writes = c.store.writes('b').length;
    await b.elector.release();
    assert.equal(c.store.writes('b').length, writes);
    assert.equal(b.of('stopped').length, 0);
    assert.equal(c.store.current()?.record.holderIdentity, 'a');
  });

  it('releases the newer version when an abandoned renew of ours landed after all (409, re-read, retry)', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    a.elector.start();
    await c.run(1);
    const ours = c.store.current();
    assert.ok(ours);
    const landed: LeaseRecord = { ...ours.record, renewTimeMs: (ours.record.renewTimeMs ?? 0) + 1 };
    c.store.put(landed); // the Lease still names us, at a version we never saw
    await a.elector.release();
    const results = c.store.log.slice(-3).map((e) => `${e.op}:${e.result}`);
    assert.deepEqual(results, ['update:conflict', 'get:ok', 'update:ok']);
    assert.equal(c.store.current()?.record.holderIdentity, '');
    assert.equal(c.store.current()?.record.leaseTransitions, ours.record.leaseTransitions);
  });

  it('leaves a Lease alone that someone else took meanwhile', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    a.elector.start();
    await c.run(1);
    c.store.put({ holderIdentity: 'x', leaseDurationSeconds: 15, acquireTimeMs: 1, renewTimeMs: 1, leaseTransitions: 1 });
    await a.elector.release();
    assert.equal(c.store.current()?.record.holderIdentity, 'x');
    assert.equal(a.elector.getState(), 'Stopped');
  });

  it('never throws: a failing or hanging store is reported and release still completes', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    a.elector.start();
    await c.run(1);
    a.client.fault = { kind: 'error' };
    await a.elector.release();
    assert.equal(a.elector.getState(), 'Stopped');
    assert.ok(a.of('error').some((e) => e.detail.startsWith('release:')));

    const d = new Cluster();
    const h = d.replica('h');
    h.elector.start();
    await d.run(1);
    h.client.fault = { kind: 'hangIgnoringSignal' };
    let done = false;
    const releasing = h.elector.release().then(() => (done = true));
    await d.run(CALL_TIMEOUT - 1);
    assert.equal(done, false);
    await d.run(1);
    await releasing;
    assert.equal(done, true);
    assert.equal(h.elector.counters().storeTimeouts, 1);
  });

  it('can be called from onStoppedLeading (lost leadership → release → exit) without the elector resuming', async () => {
    const c = new Cluster();
    let releasing: Promise<void> | undefined;
    const a = c.replica('a', {
      onStoppedLeading: () => {
        a.client.fault = undefined; // the API server is back just as we give up
        releasing = a.elector.release();
      },
    });
    a.elector.start();
    await c.run(1);
    a.client.fault = { kind: 'error' };
    await c.run(10_000); // renew deadline passes: leadership lost, hook releases
    assert.ok(releasing);
    await releasing;
    assert.equal(a.elector.getState(), 'Stopped');
    assert.equal(c.store.current()?.record.holderIdentity, '');
    const callsAfterStop = c.store.log.length;
    await c.run(60_000);
    assert.equal(c.store.log.length, callsAfterStop, 'no attempt after being stopped from a hook');
    assert.equal(c.clock.armedCount, 0, 'no timer left behind');
  });
});

