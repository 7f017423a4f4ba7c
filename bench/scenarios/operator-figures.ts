// What the operator says about itself over a measurement window (from two /metrics scrapes): not
// the verdict (the independent watcher is), but the explanation of where time went.
import type { PromSamples } from '../lib/prom-text.js';
import { round2 } from '../lib/stats.js';

export interface OperatorFigures {
  cpu_pct: number | null;
  /** secondcron_timer_lateness_seconds over the window (bucket upper bounds), ms. */
  timer_lateness_p50_ms: number | null;
  timer_lateness_p99_ms: number | null;
  /** secondcron_trigger_latency_seconds (slot → create acknowledged) over the window, ms. */
  trigger_latency_p50_ms: number | null;
  trigger_latency_p99_ms: number | null;
  /** prom-client's event-loop delay p99 at the end of the window (its own sampling interval), ms. */
  eventloop_lag_p99_ms: number | null;
  /** API requests per second by verb over the window. */
  requests_per_s: Record<string, number>;
  /** secondcron_triggers_missed_total by reason, and secondcron_jobs_created_total by result, over the window. */
  missed_by_reason: Record<string, number>;
  creates_by_result: Record<string, number>;
  rss_mib: number | null;
  heap_used_mib: number | null;
}

const ms = (seconds: number | undefined): number | null => (seconds === undefined || !Number.isFinite(seconds) ? null : round2(seconds * 1000));
const mib = (bytes: number | undefined): number | null => (bytes === undefined ? null : round2(bytes / 2 ** 20));

export function operatorFigures(delta: PromSamples, after: PromSamples, seconds: number): OperatorFigures {
  const requests: Record<string, number> = {};
  for (const verb of ['create', 'patch', 'get', 'list', 'update', 'delete']) {
    const n = delta.sum('secondcron_api_requests_total', `verb="${verb}"`);
    if (n > 0) requests[verb] = Math.round((n / seconds) * 10) / 10;
  }
  const byLabel = (metric: string, label: string, values: string[]): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const v of values) {
      const n = delta.sum(metric, `${label}="${v}"`);
      if (n > 0) out[v] = n;
    }
    return out;
  };
  return {
    cpu_pct: null,
    missed_by_reason: byLabel('secondcron_triggers_missed_total', 'reason', ['deadline', 'forbid', 'not_leader', 'late', 'error', 'superseded']),
    creates_by_result: byLabel('secondcron_jobs_created_total', 'result', ['created', 'already_exists', 'error']),
    timer_lateness_p50_ms: ms(delta.histogramQuantile('secondcron_timer_lateness_seconds', 0.5)),
    timer_lateness_p99_ms: ms(delta.histogramQuantile('secondcron_timer_lateness_seconds', 0.99)),
    trigger_latency_p50_ms: ms(delta.histogramQuantile('secondcron_trigger_latency_seconds', 0.5)),
    trigger_latency_p99_ms: ms(delta.histogramQuantile('secondcron_trigger_latency_seconds', 0.99)),
    eventloop_lag_p99_ms: ms(after.get('nodejs_eventloop_lag_p99_seconds')),
    requests_per_s: requests,
    rss_mib: mib(after.get('process_resident_memory_bytes')),
    heap_used_mib: mib(after.get('nodejs_heap_size_used_bytes')),
  };
}
