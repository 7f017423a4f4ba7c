// The soak's growth figure (bench/lib/stats.ts slopeBesideRole): least squares, so one GC dip does not decide it.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { slopeBesideRole } from '../../../bench/lib/stats.js';

/** The plain least-squares slope: one role throughout. */
const slope = (points: [number, number][]): number | null => slopeBesideRole(points.map(([x, y]): [number, number, 0 | 1] => [x, y, 1]));

test('slope: exact on a line, robust to a sawtooth around it, null without enough points', () => {
  assert.equal(slope([[0, 5], [10, 7], [20, 9], [30, 11]]), 0.2);
  const saw: [number, number][] = Array.from({ length: 60 }, (_, i) => [i, 100 + 0.05 * i + (i % 6 === 5 ? -4 : 0.8)]);
  const s = slope(saw);
  assert.ok(s !== null && Math.abs(s - 0.05) < 0.01, String(s));
  assert.equal(slope([[0, 1], [1, 2], [2, 3]]), null, 'fewer than 4 points');
  assert.equal(slope([[3, 1], [3, 2], [3, 5]]), null);
});

test('slopeBesideRole: a leader/follower square wave is not growth; growth under it is still found', () => {
  // Leads for 10 minutes, follows for 10 (heap 8 MiB higher while leading), for 55 minutes.
  const wave = (growthPerMin: number): [number, number, 0 | 1][] =>
    Array.from({ length: 331 }, (_, i) => {
      const t = 5 + i / 6;
      const leading = Math.floor(t / 10) % 2 === 0 ? 1 : 0;
      return [t, 40 + growthPerMin * t + 8 * leading + (i % 7 === 6 ? -2 : 0.3), leading];
    });
  const flat = wave(0);
  const plain = slope(flat.map(([t, y]) => [t, y]));
  assert.ok(plain !== null && Math.abs(plain) > 0.03, `the plain slope reads the wave as a trend: ${plain}`);
  const fitted = slopeBesideRole(flat);
  assert.ok(fitted !== null && Math.abs(fitted) < 0.01, String(fitted));
  const growing = slopeBesideRole(wave(0.2));
  assert.ok(growing !== null && Math.abs(growing - 0.2) < 0.01, String(growing));
  // One role only: the plain slope.
  assert.equal(slopeBesideRole([[0, 5, 1], [10, 7, 1], [20, 9, 1], [30, 11, 1]]), 0.2);
  assert.equal(slopeBesideRole([[0, 5, 1], [10, 7, 0], [20, 9, 1]]), null);
});
