// Every API request the operator made over a window, from secondcron_api_requests_total: by its
// `purpose` label (job_create, dry_run, event, status, finalizer, job_delete, lease, list, watch,
// get) when the operator exports one, otherwise by verb. Lease renewals and watches are requests
// like any other: the API server and etcd serve them all.
import type { PromSamples } from '../lib/prom-text.js';

const METRIC = 'secondcron_api_requests_total';

export interface RequestCounts {
  total: number;
  /** The label the counts are keyed by. */
  by: 'purpose' | 'verb';
  counts: Record<string, number>;
}

export function requestCounts(delta: PromSamples): RequestCounts {
  const byPurpose = delta.sumByLabel(METRIC, 'purpose');
  const by = byPurpose.size > 0 ? 'purpose' : 'verb';
  const counts: Record<string, number> = {};
  let total = 0;
  for (const [key, n] of byPurpose.size > 0 ? byPurpose : delta.sumByLabel(METRIC, 'verb')) {
    if (n <= 0) continue;
    counts[key] = Math.round(n);
    total += Math.round(n);
  }
  return { total, by, counts };
}
