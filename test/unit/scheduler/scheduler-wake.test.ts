import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/clock/fake-clock.js';
import { Scheduler, type Fire } from '../../../src/scheduler/index.js';
import type { SlotSource } from '../../../src/scheduler/slot-source.js';
import { W, countingSource, intervalSource, makeHarness } from './harness.js';

describe('Scheduler wake-ups', () => {
  it('an early wake-up re-arms for the remainder and does not fire early', () => {
    const jitters = [-1, 0];
    const h = makeHarness({ clock: { monoStartMs: 0, wakeJitter: () => jitters.shift() ?? 0 } });
    h.scheduler.set('a', intervalSource(W, 1000));
    h.scheduler.start();
    assert.deepEqual(h.clock.pendingTimers(), [{ fireAtMs: 999, delayMs: 1000 }]);

    assert.ok(h.clock.runNext());
    assert.equal(h.clock.mono.nowMs(), 999);
    assert.equal(h.fires.length, 0, 'woke 1 ms early: nothing fires');
    assert.deepEqual(h.clock.pendingTimers(), [{ fireAtMs: 1000, delayMs: 1 }], 're-armed for the rest');

    assert.ok(h.clock.runNext());
    assert.equal(h.fires.length, 1);
    assert.equal(h.fires[0]!.slotMs, W + 1000);
    assert.equal(h.fires[0]!.atMono, 1000);
    assert.equal(h.fires[0]!.latenessMs, 0);
  });

  it('a sub-millisecond early wake re-arms with at least 1 ms (no spin)', () => {
    const jitters = [-0.4];
    const h = makeHarness({ clock: { monoStartMs: 0, wakeJitter: () => jitters.shift() ?? 0 } });
    h.scheduler.set('a', intervalSource(W, 1000));
    h.scheduler.start();
    h.clock.runNext();
    assert.equal(h.fires.length, 0);
    assert.deepEqual(h.clock.pendingTimers(), [{ fireAtMs: 999.6 + 1, delayMs: 1 }]);
    h.clock.runNext();
    assert.equal(h.fires.length, 1);
    assert.ok(Math.abs(h.fires[0]!.latenessMs - 0.6) < 1e-3); // fake wall is a double near 1.8e12: ~0.2 µs steps
  });

  it('a 10 s stall with a 1 s interval fires once, skipped = 9, lateness measured', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.set('a', intervalSource(W, 1000));
    h.scheduler.start();
    h.clock.advance(500);
    h.clock.stall(10_000); // loop blocked from mono 500 to 10,500
    assert.equal(h.fires.length, 1);
    const f = h.fires[0]!;
    assert.equal(f.slotMs, W + 10_000, 'the latest slot at or before now');
    assert.equal(f.skipped, 9);
    assert.equal(f.skippedFirstMs, W + 1000);
    assert.equal(f.skippedIsEstimate, undefined);
    assert.equal(f.latenessMs, 500);
    assert.equal(h.scheduler.lastWakeMonoMs(), 10_500);

    // Back on the grid: the next slot fires on time, from the absolute slot.
    h.clock.advance(500);
    assert.equal(h.fires.length, 2);
    assert.deepEqual([h.fires[1]!.slotMs, h.fires[1]!.skipped, h.fires[1]!.latenessMs], [W + 11_000, 0, 0]);
  });

  it('entries late together fire in slot order in one wake', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.set('every2', intervalSource(W, 2000)); // latest due: W+10000
    h.scheduler.set('every3', intervalSource(W, 3000)); // latest due: W+9000
    h.scheduler.set('at7', intervalSource(W + 7000, 3_600_000)); // W+7000 only
    h.scheduler.start();
    h.clock.stall(10_200);
    assert.deepEqual(
      h.fires.map((f) => [f.key, f.slotMs - W, f.skipped]),
      [
        ['at7', 7000, 0],
        ['every3', 9000, 2],
        ['every2', 10_000, 4],
      ],
    );
    assert.deepEqual(
      h.fires.map((f) => f.latenessMs),
      [3200, 1200, 200],
    );
  });

  it('a day-long stall on an every-second schedule: coarse catch-up, bounded work', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    const src = countingSource(intervalSource(W, 1000));
    h.scheduler.set('a', src);
    h.scheduler.start();
    src.calls = 0;
    h.clock.stall(86_400_000 + 250);
    assert.equal(h.fires.length, 1);
    const f = h.fires[0]!;
    assert.equal(f.slotMs, W + 86_400_000);
    assert.equal(f.skipped, 86_399, 'extrapolated, exact for an interval');
    assert.equal(f.skippedIsEstimate, true);
    assert.equal(f.skippedFirstMs, W + 1000);
    assert.equal(f.latenessMs, 250);
    assert.ok(src.calls < 10_000 + 100, `next() calls ${src.calls}: walk capped, then bisection`);
    assert.equal(h.scheduler.nextSlot('a'), W + 86_401_000);
  });

  it('sleeps at most maxSleepMs even when the next slot is far away', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 }, scheduler: { maxSleepMs: 5000 } });
    h.scheduler.set('daily', intervalSource(W, 86_400_000));
    h.scheduler.start();
    assert.equal(h.clock.pendingTimers()[0]!.delayMs, 5000);
    h.clock.advance(86_400_000);
    assert.equal(h.fires.length, 1);
    assert.equal(h.fires[0]!.slotMs, W + 86_400_000);
    assert.equal(h.fires[0]!.latenessMs, 0, 'the last short sleep lands on the slot');
    assert.ok(h.clock.timersSetCount >= 86_400_000 / 5000);
  });

  it('an empty scheduler still wakes every maxSleepMs (anchor checks) with one timer', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 }, scheduler: { maxSleepMs: 2000 } });
    h.scheduler.start();
    assert.equal(h.clock.armedCount, 1);
    h.clock.advance(10_000);
    assert.equal(h.scheduler.lastWakeMonoMs(), 10_000);
    assert.equal(h.clock.armedCount, 1);
  });

  it('a source that ends is removed after its last slot', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    const three: SlotSource = { next: (after) => [W + 1000, W + 2000, W + 3000].find((s) => s > after) ?? null };
    h.scheduler.set('three', three);
    h.scheduler.start();
    h.clock.advance(2500);
    assert.equal(h.scheduler.nextSlot('three'), W + 3000);
    h.clock.advance(10_000);
    assert.deepEqual(
      h.fires.map((f) => f.slotMs - W),
      [1000, 2000, 3000],
    );
    assert.equal(h.scheduler.has('three'), false);
    assert.equal(h.scheduler.size, 0);
  });

  it('whole-ms wall reads (Date.now) do not quantise lateness: it stays measured on the monotonic clock', () => {
    const clock = new FakeClock({ monoStartMs: 0, wallStartMs: W + 0.7, wakeJitter: () => 0.3 });
    const fires: Array<Fire & { atMono: number }> = [];
    const steps: number[] = [];
    const scheduler = new Scheduler({
      mono: clock.mono,
      wall: { nowMs: () => Math.floor(clock.wall.nowMs()) }, // like Date.now()
      timers: clock.timers,
      onFire: (f) => fires.push({ ...f, atMono: clock.mono.nowMs() }),
      onClockStep: (d) => steps.push(d),
    });
    scheduler.set('a', intervalSource(W, 1000));
    scheduler.start();
    clock.advance(20_500);
    assert.deepEqual(
      fires.map((f) => f.slotMs - W),
      Array.from({ length: 20 }, (_, i) => (i + 1) * 1000),
    );
    assert.deepEqual(steps, []);
    // The anchor was read as W at mono 0 (true wall W+0.7) and is never re-taken from the noisy
    // reads, so lateness is exactly the monotonic distance from that deadline: the 0.3 ms jitter plus
    // < 1 ms of ceil() rounding, not snapped to whole ms.
    for (const f of fires) {
      const monoLateness = f.atMono - (f.slotMs - W);
      assert.ok(Math.abs(f.latenessMs - monoLateness) < 1e-6, `lateness ${f.latenessMs} vs ${monoLateness}`);
      assert.ok(f.latenessMs >= 0.3 - 1e-6 && f.latenessMs < 1.3, `lateness ${f.latenessMs}`);
    }
  });
});
