// The series names the operator really exports, read from its own registry: a metric renamed in
// src/metrics/metrics.ts changes this set, and every query that still uses the old name fails.
import { Metrics } from '../../../src/metrics/metrics.js';
import { SCHEDULE_METRIC_NAMES } from '../../../src/metrics/schedule-gauges.js';
import { metricNames } from './promql-selectors.js';

/** Series Prometheus itself adds to every scrape target; not in any registry. */
export const PROMETHEUS_SYNTHETIC_SERIES = new Set(['up', 'scrape_duration_seconds', 'scrape_samples_scraped']);

/** Histograms and summaries are exported as several series; counters keep their `_total` name. */
export function seriesNamesOf(metric: { name: string; type: string }): string[] {
  switch (metric.type) {
    case 'histogram':
      return [`${metric.name}_bucket`, `${metric.name}_sum`, `${metric.name}_count`];
    case 'summary':
      return [metric.name, `${metric.name}_sum`, `${metric.name}_count`];
    default:
      return [metric.name];
  }
}

/** Metric families (names as registered) with their type: a fresh registry and the per-schedule gauges. */
export async function exportedFamilies(): Promise<{ name: string; type: string }[]> {
  const metrics = new Metrics();
  const json = await metrics.registry.getMetricsAsJSON();
  // prom-client's typings declare `type` as a numeric enum, but at run time it is the string
  // ('counter', 'histogram', ...); String() keeps the comparison right either way.
  const registered = json.map((m) => ({ name: m.name, type: String(m.type) }));
  // The per-schedule gauges are rendered beside the registry (src/metrics/schedule-gauges.ts).
  return [...registered, ...SCHEDULE_METRIC_NAMES.map((name) => ({ name, type: 'gauge' }))];
}

export async function exportedSeriesNames(): Promise<Set<string>> {
  return new Set((await exportedFamilies()).flatMap(seriesNamesOf));
}

/** Names an expression reads that neither the operator nor Prometheus exports. */
export function unknownMetrics(expr: string, exported: Set<string>): string[] {
  return metricNames(expr).filter((name) => !exported.has(name) && !PROMETHEUS_SYNTHETIC_SERIES.has(name));
}
