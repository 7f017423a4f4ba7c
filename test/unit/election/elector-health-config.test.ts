import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/clock/fake-clock.js';
import { defaultCallTimeoutMs, resolveElectionTiming } from '../../../src/election/elector-config.js';
import { LeaderElector } from '../../../src/election/elector.js';
import type { LeaderElectorOptions } from '../../../src/election/elector.js';
import { makeIdentity } from '../../../src/election/identity.js';
import { Cluster } from './harness.js';
import { MemoryLeaseStore } from './memory-lease-store.js';

const LEASE = 15_000;
const DEADLINE = 10_000;

describe('LeaderElector: healthy() and isLeaderFresh()', () => {
  it('fails only a leader whose last renew is older than leaseDuration (+ tolerance)', async () => {
    for (const tolerance of [0, 5_000]) {
      const c = new Cluster();
      // Time that passes without any timer running: a frozen event loop, a suspended VM.
      let frozenMs = 0;
      const a = c.replica('a', {
        monotonic: { nowMs: () => c.clock.mono.nowMs() + frozenMs },
        healthToleranceMs: tolerance,
      });
      a.elector.start();
      await c.run(1);
      const renewedAt = c.now();
      assert.equal(a.elector.healthy(), true);

      frozenMs = DEADLINE - 1;
      assert.equal(a.elector.isLeaderFresh(), true);
      frozenMs = DEADLINE;
      // Fencing reads the clock itself: stale although no timer could run yet.
      assert.equal(a.elector.isLeaderFresh(), false);
      assert.equal(a.elector.getState(), 'Leader');
      assert.equal(a.elector.healthy(), true);

      frozenMs = LEASE + tolerance;
      assert.equal(a.elector.healthy(), true, `tolerance ${tolerance}: at the limit`);
      frozenMs = LEASE + tolerance + 1;
      assert.equal(a.elector.healthy(), false, `tolerance ${tolerance}: past the limit`);
      assert.equal(c.now(), renewedAt);

      // At its next timer the elector notices, steps down, and is a healthy follower.
      await c.run(2_000);
      assert.equal(a.of('stopped').length, 1);
      assert.equal(a.elector.getState(), 'Candidate');
      assert.equal(a.elector.healthy(), true);
    }
  });

  it('followers are healthy even when they cannot reach the store for a long time', async () => {
    const c = new Cluster();
    const { b } = await c.leaderAndFollower();
    b.client.fault = { kind: 'error' };
    await c.run(5 * LEASE, () => assert.equal(b.elector.healthy(), true));
    assert.ok(b.elector.counters().storeErrors > 10);
  });

  it('a stopped or idle elector is healthy and never fresh', async () => {
    const c = new Cluster();
    const a = c.replica('a');
    assert.equal(a.elector.healthy(), true);
    assert.equal(a.elector.isLeaderFresh(), false);
    a.elector.start();
    await c.run(1);
    a.elector.stop();
    assert.equal(a.elector.healthy(), true);
    assert.equal(a.elector.isLeaderFresh(), false);
  });

  it('a throwing hook does not break the election loop', async () => {
    const clock = new FakeClock();
    const store = new MemoryLeaseStore(clock.timers, () => clock.mono.nowMs());
    const errors: string[] = [];
    const elector = new LeaderElector({
      identity: 'a',
      store: store.client('a'),
      monotonic: clock.mono,
      wall: clock.wall,
      timers: clock.timers,
      random: () => 0,
      hooks: {
        onStartedLeading: () => {
          throw new Error('boom');
        },
        onError: (error, op) => errors.push(`${op}:${(error as Error).message}`),
      },
    });
    elector.start();
    clock.advance(1);
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(2_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(elector.getState(), 'Leader');
    assert.deepEqual(errors, ['callback:boom']);
    assert.equal(store.writes().length, 2, 'created, then renewed');
  });
});

describe('election config validation', () => {
  const clock = new FakeClock();
  const base = (): LeaderElectorOptions => ({
    identity: 'a',
    store: new MemoryLeaseStore(clock.timers, () => 0).client('a'),
    monotonic: clock.mono,
    wall: clock.wall,
    timers: clock.timers,
    random: () => 0,
  });

  it('defaults to client-go timings and a per-call timeout just below renewDeadline/2', () => {
    const timing = new LeaderElector(base()).timing;
    assert.deepEqual(timing, {
      leaseDurationMs: 15_000,
      leaseDurationSeconds: 15,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      timeoutMs: 4_900,
      healthToleranceMs: 0,
    });
    for (const renewDeadlineMs of [1_300, 2_000, 2_200, 3_000, 10_000, 60_000]) {
      const t = defaultCallTimeoutMs(renewDeadlineMs);
      assert.ok(t < renewDeadlineMs / 2, `${renewDeadlineMs}: ${t}`);
      assert.ok(t >= Math.min(1_000, renewDeadlineMs / 2 - renewDeadlineMs / 20), `${renewDeadlineMs}: ${t}`);
    }
    assert.equal(defaultCallTimeoutMs(2_200), 1_000);
    assert.equal(defaultCallTimeoutMs(60_000), 29_900);
  });

  const bad: Array<[string, Partial<LeaderElectorOptions>, RegExp]> = [
    ['lease not above deadline', { leaseDurationMs: 10_000 }, /leaseDurationMs \(10000\) must be greater than renewDeadlineMs \(10000\)/],
    ['deadline not above 1.2 × retry', { renewDeadlineMs: 2_400 }, /renewDeadlineMs \(2400\) must be greater than 1\.2 × retryPeriodMs \(2000\)/],
    ['zero retry', { retryPeriodMs: 0 }, /retryPeriodMs must be a positive number/],
    ['negative deadline', { renewDeadlineMs: -1 }, /renewDeadlineMs must be a positive number/],
    ['NaN lease', { leaseDurationMs: Number.NaN }, /leaseDurationMs must be a positive number/],
    ['fractional seconds lease', { leaseDurationMs: 15_500 }, /leaseDurationMs must be a whole number of seconds/],
    ['timeout at half the deadline', { timeoutMs: 5_000 }, /timeoutMs \(5000\) must be less than renewDeadlineMs\/2 \(5000\)/],
    ['zero timeout', { timeoutMs: 0 }, /timeoutMs must be a positive number/],
    ['negative tolerance', { healthToleranceMs: -1 }, /healthToleranceMs must be a non-negative number/],
    ['empty identity', { identity: ' ' }, /identity must not be empty/],
  ];
  for (const [label, override, message] of bad) {
    it(`rejects ${label}`, () => {
      assert.throws(() => new LeaderElector({ ...base(), ...override }), message);
    });
  }

  it('accepts the tightest valid client-go relation', () => {
    const timing = resolveElectionTiming({ leaseDurationMs: 3_000, renewDeadlineMs: 2_401, retryPeriodMs: 2_000 });
    assert.equal(timing.renewDeadlineMs, 2_401);
    assert.ok(timing.timeoutMs < 2_401 / 2);
  });
});

describe('makeIdentity', () => {
  it('is the pod name, an underscore and 8 hex digits drawn from the injected randomness', () => {
    assert.equal(makeIdentity('secondcron-7f9c-abcde', () => 0), 'secondcron-7f9c-abcde_00000000');
    assert.equal(makeIdentity('p', () => 0.5), 'p_80000000');
    assert.equal(makeIdentity('p', () => 0.9999999999), 'p_ffffffff');
    assert.match(makeIdentity('p', () => 0.123456), /^p_[0-9a-f]{8}$/);
    assert.notEqual(makeIdentity('p', () => 0.1), makeIdentity('p', () => 0.2));
  });

  it('rejects an empty pod name', () => {
    assert.throws(() => makeIdentity('', () => 0), /podName must not be empty/);
  });
});
