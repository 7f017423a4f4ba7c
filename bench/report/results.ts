// bench/results/latest.json: one object, scenario → figures, plus machine and versions. The names
// the issue fixes (floor.p50_ms, steady.missed, burst.ratio_last, …) are always present; a scenario
// that failed has them null and says why in `error`.
import type { BurstResult } from '../scenarios/burst.js';
import type { FailoverResult } from '../scenarios/failover.js';
import type { FloodResult } from '../scenarios/flood.js';
import type { FloorResult } from '../scenarios/floor.js';
import type { HerdResult } from '../scenarios/herd.js';
import type { LightResult } from '../scenarios/light.js';
import type { RoundsResult } from '../scenarios/rounds.js';
import type { ScaleResult } from '../scenarios/scale.js';
import type { SchedulerResult } from '../scenarios/scheduler.js';
import type { SteadyResult } from '../scenarios/steady.js';
import type { MachineInfo } from '../lib/machine.js';
import type { BenchConfig } from '../config.js';
import type { Efficiency } from './efficiency.js';
import type { Target } from './targets.js';

/** A scenario that did not finish: its fixed names set to null, and the reason. */
export interface Failed {
  error: string;
  [figure: string]: string | null;
}

export interface Results {
  commit: string;
  quick: boolean;
  date: string;
  duration_s: number;
  machine: MachineInfo;
  config: BenchConfig & { operator_node_options: string; operator_node_args?: string; operator_image_env?: Record<string, string> };
  floor: FloorResult | Failed;
  steady: SteadyResult | Failed;
  light: LightResult | Failed;
  rounds: RoundsResult | Failed;
  efficiency: Efficiency | Failed;
  burst: BurstResult | Failed;
  scale: ScaleResult | Failed;
  scheduler: SchedulerResult | Failed;
  failover: FailoverResult | Failed;
  herd: HerdResult | Failed;
  flood: FloodResult | Failed;
  targets: Target[];
}

export const FIXED = {
  floor: ['p50_ms', 'p99_ms'],
  steady: ['p50_ms', 'p90_ms', 'p99_ms', 'max_ms', 'expected', 'seen', 'duplicates', 'missed'],
  light: ['p50_ms', 'p99_ms', 'floor_p50_ms', 'floor_p99_ms'],
  rounds: ['rounds', 'steady', 'light'],
  efficiency: ['requests_per_job', 'requests_by_purpose', 'cpu_s_per_1000_jobs', 'floor_cpu_s_per_1000_creates'],
  burst: ['secondcron_first_ms', 'secondcron_last_ms', 'cronjob_first_ms', 'cronjob_last_ms', 'ratio_last', 'cronjob_default_qps'],
  scale: ['schedules', 'rss_mib', 'ready_s', 'idle_cpu_pct'],
  scheduler: ['p50_ms', 'p99_ms'],
  failover: ['schedules', 'takeover_ms', 'first_job_ms', 'writes_60s'],
  herd: ['schedules', 'zero', 'hashed', 'p99_ratio', 'max_ratio'],
  flood: ['schedules', 'windows', 'p50_ratio', 'p99_ratio', 'junk_answers', 'connection_outcomes', 'cpu_s_per_1000_junk'],
} as const;

export function failed(scenario: keyof typeof FIXED, err: unknown): Failed {
  const out: Failed = { error: err instanceof Error ? err.message : String(err) };
  for (const f of FIXED[scenario]) out[f] = null;
  return out;
}

export function isFailed(r: object): r is Failed {
  return 'error' in r;
}
