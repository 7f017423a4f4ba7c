// The flood scenario's verdict (issue 34): medians of per-round ratios, and no verdict where the
// control shows the machine's noise is larger than what is judged.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { median } from '../../../bench/lib/stats.js';
import { type Figures, judgeTargets } from '../../../bench/report/targets.js';
import { base } from './no-figures.js';


const verdicts = (flood: Figures['flood']): Record<string, boolean | null> =>
  Object.fromEntries(judgeTargets({ ...base, flood }).filter((t) => t.scenario === 'flood').map((t) => [t.figure, t.met]));

test('median: the middle value, the mean of the middle two, null for none', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([1.4, 0.9, 1.0, 1.2]), 1.1);
  assert.equal(median([]), null);
});

test('flood targets: judged only where the decoy moved the operator share by 5 % at most', () => {
  assert.deepEqual(verdicts({ junk: 1.08, connections: 1.2, decoy: 1.02 }), {
    'operator share p99, decoy / quiet (control)': true,
    'operator share p99, junk / quiet': true,
    'operator share p99, connections / quiet': false,
  });
  assert.deepEqual(verdicts({ junk: 1.08, connections: 1.0, decoy: 1.3 }), {
    'operator share p99, decoy / quiet (control)': false,
    'operator share p99, junk / quiet': null,
    'operator share p99, connections / quiet': null,
  });
  assert.deepEqual(verdicts({ junk: null, connections: null, decoy: null }), {
    'operator share p99, decoy / quiet (control)': null,
    'operator share p99, junk / quiet': null,
    'operator share p99, connections / quiet': null,
  });
});
