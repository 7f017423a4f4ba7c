// What the operator spends per Job in the steady scenario (100 × 1 s in the full run): API requests
// (every verb, Lease and watches included) and CPU seconds, both over the steady window, beside the
// floor client's CPU per create of the same run (scenarios/floor.ts, lib/floor-client.ts).
import type { FloorResult } from '../scenarios/floor.js';
import type { SteadyResult } from '../scenarios/steady.js';
import { type Failed, failed, isFailed } from './results.js';

export interface Efficiency {
  /** All the operator's API requests in the window, by its own counter, / Jobs seen in it (as rates over the window). */
  requests_per_job: number | null;
  /** The same counted by the API server: its audit log's requests from the operator's user agent in the same window. */
  requests_per_job_audited: number | null;
  requests_audited_by: Record<string, number>;
  /** The same per purpose (or per verb when the operator does not label purposes), per Job. */
  requests_by_purpose: Record<string, number>;
  requests_by: 'purpose' | 'verb';
  /**
   * History deletes per Job in the window (audited when there is an audit log). The operator deletes
   * only Jobs the Job controller has finished: below 1 means the Job controller fell behind and
   * requests_per_job reads low by the difference (the bench runs it fast enough: KCM_FAST_LIMITS in config.ts).
   */
  history_deletes_per_job: number | null;
  requests_per_s: number | null;
  jobs_per_s: number | null;
  /** The operator's CPU seconds (/proc) in the window per 1,000 Jobs. */
  cpu_s_per_1000_jobs: number | null;
  /** The floor client's CPU per 1,000 creates (plus decoding their watch events). */
  floor_cpu_s_per_1000_creates: number | null;
  cpu_vs_floor: number | null;
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

export function efficiency(steady: SteadyResult | Failed, floor: FloorResult | Failed): Efficiency | Failed {
  if (isFailed(steady)) return failed('efficiency', new Error(`needs the steady scenario: ${steady.error}`));
  const { seconds, cpu_s: cpuS, requests } = steady.window;
  const jobsPerS = steady.seen / steady.seconds;
  const perJob = (n: number): number | null => (jobsPerS > 0 && seconds > 0 ? round3(n / seconds / jobsPerS) : null);
  const byPurpose: Record<string, number> = {};
  for (const [k, n] of Object.entries(requests.counts)) byPurpose[k] = perJob(n) ?? 0;
  const cpu = perJob(cpuS * 1000);
  const total = perJob(requests.total);
  const audited = steady.window.audited;
  const deletes = perJob(audited ? (audited.by['delete jobs'] ?? 0) : (requests.counts[requests.by === 'purpose' ? 'job_delete' : 'delete'] ?? 0));
  const auditedBy: Record<string, number> = {};
  for (const [k, n] of Object.entries(audited?.by ?? {})) auditedBy[k] = perJob(n) ?? 0;
  const floorCpu = isFailed(floor) ? null : floor.batches.cpu_s_per_1000_creates;
  return {
    requests_per_job: total,
    requests_per_job_audited: audited ? perJob(audited.total) : null,
    requests_audited_by: auditedBy,
    requests_by_purpose: byPurpose,
    requests_by: requests.by,
    history_deletes_per_job: deletes,
    requests_per_s: seconds > 0 ? round3(requests.total / seconds) : null,
    jobs_per_s: round3(jobsPerS),
    cpu_s_per_1000_jobs: cpu,
    floor_cpu_s_per_1000_creates: floorCpu,
    cpu_vs_floor: cpu === null || floorCpu === null || floorCpu <= 0 ? null : Math.round((cpu / floorCpu) * 100) / 100,
  };
}
