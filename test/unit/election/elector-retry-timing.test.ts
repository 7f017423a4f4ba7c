import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Cluster } from './harness.js';
import type { Replica } from './harness.js';

/**
 * Issue 37: the retry period runs from the START of an attempt, not from its end. Measured before
 * the fix: after the API server was frozen (SIGSTOP) for 30 s and resumed, no replica led for
 * 2–5 s, because each candidate, its hung call cut off at the per-call timeout, then slept a whole
 * jittered period with no request in flight, and nobody asked for the Lease when the server came
 * back inside that gap.
 */

const RETRY = 2_000;
const JITTER_FACTOR = 1.2;
const CALL_TIMEOUT = 4_900; // default: just below renewDeadline / 2
const WORST_JITTERED_RETRY = RETRY * (1 + 1 * JITTER_FACTOR); // random() = 1: 4.4 s
/** Node's setTimeout (and the FakeClock) runs a 0 ms timer after 1 ms: "at once" is one tick later. */
const TIMER_TICK = 1;
const FREEZE = 30_000;
/** Thaw moments 250 ms apart across a whole retry cycle of the old code (call timeout + worst jitter). */
const THAW_STEP = 250;
const THAW_OFFSETS = Array.from({ length: Math.ceil((CALL_TIMEOUT + WORST_JITTERED_RETRY) / THAW_STEP) + 1 }, (_, i) => i * THAW_STEP);
/**
 * At the thaw every candidate has a call in flight (its calls are back to back while they hang),
 * which the server answers at once; the memory store takes no time, so the winner's write lands at
 * the thaw instant. The only slack: a call whose timeout fired exactly at the thaw instant, its
 * immediate retry running one timer tick later.
 */
const THAW_BOUND = TIMER_TICK;

function leaders(...replicas: Replica[]): Replica[] {
  return replicas.filter((r) => r.elector.isLeader());
}

function gapsOf(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - (times[i] ?? 0));
}

function callTimes(c: Cluster, client: string, from: number, to: number): number[] {
  return c.store.log.filter((e) => e.client === client && e.atMs > from && e.atMs <= to).map((e) => e.atMs);
}

interface Thawed {
  c: Cluster;
  a: Replica;
  b: Replica;
  freezeAt: number;
  thawAt: number;
  /** Fake ms from the thaw until some replica led. */
  latency: number;
}

/**
 * Two replicas with the worst-case jitter (random() = 1), `a` leading and `b` following; the API
 * server freezes for FREEZE + `extraMs` (every call hangs, the leader's renew deadline passes),
 * then answers again; runs until some replica leads.
 */
async function freezeThenThaw(extraMs: number, freezeMs = FREEZE): Promise<Thawed> {
  const c = new Cluster();
  const a = c.replica('a', { random: () => 1 });
  const b = c.replica('b', { random: () => 1 });
  a.elector.start();
  await c.run(1);
  b.elector.start();
  await c.run(10_000);
  assert.equal(a.elector.getState(), 'Leader');
  assert.equal(b.elector.getState(), 'Candidate');

  c.store.freeze();
  const freezeAt = c.now();
  await c.run(freezeMs + extraMs, () => assert.ok(leaders(a, b).length <= 1, 'never two leaders'));
  assert.deepEqual(leaders(a, b), [], 'the leader lost the Lease during the freeze');
  assert.equal(a.of('stopped').length, 1);

  c.store.thaw();
  const thawAt = c.now();
  const latency = await c.runUntil(() => leaders(a, b).length > 0, 3 * FREEZE);
  return { c, a, b, freezeAt, thawAt, latency };
}

describe('LeaderElector: the retry period runs from the start of an attempt (issue 37)', () => {
  it('after a 30 s freeze of the API server a replica leads at the thaw, whatever the thaw phase', async () => {
    const late: string[] = [];
    const latencies: number[] = [];
    for (const extra of THAW_OFFSETS) {
      const { a, b, latency } = await freezeThenThaw(extra);
      latencies.push(latency);
      if (latency > THAW_BOUND) late.push(`thaw at freeze+${FREEZE + extra} ms: leader after ${latency} ms`);
      assert.equal(leaders(a, b).length, 1, 'exactly one leader');
    }
    assert.deepEqual(late, [], `latencies after the thaw (ms): ${latencies.join(', ')}`);
  });

  it('after a freeze just longer than the renew deadline a replica leads at the thaw too: the renew abandoned at the deadline is replaced at once', async () => {
    // The leader gives up at its renew deadline (10 s after its last renew) with a renew hanging; it
    // must not then sleep a whole jittered period with nothing in flight (measured before: up to
    // 4.4 s without a leader after freezes of 10–14.4 s).
    const late: string[] = [];
    for (let freeze = 10_500; freeze <= 16_000; freeze += THAW_STEP) {
      const { a, b, latency } = await freezeThenThaw(0, freeze);
      if (latency > THAW_BOUND) late.push(`${freeze} ms freeze: leader after ${latency} ms`);
      assert.equal(leaders(a, b).length, 1, 'exactly one leader');
    }
    assert.deepEqual(late, []);
  });

  it('the replica that leads after the thaw keeps leading for 60 s: one started event, never two leaders', async () => {
    for (const extra of THAW_OFFSETS) {
      const { c, a, b, thawAt } = await freezeThenThaw(extra);
      const [leader] = leaders(a, b);
      assert.ok(leader);
      await c.run(60_000, () => {
        assert.ok(leaders(a, b).length <= 1, 'never two leaders');
        assert.equal(leader.elector.isLeaderFresh(), true, `${leader.name} fresh at thaw+${c.now() - thawAt} ms`);
      });
      const afterThaw = (r: Replica, kind: 'started' | 'stopped'): number => r.of(kind).filter((e) => e.atMs >= thawAt).length;
      assert.equal(afterThaw(a, 'started') + afterThaw(b, 'started'), 1, `thaw at freeze+${FREEZE + extra} ms`);
      assert.equal(afterThaw(a, 'stopped') + afterThaw(b, 'stopped'), 0);
      assert.equal(c.store.current()?.record.holderIdentity, leader.name);
    }
  });

  it('while every call hangs, a candidate keeps one call in flight: the next goes out when the last times out', async () => {
    const { c, b, freezeAt } = await freezeThenThaw(0);
    const during = callTimes(c, 'b', freezeAt, freezeAt + FREEZE);
    assert.ok(during.length >= 3);
    // The first went out a jittered period after b's last quick answer before the freeze; from then
    // on each attempt started a whole period before its call timed out, so the next one is due at once.
    assert.deepEqual(gapsOf(during), gapsOf(during).map(() => CALL_TIMEOUT + TIMER_TICK));
    assert.ok(b.elector.counters().storeTimeouts >= during.length - 1);
  });

  for (const [random, expected] of [
    [0, 10],
    [0.5, 7],
    [1, 5],
  ] as const) {
    it(`no hammering: a candidate whose store fails fast calls it exactly ${expected} times in 20 s (random() = ${random})`, async () => {
      const c = new Cluster();
      const b = c.replica('b', { random: () => random });
      b.client.fault = { kind: 'error' };
      const startedAt = c.now();
      b.elector.start();
      await c.run(20_000);
      const period = RETRY * (1 + random * JITTER_FACTOR);
      const calls = callTimes(c, 'b', startedAt, startedAt + 20_000);
      // First attempt one tick after start(), then one per full jittered period.
      assert.equal(calls.length, Math.floor((20_000 - TIMER_TICK) / period) + 1);
      assert.equal(calls.length, expected);
      assert.equal(calls[0], startedAt + TIMER_TICK);
      for (const gap of gapsOf(calls)) assert.equal(gap, period);
      assert.equal(b.elector.counters().storeErrors, expected);
    });
  }

  it('no hammering: a candidate that finds the Lease held reads it once per full jittered period', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    const b = c.replica('b', { random: () => 1 });
    a.elector.start();
    await c.run(1);
    const startedAt = c.now();
    b.elector.start();
    await c.run(20_000);
    const calls = callTimes(c, 'b', startedAt, startedAt + 20_000);
    assert.equal(calls.length, 5); // +1, +4401, +8801, +13201, +17601
    for (const gap of gapsOf(calls)) assert.equal(gap, WORST_JITTERED_RETRY);
    assert.equal(b.elector.getState(), 'Candidate');
  });

  it('no hammering: a leader whose store fails fast retries its renew once per retryPeriod until the deadline', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    a.elector.start();
    await c.run(10_000);
    const lastRenewAt = c.store.writes('a').filter((e) => e.result === 'ok').at(-1)?.atMs ?? Number.NaN;
    a.client.fault = { kind: 'error' };
    await c.run(lastRenewAt + 10_000 - c.now());
    assert.equal(a.of('stopped')[0]?.atMs, lastRenewAt + 10_000);
    const calls = callTimes(c, 'a', lastRenewAt, lastRenewAt + 10_000);
    assert.deepEqual(calls, [2_000, 4_000, 6_000, 8_000].map((d) => lastRenewAt + d));
  });

  for (const slowMs of [1_500, 3_000]) {
    it(`a slow answer (${slowMs} ms) does not push the next attempt back: it is due a period after the last one started`, async () => {
      const c = new Cluster();
      const a = c.replica('a');
      const b = c.replica('b'); // random() = 0: a 2 s period
      a.elector.start();
      await c.run(1);
      b.client.fault = { kind: 'delay', ms: slowMs };
      const startedAt = c.now();
      b.elector.start();
      await c.run(20_000);
      const calls = callTimes(c, 'b', startedAt, startedAt + 20_000);
      assert.ok(calls.length >= 3);
      // Faster than the period: one period apart. Slower: the next attempt goes out at once.
      const expectedGap = slowMs < RETRY ? RETRY : slowMs + TIMER_TICK;
      assert.deepEqual(gapsOf(calls), gapsOf(calls).map(() => expectedGap));
      assert.equal(b.elector.getState(), 'Candidate');
    });
  }
});
