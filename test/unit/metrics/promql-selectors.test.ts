// The scanner decides which names the other tests check, so it is tested on its own first: if it
// missed a metric, the registry check could never fail.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { metricNames, scanPromQL } from './promql-selectors.js';

describe('scanPromQL', () => {
  test('finds metric names with and without matchers, not functions or grouping labels', () => {
    const expr =
      'histogram_quantile(0.99, sum by (le, job) (rate(a_bucket{job=~"$job", le!="1"}[$__rate_interval]))) / on(instance) group_left(pod) b_total > bool 0.5 or vector(0)';
    assert.deepEqual(metricNames(expr), ['a_bucket', 'b_total']);
  });

  test('returns each selector with its matchers and each range window', () => {
    const res = scanPromQL('sum without (code) (increase(x{job="secondcron", code=~"5..|error"}[10m])) unless absent(y)');
    assert.deepEqual(res.selectors, [
      { metric: 'x', matchers: 'job="secondcron", code=~"5..|error"' },
      { metric: 'y', matchers: '' },
    ]);
    assert.deepEqual(res.ranges, ['10m']);
  });

  test('ignores strings, numbers, durations, variables, keywords and comments', () => {
    const expr = [
      'label_replace(m1{a="}{"}, "dst", "$1", "src", "(.*)")',
      '+ 1e-9 * 0x1F - Inf + NaN',
      'and m2 offset 5m',
      '# m3 in a comment',
      'unless on() m4[${__rate_interval}:1m]',
    ].join('\n');
    assert.deepEqual(metricNames(expr), ['m1', 'm2', 'm4']);
    assert.deepEqual(scanPromQL(expr).ranges, ['${__rate_interval}:1m']);
  });

  test('rejects an unbalanced expression instead of guessing', () => {
    assert.throws(() => scanPromQL('sum(rate(x{job="a"[5m]))'), /unbalanced/);
    assert.throws(() => scanPromQL('x{job="a}'), /unterminated|unbalanced/);
  });
});
