import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, MAX_EARLY_WAKE_MS } from '../../../src/clock/fake-clock.js';
import {
  MAX_TIMER_DELAY_MS,
  clampTimerDelay,
  createSystemTimers,
  systemMonotonicClock,
  systemTimers,
  systemWallClock,
} from '../../../src/clock/system-clock.js';

describe('FakeClock', () => {
  it('advance runs due timers in fire-time order, each at its own instant', () => {
    const clock = new FakeClock({ monoStartMs: 100, wallStartMs: 1_000_000 });
    const log: Array<[string, number, number]> = [];
    const at = (name: string) => () => log.push([name, clock.mono.nowMs(), clock.wall.nowMs()]);
    clock.timers.set(30, at('c'));
    clock.timers.set(10, at('a'));
    clock.timers.set(20, at('b'));
    clock.timers.set(10, at('a2')); // same instant: set order
    assert.equal(clock.armedCount, 4);
    assert.equal(clock.advance(25), 3);
    assert.deepEqual(log, [
      ['a', 110, 1_000_010],
      ['a2', 110, 1_000_010],
      ['b', 120, 1_000_020],
    ]);
    assert.equal(clock.mono.nowMs(), 125);
    assert.equal(clock.armedCount, 1);
    assert.equal(clock.peakArmedCount, 4);
  });

  it('runs timers armed by timers within the same advance; clear cancels', () => {
    const clock = new FakeClock();
    const log: number[] = [];
    const h = clock.timers.set(5, () => log.push(-1));
    clock.timers.set(10, () => {
      log.push(clock.mono.nowMs());
      clock.timers.set(10, () => log.push(clock.mono.nowMs()));
    });
    clock.timers.clear(h);
    clock.timers.clear(h); // twice is harmless
    clock.advance(100);
    assert.deepEqual(log, [10, 20]);
    assert.equal(clock.armedCount, 0);
    assert.equal(clock.runNext(), false);
  });

  it('stall jumps time, then runs overdue timers late, all at the new time', () => {
    const clock = new FakeClock();
    const log: number[] = [];
    clock.timers.set(1000, () => log.push(clock.mono.nowMs()));
    clock.timers.set(2000, () => log.push(clock.mono.nowMs()));
    clock.timers.set(20_000, () => log.push(clock.mono.nowMs()));
    assert.equal(clock.stall(10_000), 2);
    assert.deepEqual(log, [10_000, 10_000]);
    assert.equal(clock.pendingTimers()[0]?.fireAtMs, 20_000);
  });

  it('wall steps move the wall clock only', () => {
    const clock = new FakeClock({ monoStartMs: 0, wallStartMs: 5000 });
    clock.advance(100);
    clock.stepWall(3_600_000);
    assert.equal(clock.mono.nowMs(), 100);
    assert.equal(clock.wall.nowMs(), 3_605_100);
    clock.setWall(42);
    clock.advance(8);
    assert.equal(clock.wall.nowMs(), 50);
    assert.equal(clock.mono.nowMs(), 108);
  });

  it('wake jitter: late as asked, early by at most 1 ms and never before half the delay', () => {
    const clock = new FakeClock();
    let jitter = 3.5;
    clock.wakeJitter = () => jitter;
    clock.timers.set(100, () => undefined);
    jitter = -7;
    clock.timers.set(100, () => undefined);
    clock.timers.set(1, () => undefined);
    const fireAts = clock.pendingTimers().map((t) => t.fireAtMs);
    assert.deepEqual(fireAts, [0.5, 100 - MAX_EARLY_WAKE_MS, 103.5]);
  });

  it('coerces delays like setTimeout: below 1 → 1, above 2^31-1 → capped', () => {
    const clock = new FakeClock();
    clock.timers.set(0, () => undefined);
    clock.timers.set(Number.NaN, () => undefined);
    clock.timers.set(2 ** 40, () => undefined);
    assert.deepEqual(
      clock.pendingTimers().map((t) => t.delayMs),
      [1, 1, MAX_TIMER_DELAY_MS],
    );
  });
});

describe('system clock', () => {
  it('clampTimerDelay keeps delays inside what setTimeout honours', () => {
    assert.equal(clampTimerDelay(-5), 0);
    assert.equal(clampTimerDelay(Number.NaN), 0);
    assert.equal(clampTimerDelay(1500), 1500);
    assert.equal(clampTimerDelay(2 ** 31), MAX_TIMER_DELAY_MS);
    assert.equal(clampTimerDelay(Number.POSITIVE_INFINITY), MAX_TIMER_DELAY_MS);
  });

  it('monotonic clock never goes back; wall clock is epoch ms', () => {
    let prev = systemMonotonicClock.nowMs();
    for (let i = 0; i < 1000; i++) {
      const now = systemMonotonicClock.nowMs();
      assert.ok(now >= prev);
      prev = now;
    }
    assert.ok(systemWallClock.nowMs() > Date.UTC(2020, 0, 1));
  });

  it('timers fire, can be cleared, and unref on request', async () => {
    await new Promise<void>((resolve) => systemTimers.set(1, resolve));
    let fired = false;
    const h = systemTimers.set(1, () => {
      fired = true;
    });
    systemTimers.clear(h);
    await new Promise<void>((resolve) => systemTimers.set(5, resolve));
    assert.equal(fired, false);

    const unrefd = createSystemTimers({ unref: true });
    const big = unrefd.set(2 ** 40, () => {
      fired = true;
    }) as unknown as NodeJS.Timeout;
    assert.equal(big.hasRef(), false);
    unrefd.clear(big as unknown as Parameters<typeof unrefd.clear>[0]);
    const reffed = systemTimers.set(1000, () => undefined) as unknown as NodeJS.Timeout;
    assert.equal(reffed.hasRef(), true);
    clearTimeout(reffed);
    assert.equal(fired, false);
  });
});
