// Scenario 3: N schedules due in the same instant, ours against the upstream CronJob controller
// (kube-controller-manager of the same control plane), each in its own namespace and at its own
// slot so the two bursts never overlap. Both are timed by the same kind of independent watcher:
// Job watch arrival minus the slot the controller stamped on the Job. ROUNDS rounds, each with
// new schedules and after the Job controller finished the previous round's Jobs; the figures are
// the median round's (by its last Job), and no ratio is given when any round of a side timed out.
// Then two more rows, ROUNDS rounds each (issue 36): our side with the operator at kube-controller-
// manager's client limits (like for like), and the CronJob side at kcm's upstream defaults.
import { parseConfig } from '../../src/config.js';
import type { Cluster } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import type { OperatorProcess } from '../../test/cluster/operator-process.js';
import type { KubeRest } from '../../src/kube/rest.js';
import {
  CRONJOB_LABEL,
  CRONJOB_SLOT_ANNOTATION,
  bulkCreate,
  createNamespace,
  cronJobManifest,
  cronJobPath,
  restFor,
} from '../lib/kube.js';
import { finishOperator, startLeadingOperator } from '../lib/operator.js';
import { say } from '../lib/progress.js';
import { drainJobs } from '../lib/job-drain.js';
import { round2 } from '../lib/stats.js';
import { type LatencySplit, describeSplit, splitLatency } from '../lib/latency-split.js';
import { type CronJobAtDefaults, type CronJobAtDefaultsFailed, cronJobAtDefaultQps } from './burst-default-qps.js';
import { type BurstSide, measureUpstream, names } from './burst-side.js';
import { type OursMeasured, measureOurs } from './burst-ours.js';
import { type OursAtSameLimits, type OursAtSameLimitsFailed, oursAtKcmLimits } from './burst-same-limits.js';
import { type OperatorFigures, operatorFigures } from './operator-figures.js';

export interface BurstLimits {
  max_concurrent_creates: number;
  qps: number;
  burst: number;
  /** The earliest the last create can be sent under the client-side token bucket alone. */
  token_bucket_floor_ms: number;
  /** N / concurrency × the floor's concurrent round-trip p50: the concurrency limit alone. */
  concurrency_floor_ms: number | null;
  max_queue_depth: number;
  max_inflight: number;
  throttled_429: number;
  create_errors: number;
  /** The operator was still writing start-up finalizers/status/dry-runs in the second before the slot. */
  busy_before_slot: boolean;
  operator: OperatorFigures;
}

export interface BurstResult {
  /** The median round's, by its last Job. */
  secondcron_first_ms: number | null;
  secondcron_last_ms: number | null;
  cronjob_first_ms: number | null;
  cronjob_last_ms: number | null;
  /** Median of the CronJob rounds' last / median of ours; null when a round of either side timed out. */
  ratio_last: number | null;
  secondcron: BurstSide;
  cronjob: BurstSide;
  /**
   * The median round's Jobs split at the API server's door (its audit log): our share = the create
   * received − the slot (its max: the last create received, against limits.token_bucket_floor_ms),
   * the server's = watch arrival − received. The CronJob side's creates are not audited.
   */
  secondcron_split: LatencySplit | null;
  /** Every round, in order; `timed_out` names the sides that did not see all their Jobs in some round. */
  rounds: { secondcron: BurstSide[]; cronjob: BurstSide[]; secondcron_split: (LatencySplit | null)[] };
  timed_out: string[];
  limits: BurstLimits;
  /** The CronJob side again, kube-controller-manager at its upstream default client limits (against our main rounds, each side at its defaults). */
  cronjob_default_qps: CronJobAtDefaults | CronJobAtDefaultsFailed;
  /** Our side again with the operator at kube-controller-manager's limits of this cluster: the like-for-like ratio (issue 36). */
  ours_at_kcm_limits: OursAtSameLimits | OursAtSameLimitsFailed;
}

const NS_OURS = 'bench-burst-secondcron';
/** Samples per side: the median of 3 instead of one sample (past single samples ranged 5.97×–13.44×). */
const ROUNDS = 3;
const NS_UPSTREAM = 'bench-burst-cronjob';

/**
 * How far ahead the slots are set: long enough for the schedules to be created and adopted (our
 * operator writes a finalizer, a status and a dry run for each; the CronJob controller syncs each),
 * short enough not to waste the run. Our burst goes first only if it ends `separation` before the
 * upstream slot; otherwise it is set up after the upstream burst is over.
 */
export interface BurstTiming {
  scjLeadMs: number;
  cronJobLeadMs: number;
  separationMs: number;
}

export const BURST_TIMING: { full: BurstTiming; quick: BurstTiming } = {
  full: { scjLeadMs: 40_000, cronJobLeadMs: 20_000, separationMs: 15_000 },
  quick: { scjLeadMs: 15_000, cronJobLeadMs: 12_000, separationMs: 8_000 },
};

/** One round: N new CronJobs on the next minute slot, N new SecondCronJobs before it if they fit, else after it. */
async function oneRound(
  rest: KubeRest,
  op: OperatorProcess,
  ours: JobWatcher,
  upstream: JobWatcher,
  opts: BurstOpts,
  prefix: string,
): Promise<{ o: OursMeasured; c: { side: BurstSide; latencies: number[]; done: boolean } }> {
  const n = opts.schedules;
  const t = opts.timing;
  // The CronJobs first: their slot can only be a minute boundary.
  const upstreamSlot = Math.ceil((Date.now() + t.cronJobLeadMs) / 60_000) * 60_000;
  const up = new Date(upstreamSlot);
  const cjSchedule = `${up.getUTCMinutes()} ${up.getUTCHours()} * * *`;
  const b = await bulkCreate(rest, cronJobPath(NS_UPSTREAM), names(`cron-${prefix}`, n).map((name) => cronJobManifest(NS_UPSTREAM, name, cjSchedule, opts.pods)), 16);
  say(`burst: ${n} CronJobs "${cjSchedule}" created in ${b.ms} ms (slot ${up.toISOString()}, in ${((upstreamSlot - Date.now()) / 1000).toFixed(1)} s)`);
  // Ours before theirs if our set-up, slot and burst fit before it; else after theirs is over, so
  // that neither burst (nor our set-up writes) runs during the other.
  if (Math.ceil(Date.now() / 1000) * 1000 + t.scjLeadMs + t.separationMs <= upstreamSlot) {
    const o = await measureOurs(rest, op, ours, NS_OURS, n, opts.pods, t.scjLeadMs, `burst-${prefix}`);
    return { o, c: await measureUpstream(upstream, n, upstreamSlot) };
  }
  const c = await measureUpstream(upstream, n, upstreamSlot);
  return { o: await measureOurs(rest, op, ours, NS_OURS, n, opts.pods, t.scjLeadMs, `burst-${prefix}`), c };
}

type BurstOpts = { schedules: number; pods: boolean; floorConcurrentP50Ms: number | null; timing: BurstTiming };

export async function runBurst(
  cluster: Cluster,
  opts: BurstOpts,
): Promise<{ result: BurstResult; samples: { secondcron: number[]; cronjob: number[]; cronjobDefaultQps: number[] } }> {
  const both = await runBothBursts(cluster, opts);
  await drainJobs(cluster.kubeconfigPath, NS_OURS, 120_000);
  await drainJobs(cluster.kubeconfigPath, NS_UPSTREAM, 120_000);
  const sameLimits = await oursAtKcmLimits(cluster, {
    ...opts,
    leadMs: opts.timing.scjLeadMs,
    rounds: ROUNDS,
    cronJobLastMs: both.result.timed_out.includes('cronjob') ? null : both.result.cronjob_last_ms,
  });
  const atDefaults = await cronJobAtDefaultQps(cluster, { ...opts, leadMs: opts.timing.cronJobLeadMs, rounds: ROUNDS, drainFirst: NS_UPSTREAM, oursLastMs: both.result.timed_out.includes('secondcron') ? null : both.result.secondcron_last_ms });
  return {
    result: { ...both.result, cronjob_default_qps: atDefaults.result, ours_at_kcm_limits: sameLimits },
    samples: { ...both.samples, cronjobDefaultQps: atDefaults.latencies },
  };
}

async function runBothBursts(
  cluster: Cluster,
  opts: BurstOpts,
): Promise<{ result: Omit<BurstResult, 'cronjob_default_qps' | 'ours_at_kcm_limits'>; samples: { secondcron: number[]; cronjob: number[] } }> {
  const rest = restFor(cluster.kubeconfigPath);
  const defaults = parseConfig([], {});
  const n = opts.schedules;
  await createNamespace(rest, NS_OURS);
  await createNamespace(rest, NS_UPSTREAM);
  say('burst: starting the operator (default --max-concurrent-creates, --qps, --burst)');
  const op = await startLeadingOperator(cluster, NS_OURS);
  const ours = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: NS_OURS }).start();
  const upstream = await new JobWatcher({
    kubeconfigPath: cluster.kubeconfigPath,
    namespace: NS_UPSTREAM,
    ownerLabel: CRONJOB_LABEL,
    slotAnnotation: CRONJOB_SLOT_ANNOTATION,
  }).start();
  try {
    const rounds: { o: OursMeasured; c: { side: BurstSide; latencies: number[]; done: boolean } }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      if (round > 1) {
        // The previous round's Jobs finished first, so that no backlog runs into this round.
        await drainJobs(cluster.kubeconfigPath, NS_OURS, 120_000);
        await drainJobs(cluster.kubeconfigPath, NS_UPSTREAM, 120_000);
      }
      say(`burst: round ${round} of ${ROUNDS}`);
      rounds.push(await oneRound(rest, op, ours, upstream, opts, `r${round}`));
    }
    const median = <T>(items: T[], key: (t: T) => number | null): T => {
      const sorted = [...items].sort((a, b) => (key(a) ?? Infinity) - (key(b) ?? Infinity));
      return sorted[Math.floor((sorted.length - 1) / 2)] as T;
    };
    const o = median(rounds, (r) => r.o.side.side.last_ms).o;
    const splits = await Promise.all(
      rounds.map((r) => {
        const slotMs = Date.parse(r.o.side.side.slot);
        return splitLatency(cluster.auditLogPath, ours.seen.filter((j) => j.slotMs === slotMs).map((j) => ({ namespace: j.namespace, name: j.name, dueMs: slotMs, arrivedMs: j.arrivedMs })));
      }),
    );
    const oSplit = splits[rounds.findIndex((r) => r.o === o)]?.split ?? null;
    say(`burst: secondcron latency split at the API server (median round): ${describeSplit(oSplit, 'operator')}; token-bucket floor ${Math.round((Math.max(0, n - defaults.burst) / defaults.qps) * 1000)} ms`);
    const c = median(rounds, (r) => r.c.side.last_ms).c;
    const timedOut = [...(rounds.some((r) => !r.o.done) ? ['secondcron'] : []), ...(rounds.some((r) => !r.c.done) ? ['cronjob'] : [])];

    const limits: BurstLimits = {
      max_concurrent_creates: defaults.maxConcurrentCreates,
      qps: defaults.qps,
      burst: defaults.burst,
      token_bucket_floor_ms: Math.round((Math.max(0, n - defaults.burst) / defaults.qps) * 1000),
      concurrency_floor_ms: opts.floorConcurrentP50Ms === null ? null : Math.round((n / defaults.maxConcurrentCreates) * opts.floorConcurrentP50Ms),
      max_queue_depth: o.maxQueue.depth,
      max_inflight: o.maxQueue.inflight,
      throttled_429: o.delta.sum('secondcron_api_requests_total', 'code="429"'),
      create_errors: o.delta.sum('secondcron_jobs_created_total', 'result="error"'),
      busy_before_slot: rounds.some((r) => r.o.busyBeforeSlot),
      operator: { ...operatorFigures(o.delta, o.after, o.windowS), cpu_pct: o.cpuPct },
    };
    const ratio = timedOut.length === 0 && o.side.side.last_ms && c.side.last_ms ? round2(c.side.last_ms / o.side.side.last_ms) : null;
    return {
      result: {
        secondcron_first_ms: o.side.side.first_ms,
        secondcron_last_ms: o.side.side.last_ms,
        cronjob_first_ms: c.side.first_ms,
        cronjob_last_ms: c.side.last_ms,
        ratio_last: ratio,
        secondcron: o.side.side,
        cronjob: c.side,
        secondcron_split: oSplit,
        rounds: { secondcron: rounds.map((r) => r.o.side.side), cronjob: rounds.map((r) => r.c.side), secondcron_split: splits.map((m) => m?.split ?? null) },
        timed_out: timedOut,
        limits,
      },
      samples: { secondcron: o.side.latencies, cronjob: c.latencies },
    };
  } finally {
    ours.stop();
    upstream.stop();
    await finishOperator(op);
  }
}
