import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../src/clock/fake-clock.js';
import { Scheduler } from '../../../src/scheduler/index.js';
import type { SlotSource } from '../../../src/scheduler/slot-source.js';
import { W, intervalSource, makeHarness } from './harness.js';
import { mulberry32, randInt } from '../../support/prng.js';

const never: SlotSource = { next: () => null };

describe('Scheduler entries and timer', () => {
  it('exactly one timer is armed regardless of entry count; none when stopped', () => {
    const rng = mulberry32(99);
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    const sources = new Map<string, SlotSource>();
    for (let i = 0; i < 1000; i++) {
      const src = intervalSource(W + randInt(rng, 0, 60) * 1000, randInt(rng, 1, 120) * 1000);
      sources.set(`k${i}`, src);
      h.scheduler.set(`k${i}`, src);
    }
    assert.equal(h.clock.armedCount, 0, 'not started: no timer at all');
    h.scheduler.start();
    assert.equal(h.clock.armedCount, 1);

    const deletedAt = new Map<string, number>();
    for (let step = 0; step < 2000; step++) {
      const key = `k${randInt(rng, 0, 999)}`;
      if (rng() < 0.1 && h.scheduler.has(key)) {
        h.scheduler.delete(key);
        deletedAt.set(key, h.clock.wall.nowMs());
      }
      h.clock.advance(randInt(rng, 1, 500));
      assert.equal(h.clock.armedCount, 1);
    }
    assert.equal(h.clock.peakArmedCount, 1);
    assert.equal(h.scheduler.size, 1000 - deletedAt.size);

    // Every fire is a true slot of its source and came at its time; deleted keys never fired after.
    for (const f of h.fires) {
      const src = sources.get(f.key)!;
      assert.equal(src.next(f.slotMs - 1), f.slotMs);
      assert.equal(f.skipped, 0);
      assert.equal(f.atWall, f.slotMs);
      const del = deletedAt.get(f.key);
      assert.ok(del === undefined || f.slotMs <= del, `${f.key} fired after delete`);
    }
    // And no slot was lost: for surviving keys, fired slots are exactly the source's slots up to now.
    const now = h.clock.wall.nowMs();
    const firedByKey = new Map<string, number[]>();
    for (const f of h.fires) firedByKey.set(f.key, [...(firedByKey.get(f.key) ?? []), f.slotMs]);
    for (const [key, src] of sources) {
      if (deletedAt.has(key)) continue;
      const fired = firedByKey.get(key) ?? [];
      const want: number[] = [];
      for (let s = src.next(W) as number; s <= now; s = src.next(s) as number) want.push(s);
      assert.deepEqual(fired, want, key);
    }

    h.scheduler.stop();
    assert.equal(h.clock.armedCount, 0);
    assert.equal(h.scheduler.size, 1000 - deletedAt.size, 'stop keeps entries');
  });

  it('set() replaces an existing entry; the old source never fires again', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.start();
    h.scheduler.set('a', intervalSource(W, 1000));
    assert.equal(h.scheduler.nextSlot('a'), W + 1000);
    h.scheduler.set('a', intervalSource(W, 7000));
    assert.equal(h.scheduler.size, 1);
    assert.equal(h.scheduler.nextSlot('a'), W + 7000);
    h.clock.advance(14_000);
    assert.deepEqual(
      h.fires.map((f) => f.slotMs - W),
      [7000, 14_000],
    );
    assert.equal(h.clock.peakArmedCount, 1);
  });

  it('set() earlier than the armed wake re-arms; later does not', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.start();
    h.scheduler.set('late', intervalSource(W, 4000));
    assert.equal(h.clock.pendingTimers()[0]!.fireAtMs, 4000);
    const armsBefore = h.clock.timersSetCount;
    h.scheduler.set('later', intervalSource(W, 4500));
    assert.equal(h.clock.timersSetCount, armsBefore);
    h.scheduler.set('soon', intervalSource(W, 1500));
    assert.equal(h.clock.pendingTimers()[0]!.fireAtMs, 1500);
    h.clock.advance(4500);
    assert.deepEqual(
      h.fires.map((f) => f.key),
      // 4500 is shared by 'later' and 'soon': equal slots fire in set() order.
      ['soon', 'soon', 'late', 'later', 'soon'],
    );
  });

  it('afterMs moves the first slot; a source without slots is not kept; a bad source throws', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.set('a', intervalSource(W, 1000), W + 10_000);
    assert.equal(h.scheduler.nextSlot('a'), W + 11_000);
    h.scheduler.set('a', intervalSource(W, 1000), W - 50_000); // in the past: now wins
    assert.equal(h.scheduler.nextSlot('a'), W + 1000);
    h.scheduler.set('a', never);
    assert.equal(h.scheduler.has('a'), false);
    assert.equal(h.scheduler.nextSlot('a'), null);
    assert.throws(() => h.scheduler.set('b', { next: (t) => t }), RangeError);
    assert.equal(h.scheduler.has('b'), false);
    assert.throws(() => h.scheduler.set('b', intervalSource(W, 1000), Number.NaN), RangeError);
  });

  it('re-entrant set/delete from onFire', () => {
    const h = makeHarness({
      clock: { monoStartMs: 0 },
      onFire: (fire, hh) => {
        if (fire.key === 'a' && fire.slotMs === W + 1000) {
          // nextSlot seen from inside onFire is already the following slot.
          assert.equal(hh.scheduler.nextSlot('a'), W + 2000);
          hh.scheduler.delete('c'); // due in this same batch: must not fire
          hh.scheduler.set('d', intervalSource(W, 500));
          hh.scheduler.set('a', intervalSource(W, 3000)); // replace itself
        }
      },
    });
    h.scheduler.set('a', intervalSource(W, 1000));
    h.scheduler.set('b', intervalSource(W, 1000));
    h.scheduler.set('c', intervalSource(W, 1000));
    h.scheduler.start();
    h.clock.advance(1000);
    assert.deepEqual(
      h.fires.map((f) => f.key),
      ['a', 'b'],
    );
    assert.equal(h.scheduler.has('c'), false);
    assert.equal(h.scheduler.nextSlot('a'), W + 3000);
    assert.equal(h.scheduler.nextSlot('d'), W + 1500);
    assert.equal(h.clock.armedCount, 1);
    h.clock.advance(2000);
    assert.deepEqual(
      h.fires.slice(2).map((f) => `${f.key}@${f.slotMs - W}`),
      // At 3000 all three tie: order of their latest set(), and 'a' was re-set last.
      ['d@1500', 'b@2000', 'd@2000', 'd@2500', 'b@3000', 'd@3000', 'a@3000'],
    );
  });

  it('onFire throwing does not stop other entries or later wakes', () => {
    const h = makeHarness({
      clock: { monoStartMs: 0 },
      onFire: (fire) => {
        if (fire.key === 'bad') throw new Error(`bad at ${fire.slotMs}`);
      },
    });
    h.scheduler.set('bad', intervalSource(W, 1000));
    h.scheduler.set('good', intervalSource(W, 1000));
    h.scheduler.start();
    h.clock.advance(3000);
    assert.deepEqual(
      h.fires.map((f) => `${f.key}@${f.slotMs - W}`),
      ['bad@1000', 'good@1000', 'bad@2000', 'good@2000', 'bad@3000', 'good@3000'],
    );
    assert.equal(h.errors.length, 3);
    assert.ok(h.errors.every((e) => e.key === 'bad' && e.error instanceof Error));
    assert.equal(h.clock.armedCount, 1);
  });

  it('an onError that throws is swallowed; a throwing source is dropped, others carry on', () => {
    const clock = new FakeClock({ monoStartMs: 0, wallStartMs: W });
    const fired: string[] = [];
    let calls = 0;
    const flaky: SlotSource = {
      next: (after) => {
        if (++calls > 2) throw new Error('source broke');
        return intervalSource(W, 1000).next(after);
      },
    };
    const scheduler = new Scheduler({
      mono: clock.mono,
      wall: clock.wall,
      timers: clock.timers,
      onFire: (f) => {
        fired.push(`${f.key}@${f.slotMs - W}`);
        throw new Error('onFire');
      },
      onError: () => {
        throw new Error('onError too');
      },
    });
    scheduler.set('flaky', flaky); // call 1
    scheduler.set('ok', intervalSource(W, 1000));
    scheduler.start();
    clock.advance(3000); // flaky: call 2 (catch-up walk), call 3 throws while advancing
    assert.deepEqual(fired, ['flaky@1000', 'ok@1000', 'ok@2000', 'ok@3000']);
    assert.equal(scheduler.has('flaky'), false);
    assert.equal(scheduler.has('ok'), true);
  });

  it('stop() during onFire stops the batch at once; start() later fires what is due', () => {
    const h = makeHarness({
      clock: { monoStartMs: 0 },
      onFire: (fire, hh) => {
        if (fire.key === 'a' && fire.slotMs === W + 1000) hh.scheduler.stop();
      },
    });
    h.scheduler.set('a', intervalSource(W, 1000));
    h.scheduler.set('b', intervalSource(W, 1000));
    h.scheduler.start();
    h.clock.advance(1000);
    assert.deepEqual(
      h.fires.map((f) => f.key),
      ['a'],
    );
    assert.equal(h.clock.armedCount, 0);
    assert.equal(h.scheduler.nextSlot('b'), W + 1000, 'undelivered entry left as it was');

    h.clock.advance(9500); // stopped: nothing fires
    assert.equal(h.fires.length, 1);
    h.scheduler.start();
    h.clock.advance(1); // overdue entries wake at once
    assert.deepEqual(
      h.fires.slice(1).map((f) => [f.key, f.slotMs - W, f.skipped]),
      [
        ['a', 10_000, 8],
        ['b', 10_000, 9],
      ],
    );
  });

  it('lastWakeMonoMs tracks wake-ups; options are validated', () => {
    const h = makeHarness({ clock: { monoStartMs: 50 } });
    assert.equal(h.scheduler.lastWakeMonoMs(), 50);
    h.clock.advance(100);
    h.scheduler.start();
    assert.equal(h.scheduler.lastWakeMonoMs(), 150);
    h.scheduler.set('a', intervalSource(W, 1000));
    h.clock.advance(2000); // wall W was at mono 50, so slot W+2000 wakes at mono 2050
    assert.equal(h.scheduler.lastWakeMonoMs(), 2050);

    const clock = new FakeClock();
    const base = { mono: clock.mono, wall: clock.wall, timers: clock.timers, onFire: () => undefined };
    assert.throws(() => new Scheduler({ ...base, maxSleepMs: 0 }), RangeError);
    assert.throws(() => new Scheduler({ ...base, stepThresholdMs: -1 }), RangeError);
    assert.throws(() => new Scheduler({ ...base, maxCatchUpSlots: Number.NaN }), RangeError);
  });
});
