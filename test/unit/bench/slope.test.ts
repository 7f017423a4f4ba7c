// The soak's growth figure (bench/lib/stats.ts slope): least squares, so one GC dip does not decide it.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { slope } from '../../../bench/lib/stats.js';

test('slope: exact on a line, robust to a sawtooth around it, null without enough points', () => {
  assert.equal(slope([[0, 5], [10, 7], [20, 9]]), 0.2);
  const saw: [number, number][] = Array.from({ length: 60 }, (_, i) => [i, 100 + 0.05 * i + (i % 6 === 5 ? -4 : 0.8)]);
  const s = slope(saw);
  assert.ok(s !== null && Math.abs(s - 0.05) < 0.01, String(s));
  assert.equal(slope([[0, 1], [1, 2]]), null);
  assert.equal(slope([[3, 1], [3, 2], [3, 5]]), null);
});
