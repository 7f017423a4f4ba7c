import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LeaseTimeoutError } from '../../../src/election/lease-store.js';
import { Cluster, settle } from './harness.js';
import type { Replica } from './harness.js';

const LEASE = 15_000;
const DEADLINE = 10_000;
const RETRY = 2_000;
const CALL_TIMEOUT = 4_900; // default: just below renewDeadline / 2
/** A 0 ms timer runs 1 ms later (Node's setTimeout, and so the FakeClock). */
const TIMER_TICK = 1;

/** Starts `a`, lets it lead for a while, returns the instant its last successful renew was sent. */
async function establishedLeader(c: Cluster, a: Replica): Promise<number> {
  a.elector.start();
  await c.run(10_000);
  assert.equal(a.elector.getState(), 'Leader');
  const last = c.store.writes('a').filter((e) => e.result === 'ok').at(-1);
  assert.ok(last);
  return last.atMs;
}

/**
 * Runs `ms` and checks at every step that `a` leads (and is fresh) exactly while less than
 * renewDeadline has passed since `lastRenewAt`.
 */
async function runCheckingFence(c: Cluster, a: Replica, lastRenewAt: number, ms: number): Promise<void> {
  await c.run(ms, () => {
    const fresh = c.now() - lastRenewAt < DEADLINE;
    assert.equal(a.elector.isLeaderFresh(), fresh, `isLeaderFresh at +${c.now() - lastRenewAt} ms`);
    assert.equal(a.elector.isLeader(), fresh, `isLeader at +${c.now() - lastRenewAt} ms`);
  });
}

describe('LeaderElector: fencing when renewals fail', () => {
  it('a leader whose store errors stops leading exactly at renewDeadline, then competes again', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    const lastRenewAt = await establishedLeader(c, a);
    a.client.fault = { kind: 'error' };

    await runCheckingFence(c, a, lastRenewAt, DEADLINE + 5_000);
    const stopped = a.of('stopped');
    assert.equal(stopped.length, 1);
    assert.equal(stopped[0]?.atMs, lastRenewAt + DEADLINE);
    assert.equal(a.elector.getState(), 'Candidate');
    assert.ok(a.of('error').some((e) => e.detail.startsWith('get:Error: injected get failure')));

    // Still competing: it keeps trying while the store is down…
    const triesBefore = c.store.log.filter((e) => e.client === 'a').length;
    await c.run(10_000);
    assert.ok(c.store.log.filter((e) => e.client === 'a').length >= triesBefore + 4);
    // …and, the Lease still naming it, leads again as soon as the store answers.
    a.client.fault = undefined;
    await c.run(RETRY);
    assert.equal(a.elector.getState(), 'Leader');
    assert.equal(a.elector.counters().acquisitions, 2);
    assert.equal(a.elector.counters().leadershipLosses, 1);
    assert.equal(c.store.current()?.record.leaseTransitions, 0, 'same holder: not a transition');
  });

  it('a hanging store call is aborted at the per-call timeout, and leadership still ends at renewDeadline', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    const lastRenewAt = await establishedLeader(c, a);
    a.client.fault = { kind: 'hang' };

    await runCheckingFence(c, a, lastRenewAt, DEADLINE + 1_000);
    assert.equal(a.of('stopped')[0]?.atMs, lastRenewAt + DEADLINE);

    const hung = c.store.log.filter((e) => e.client === 'a' && e.atMs > lastRenewAt);
    // First hung call: aborted by the elector's timeout after exactly timeoutMs.
    assert.equal(hung[0]?.atMs, lastRenewAt + RETRY);
    assert.equal(hung[0]?.abortedAtMs, lastRenewAt + RETRY + CALL_TIMEOUT);
    assert.equal(hung[0]?.result, 'aborted');
    // Second one: the retry period counts from the start of the first attempt, which was long
    // past, so it went out at once (one timer tick later); still in flight at the deadline, it
    // was abandoned right then.
    assert.equal(hung[1]?.atMs, lastRenewAt + RETRY + CALL_TIMEOUT + TIMER_TICK);
    assert.equal(hung[1]?.abortedAtMs, lastRenewAt + DEADLINE);
    assert.equal(a.elector.counters().storeTimeouts, 1);
    assert.ok(a.of('error').some((e) => e.detail === `get:${String(new LeaseTimeoutError('get', CALL_TIMEOUT))}`));
  });

  it('enforces the per-call timeout even when the store ignores its AbortSignal', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    const lastRenewAt = await establishedLeader(c, a);
    a.client.fault = { kind: 'hangIgnoringSignal' };

    await runCheckingFence(c, a, lastRenewAt, DEADLINE + 30_000);
    assert.equal(a.of('stopped')[0]?.atMs, lastRenewAt + DEADLINE);
    // The elector did not wait for the calls that never answer: attempts keep coming, one as
    // soon as the last timed out (its attempt started more than a jittered retry before that).
    const after = c.store.log.filter((e) => e.client === 'a' && e.atMs > lastRenewAt + DEADLINE).map((e) => e.atMs);
    assert.ok(after.length >= 4);
    const gaps = after.slice(1).map((t, i) => t - (after[i] ?? 0));
    for (const gap of gaps) assert.equal(gap, CALL_TIMEOUT + TIMER_TICK);
    assert.equal(a.elector.getState(), 'Candidate');
  });

  it('counts freshness from when the renew was sent, not when it was acknowledged', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    await establishedLeader(c, a);
    const nextRenewAt = c.clock.pendingTimers()[0]?.fireAtMs ?? Number.NaN;
    await c.run(nextRenewAt - c.now() - 1); // just before the next renew
    // Next renew: the read answers (after the fake timers' 1 ms minimum), the write is only
    // acknowledged 3 s after it was sent; then the store dies.
    a.client.nextFaults.push({ kind: 'delay', ms: 0 }, { kind: 'delay', ms: 3_000 });
    a.client.fault = { kind: 'error' };
    await c.run(2);
    const write = c.store.writes('a').at(-1);
    assert.equal(write?.result, 'pending');
    const sentAt = write?.atMs ?? Number.NaN;
    await c.run(3_000);
    assert.equal(write?.result, 'ok');
    assert.equal(a.elector.isLeaderFresh(), true);
    await runCheckingFence(c, a, sentAt, DEADLINE);
    assert.equal(a.of('stopped')[0]?.atMs, sentAt + DEADLINE);
  });

  it('steps down at once when another holder shows up in the Lease', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    await establishedLeader(c, a);
    c.store.put({ holderIdentity: 'intruder', leaseDurationSeconds: 15, acquireTimeMs: 0, renewTimeMs: 0, leaseTransitions: 9 });
    const putAt = c.now();
    await c.run(RETRY);
    const stopped = a.of('stopped')[0];
    assert.ok(stopped);
    assert.ok(stopped.atMs - putAt <= RETRY, 'at the next renew, not after renewDeadline');
    assert.equal(a.elector.getState(), 'Candidate');
    assert.equal(a.elector.getLeader(), 'intruder');
    assert.deepEqual(a.of('newLeader').map((e) => e.detail), ['a', 'intruder']);
  });

  it('a partitioned leader is fenced before a healthy follower takes over (never two acting leaders)', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    const b = c.replica('b');
    const lastRenewAt = await establishedLeader(c, a);
    b.elector.start();
    await c.run(5_000);
    a.client.fault = { kind: 'error' };
    let overlapChecks = 0;
    await c.run(40_000, () => {
      overlapChecks++;
      assert.ok(!(a.elector.isLeaderFresh() && b.elector.isLeader()), 'two acting leaders');
    });
    assert.ok(overlapChecks > 20);
    assert.equal(b.elector.getState(), 'Leader');
    const aStopped = a.of('stopped')[0]?.atMs ?? Number.NaN;
    const bStarted = b.of('started')[0]?.atMs ?? Number.NaN;
    assert.ok(bStarted - aStopped >= LEASE - DEADLINE, `gap ${bStarted - aStopped} ms`);
    assert.ok(lastRenewAt < aStopped);

    // Healed, the old leader sees the new holder and stays a candidate.
    a.client.fault = undefined;
    await c.run(10_000);
    assert.equal(a.elector.getState(), 'Candidate');
    assert.equal(a.elector.getLeader(), 'b');
  });

  it('an event-loop stall past renewDeadline ends leadership before any further write', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    await establishedLeader(c, a);
    const writes = c.store.writes().length;
    c.clock.stall(DEADLINE + 2_000); // every overdue timer now runs at once, late
    await settle();
    assert.equal(a.of('stopped').length, 1);
    assert.equal(c.store.writes().length, writes, 'no renew was sent by a stale leader');
    assert.equal(a.elector.isLeaderFresh(), false);
  });

  it('timers that wake early (libuv rounds to whole ms) neither end leadership early nor late', async () => {
    const c = new Cluster();
    c.clock.wakeJitter = () => -1;
    const a = c.replica('a');
    const lastRenewAt = await establishedLeader(c, a);
    a.client.fault = { kind: 'hang' };
    await runCheckingFence(c, a, lastRenewAt, DEADLINE + 3_000);
    assert.equal(a.of('stopped')[0]?.atMs, lastRenewAt + DEADLINE);
  });
});

