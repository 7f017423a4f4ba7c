import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { W, intervalSource, makeHarness } from './harness.js';
import { mulberry32 } from '../../support/prng.js';

/**
 * Wake-up jitter as seen in production: usually 0–5 ms late, sometimes up to 1 ms early
 * (libuv's whole-millisecond loop time).
 */
function productionLikeJitter(seed: number): () => number {
  const rng = mulberry32(seed);
  return () => {
    const r = rng();
    if (r < 0.03) return -1;
    if (r < 0.06) return -rng();
    return rng() * 5;
  };
}
const MAX_LATE_JITTER_MS = 5;
/** Delays are whole ms, rounded up, so a wake can trail the deadline by < 1 ms more than the jitter. */
const LATENESS_BOUND_MS = MAX_LATE_JITTER_MS + 1;

describe('Scheduler drift (seeded jitter, FakeClock)', () => {
  it('100,000 ticks of a 1 s interval: exact slots, no drift, none lost or doubled, never early', () => {
    const h = makeHarness({ clock: { monoStartMs: 0, wakeJitter: productionLikeJitter(1) } });
    h.scheduler.set('tick', intervalSource(W, 1000));
    h.scheduler.start();
    const N = 100_000;
    while (h.fires.length < N) assert.ok(h.clock.runNext(), 'a timer is always armed');

    let bad = '';
    let maxLateness = 0;
    for (let i = 0; i < N && bad === ''; i++) {
      const f = h.fires[i]!;
      const expectedSlot = W + (i + 1) * 1000;
      // The mono deadline of a slot is fixed by the initial anchor (no wall steps in this test).
      // Tolerance 1 µs: the fake wall clock is a double near 1.8e12 ms, which resolves ~0.2 µs.
      const deadlineMono = expectedSlot - W;
      if (f.key !== 'tick' || f.slotMs !== expectedSlot) bad = `fire ${i}: slot ${f.slotMs} != ${expectedSlot}`;
      else if (f.skipped !== 0) bad = `fire ${i}: skipped ${f.skipped}`;
      else if (f.atMono < deadlineMono) bad = `fire ${i}: ran ${deadlineMono - f.atMono} ms early`;
      else if (Math.abs(f.atMono - deadlineMono - f.latenessMs) > 1e-3) bad = `fire ${i}: lateness misreported`;
      else if (f.latenessMs >= LATENESS_BOUND_MS) bad = `fire ${i}: lateness ${f.latenessMs}`;
      maxLateness = Math.max(maxLateness, f.latenessMs);
    }
    assert.equal(bad, '');
    const last = h.fires[N - 1]!;
    assert.equal(last.slotMs, W + 100_000 * 1000, 'the 100,000th slot is exactly anchor + 100,000 s');
    assert.ok(last.latenessMs < LATENESS_BOUND_MS, 'lateness of the last fire is jitter, not accumulated');
    assert.ok(maxLateness > MAX_LATE_JITTER_MS - 0.5, 'the jitter really was applied');
    // Early wake-ups happened (~6% of arms) and each cost a re-arm instead of an early fire.
    const rearms = h.clock.timersSetCount - N;
    assert.ok(rearms > 2000, `expected many early-wake re-arms, saw ${rearms}`);
    assert.equal(h.clock.peakArmedCount, 1);
    assert.deepEqual(h.errors, []);
  });

  it('a mix of 1 s, 3 s and 7 s intervals fires every slot once, globally in slot order', () => {
    const h = makeHarness({ clock: { monoStartMs: 0, wakeJitter: productionLikeJitter(2) } });
    const defs = [
      { key: 'one', anchor: W, period: 1000 },
      { key: 'three', anchor: W + 1000, period: 3000 }, // shares instants with 'one'
      { key: 'seven', anchor: W - 2000, period: 7000 },
    ];
    for (const d of defs) h.scheduler.set(d.key, intervalSource(d.anchor, d.period));
    h.scheduler.start();
    const N = 100_000;
    while (h.fires.length < N) assert.ok(h.clock.runNext());

    // Reference: every slot of every source after W, ordered by slot, ties in set() order.
    const lastSlot = h.fires[N - 1]!.slotMs;
    const expected: string[] = [];
    for (let t = W + 1000; t <= lastSlot; t += 1000) {
      for (const d of defs) if ((t - d.anchor) % d.period === 0) expected.push(`${d.key}@${t}`);
    }
    const actual = h.fires.map((f) => `${f.key}@${f.slotMs}`);
    assert.equal(actual.length, expected.length);
    assert.deepEqual(actual, expected);
    assert.ok(h.fires.every((f) => f.skipped === 0 && f.latenessMs < LATENESS_BOUND_MS));
    assert.equal(h.clock.peakArmedCount, 1);
  });
});
