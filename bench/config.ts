// Sizes of each scenario: the full run (the figures) and BENCH_QUICK (about 6 minutes).
import type { ClientLimits } from '../test/cluster/cluster.js';

/**
 * kube-controller-manager's client limits while 100 Jobs/s run (floor, steady, light, the soak): at the
 * test cluster's 100/200 its Job controller finished ~40 of the 100 Jobs a second (issue 14), so
 * history deletions lagged and requests per Job read low. Burst (the CronJob comparison) runs at
 * 100/200 as before.
 */
export const KCM_FAST_LIMITS: ClientLimits = { qps: 400, burst: 800 };
/**
 * The soak's: an hour at 100 Jobs/s. With upstream's 5 Job workers the Job controller finished ~54
 * of the 100 Jobs a second (first soak attempt, 2026-12-03 19:42: 44,308 Jobs unfinished at 16 min),
 * so nothing reached the history limit and every cache grew with the backlog.
 */
export const SOAK_KCM_LIMITS: ClientLimits = { ...KCM_FAST_LIMITS, jobSyncs: 25 };

/**
 * GOGC of the test control plane's Go processes (etcd, kube-apiserver, kube-controller-manager, …) in
 * the bench and the soak: BENCH_CONTROL_PLANE_GOGC, else 400 (100 is Go's default). At 100 Jobs/s
 * the API server carries ~510 writes a second (the operator's creates, history deletes and status
 * patches, the Job controller's two status updates and one Event per Job) and at Go's default it used
 * a whole core of this machine's two (load 5–6): in spells a schedule's next slot came due before
 * its create was answered, so the operator ran only the latest due slot (DESIGN §3) and the soak
 * failed on skipped slots. At 400 a 12-minute soak skipped 0 slots (325 at the default) and the
 * 60-minute soak 0.23 % (0.94 % at the default), the API server at 0.87 of a core on average
 * (bench/README.md, "Issue 24, fifth round"): the control plane is the environment, tuned like etcd's
 * --unsafe-no-fsync, not the thing measured.
 */
export function controlPlaneGoGC(env: NodeJS.ProcessEnv): number {
  const v = Number(env.BENCH_CONTROL_PLANE_GOGC ?? 400);
  if (!Number.isInteger(v) || v < 1) throw new Error(`BENCH_CONTROL_PLANE_GOGC must be a whole number >= 1, not ${env.BENCH_CONTROL_PLANE_GOGC}`);
  return v;
}
export interface BenchConfig {
  quick: boolean;
  /** Jobs start one real (kwok) pod each instead of completing at once without one (BENCH_PODS=1). */
  pods: boolean;
  floor: { sequential: number; concurrent: number; batches: number };
  steady: { schedules: number; seconds: number };
  light: { schedules: number; seconds: number };
  burst: { schedules: number };
  scale: { schedules: number; idleSeconds: number; timeoutS: number };
  scheduler: { entries: number; seconds: number; alignedSeconds: number };
  /** windowS: how long the new leader's writes are counted (the 60 s; 30 s when quick). */
  failover: { schedules: number; windowS: number; settleTimeoutS: number };
  /** `0 * * * * *` vs `H * * * * *`, each side measured over `minutes` whole minutes (issue 25). */
  herd: { schedules: number; minutes: number };
  /** Issue 36: operator and floor client in alternating rounds, `seconds` each side, steady's and light's sizes. */
  rounds: { rounds: number; seconds: number };
  /** Issues 21 and 34: rounds of quiet, junk-token, connection-flood and decoy windows (bench/scenarios/flood.ts). */
  flood: { schedules: number; rounds: number; windowSeconds: number; junkPerWindow: number; junkConnections: number; connectionAttempts: number; flooderNice: number };
}

export function benchConfig(env: NodeJS.ProcessEnv): BenchConfig {
  return atScale(sizes(env), env);
}

/**
 * BENCH_SCALE=n: the scale and failover scenarios at n schedules (issue 36: 100,000; not in the default
 * run), their start-up timeouts grown with n: the start-up writes (a finalizer, a dry run and a status
 * per schedule) went at ~350 a second at 10,000 on this machine and at 260-390 at 100,000 (the API
 * server then used more than a core of the two; 771.68 s on a quiet machine), so 100,000 take 13-20
 * minutes: one second per 50 schedules leaves room.
 */
function atScale(cfg: BenchConfig, env: NodeJS.ProcessEnv): BenchConfig {
  if (env.BENCH_SCALE === undefined || env.BENCH_SCALE === '') return cfg;
  const n = Number(env.BENCH_SCALE);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_SCALE must be a whole number of schedules >= 1, not ${env.BENCH_SCALE}`);
  const timeoutS = Math.max(cfg.scale.timeoutS, Math.ceil(n / 50));
  return {
    ...cfg,
    scale: { ...cfg.scale, schedules: n, timeoutS },
    failover: { ...cfg.failover, schedules: n, settleTimeoutS: Math.max(cfg.failover.settleTimeoutS, timeoutS) },
  };
}

function sizes(env: NodeJS.ProcessEnv): BenchConfig {
  const quick = env.BENCH_QUICK !== undefined && env.BENCH_QUICK !== '' && env.BENCH_QUICK !== '0';
  const pods = env.BENCH_PODS === '1';
  return quick
    ? {
        quick,
        pods,
        floor: { sequential: 200, concurrent: 400, batches: 10 },
        steady: { schedules: 20, seconds: 20 },
        light: { schedules: 10, seconds: 20 },
        burst: { schedules: 100 },
        scale: { schedules: 1_000, idleSeconds: 15, timeoutS: 30 },
        scheduler: { entries: 1_000, seconds: 10, alignedSeconds: 3 },
        failover: { schedules: 1_000, windowS: 30, settleTimeoutS: 90 },
        herd: { schedules: 200, minutes: 1 },
        rounds: { rounds: 4, seconds: 10 },
        flood: { schedules: 20, rounds: 4, windowSeconds: 5, junkPerWindow: 2_500, junkConnections: 50, connectionAttempts: 2_500, flooderNice: floodNice(env) },
      }
    : {
        quick,
        pods,
        floor: { sequential: 1_000, concurrent: 2_000, batches: 30 },
        steady: { schedules: 100, seconds: 60 },
        light: { schedules: 10, seconds: 60 },
        burst: { schedules: 500 },
        scale: { schedules: 10_000, idleSeconds: 60, timeoutS: 300 },
        scheduler: { entries: 1_000, seconds: 30, alignedSeconds: 10 },
        failover: { schedules: 10_000, windowS: 60, settleTimeoutS: 300 },
        herd: { schedules: 2_000, minutes: 1 },
        rounds: { rounds: 4, seconds: 30 },
        flood: { schedules: 20, rounds: 4, windowSeconds: 20, junkPerWindow: 10_000, junkConnections: 50, connectionAttempts: 10_000, flooderNice: floodNice(env) },
      };
}

/** The flood scenario's flooding process niceness: BENCH_FLOOD_NICE, else 0 (it competes with everything as it is). */
function floodNice(env: NodeJS.ProcessEnv): number {
  const v = Number(env.BENCH_FLOOD_NICE ?? 0);
  if (!Number.isInteger(v) || v < 0 || v > 19) throw new Error(`BENCH_FLOOD_NICE must be a whole number 0–19, not ${env.BENCH_FLOOD_NICE}`);
  return v;
}
