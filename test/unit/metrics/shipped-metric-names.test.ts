// Every metric name read by the dashboard and the alert rules must be one the operator exports
// (src/metrics/metrics.ts, default Node metrics included) — so renaming a metric without
// updating grafana/ fails here, not silently on somebody's empty dashboard.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { allShippedQueries } from '../../integration/helpers/prometheus-queries.js';
import { metricNames } from './promql-selectors.js';
import { exportedSeriesNames, unknownMetrics } from './registry-names.js';

describe('metric names in grafana/ exist in the operator registry', () => {
  let exported: Set<string>;
  const queries = allShippedQueries();

  before(async () => {
    exported = await exportedSeriesNames();
  });

  test('the registry lists secondcron histograms as _bucket/_sum/_count and the default metrics', () => {
    for (const name of [
      'secondcron_trigger_latency_seconds_bucket',
      'secondcron_trigger_latency_seconds_sum',
      'secondcron_trigger_latency_seconds_count',
      'secondcron_jobs_created_total',
      'secondcron_leader',
      'nodejs_eventloop_lag_p99_seconds',
      'process_resident_memory_bytes',
    ]) {
      assert.ok(exported.has(name), `${name} exported`);
    }
    assert.ok(!exported.has('secondcron_trigger_latency_seconds'), 'a histogram has no bare series');
  });

  test('every dashboard and alert query reads only exported metrics', () => {
    const sources = new Set(queries.map((q) => q.source));
    assert.deepEqual([...sources].sort(), ['alert', 'annotation', 'panel', 'variable']);
    for (const q of queries) {
      assert.ok(metricNames(q.expr).length > 0, `${q.where} reads a metric`);
      assert.deepEqual(unknownMetrics(q.expr, exported), [], `${q.where}: ${q.expr}`);
    }
  });

  test('the check catches a renamed metric', () => {
    const renamed = new Set(exported);
    renamed.delete('secondcron_leader');
    renamed.add('secondcron_is_leader');
    const readers = queries.filter((q) => metricNames(q.expr).includes('secondcron_leader'));
    assert.ok(readers.length >= 3, 'several queries read secondcron_leader');
    for (const q of readers) assert.deepEqual(unknownMetrics(q.expr, renamed), ['secondcron_leader'], q.where);
  });

  test('every custom metric of the operator appears on the dashboard', () => {
    const read = new Set(queries.filter((q) => q.source === 'panel').flatMap((q) => metricNames(q.expr)));
    const custom = [...exported].filter((n) => n.startsWith('secondcron_') && !/_(sum|count)$/.test(n));
    const missing = custom.filter((n) => !read.has(n));
    assert.deepEqual(missing, [], 'metrics without a panel');
  });
});
