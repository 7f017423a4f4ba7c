// Issue 36: the steady ratios are judged on the median of per-round ratios from interleaved rounds,
// never on one round; a round without a figure is kept as null and left out of the median.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { roundRatios } from '../../../bench/lib/stats.js';
import { judgeTargets } from '../../../bench/report/targets.js';
import { base } from './no-figures.js';

test('roundRatios: every round kept in order, the median and spread of those with a figure', () => {
  assert.deepEqual(roundRatios([1.4, 0.9, null, 1.0, 1.2]), { rounds: [1.4, 0.9, null, 1.0, 1.2], median: 1.1, min: 0.9, max: 1.4 });
  assert.deepEqual(roundRatios([null, null]), { rounds: [null, null], median: null, min: null, max: null });
});

test('the steady targets are judged on the rounds, each both ways', () => {
  const verdicts = (rounds: { p50Ratio: number | null; p99Ratio: number | null; shareP99Ratio: number | null }): (boolean | null)[] =>
    judgeTargets({ ...base, rounds }).filter((t) => t.scenario === 'rounds').map((t) => t.met);
  assert.deepEqual(verdicts({ p50Ratio: 1.05, p99Ratio: 1.1, shareP99Ratio: 2 }), [true, true, true]);
  assert.deepEqual(verdicts({ p50Ratio: 1.06, p99Ratio: 1.11, shareP99Ratio: 2.01 }), [false, false, false]);
  assert.deepEqual(verdicts({ p50Ratio: null, p99Ratio: null, shareP99Ratio: null }), [null, null, null]);
});
