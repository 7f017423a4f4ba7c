import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { catchUp, nextSlotAfter } from '../../../src/scheduler/catch-up.js';
import type { SlotSource } from '../../../src/scheduler/slot-source.js';
import { W, intervalSource } from './harness.js';
import { mulberry32, randInt } from '../../support/prng.js';

/** Irregular, cron-like: seconds 0–9 of every minute (`0-9 * * * * *`). */
const firstTenSecondsOfEachMinute: SlotSource = {
  next(after) {
    let t = Math.floor(after / 1000) * 1000 + 1000;
    while (((t / 1000) % 60) >= 10) t = (Math.floor(t / 60_000) + 1) * 60_000;
    return t;
  },
};

function bruteForce(source: SlotSource, firstDue: number, now: number): { slotMs: number; skipped: number } {
  let slot = firstDue;
  let skipped = 0;
  for (let n = source.next(slot); n !== null && n <= now; n = source.next(slot)) {
    slot = n;
    skipped++;
  }
  return { slotMs: slot, skipped };
}

describe('catchUp', () => {
  it('walks slot by slot below the cap: exact slot and count', () => {
    const src = intervalSource(W, 1000);
    const exact = (slotMs: number, skipped: number) => ({ slotMs, skipped, skippedIsEstimate: false });
    assert.deepEqual(catchUp(src, W + 1000, W + 1000, 100), exact(W + 1000, 0));
    assert.deepEqual(catchUp(src, W + 1000, W + 5999.9, 100), exact(W + 5000, 4));
    assert.deepEqual(catchUp(src, W + 1000, W + 101_000, 100), exact(W + 101_000, 100));
  });

  it('beyond the cap: bisection finds the exact latest slot, the count is extrapolated', () => {
    const src = intervalSource(W, 1000);
    assert.deepEqual(catchUp(src, W + 1000, W + 1_000_500, 100), {
      slotMs: W + 1_000_000,
      skipped: 999,
      skippedIsEstimate: true,
    });
  });

  it('irregular slots: the fired slot is always the latest due one (random, vs brute force)', () => {
    const rng = mulberry32(7);
    for (let i = 0; i < 300; i++) {
      const firstDue = firstTenSecondsOfEachMinute.next(W + randInt(rng, 0, 3_600_000)) as number;
      const now = firstDue + randInt(rng, 0, 2 * 3_600_000) + rng();
      const want = bruteForce(firstTenSecondsOfEachMinute, firstDue, now);
      const got = catchUp(firstTenSecondsOfEachMinute, firstDue, now, 50);
      assert.equal(got.slotMs, want.slotMs, `firstDue=${firstDue} now=${now}`);
      assert.equal(got.skippedIsEstimate, want.skipped > 50);
      if (!got.skippedIsEstimate) assert.equal(got.skipped, want.skipped);
      else assert.ok(got.skipped > 50);
    }
  });

  it('a source that ends stops the walk', () => {
    const two: SlotSource = { next: (after) => [W + 1000, W + 2000].find((s) => s > after) ?? null };
    assert.deepEqual(catchUp(two, W + 1000, W + 99_000, 100), {
      slotMs: W + 2000,
      skipped: 1,
      skippedIsEstimate: false,
    });
  });

  it('rejects a source that does not move forward (it would loop the scheduler)', () => {
    const stuck: SlotSource = { next: (after) => after };
    assert.throws(() => nextSlotAfter(stuck, W), RangeError);
    assert.throws(() => catchUp(stuck, W, W + 10_000, 100), RangeError);
    const nan: SlotSource = { next: () => Number.NaN };
    assert.throws(() => nextSlotAfter(nan, W), RangeError);
  });
});
