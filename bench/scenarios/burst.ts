// Scenario 3: N schedules due in the same instant, ours against the upstream CronJob controller
// (kube-controller-manager of the same control plane), each in its own namespace and at its own
// slot so the two bursts never overlap. Both are timed by the same kind of independent watcher:
// Job watch arrival minus the slot the controller stamped on the Job.
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
  scjManifest,
  scjPath,
} from '../lib/kube.js';
import { finishOperator, procCpuSeconds, scrape, startLeadingOperator } from '../lib/operator.js';
import type { PromSamples } from '../lib/prom-text.js';
import { say, sleep, sleepUntil, waitUntil } from '../lib/progress.js';
import { round2 } from '../lib/stats.js';
import { type CronJobAtDefaults, type CronJobAtDefaultsFailed, cronJobAtDefaultQps } from './burst-default-qps.js';
import { type BurstSide, measureUpstream, names, side } from './burst-side.js';
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
  secondcron_first_ms: number | null;
  secondcron_last_ms: number | null;
  cronjob_first_ms: number | null;
  cronjob_last_ms: number | null;
  ratio_last: number | null;
  secondcron: BurstSide;
  cronjob: BurstSide;
  limits: BurstLimits;
  /** The CronJob side again, kube-controller-manager at its upstream default client limits. */
  cronjob_default_qps: CronJobAtDefaults | CronJobAtDefaultsFailed;
}

const NS_OURS = 'bench-burst-secondcron';
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

/** Max of the operator's queue-depth and in-flight gauges, scraped every 250 ms while `active()` (each scrape costs the operator a little). */
async function sampleQueue(op: OperatorProcess, active: () => boolean): Promise<{ depth: number; inflight: number }> {
  const max = { depth: 0, inflight: 0 };
  while (active()) {
    try {
      const m = await scrape(op);
      max.depth = Math.max(max.depth, m.get('secondcron_job_create_queue_depth') ?? 0);
      max.inflight = Math.max(max.inflight, m.get('secondcron_job_create_inflight') ?? 0);
    } catch {
      // a missed sample is not a result
    }
    await sleep(250);
  }
  return max;
}

interface OursMeasured {
  side: { side: BurstSide; latencies: number[] };
  busyBeforeSlot: boolean;
  maxQueue: { depth: number; inflight: number };
  delta: PromSamples;
  after: PromSamples;
  windowS: number;
  cpuPct: number | null;
  done: boolean;
}

/** Creates our N schedules for one second `leadMs` ahead and measures that slot. */
async function measureOurs(rest: KubeRest, op: OperatorProcess, ours: JobWatcher, n: number, pods: boolean, leadMs: number): Promise<OursMeasured> {
  const slot = Math.ceil(Date.now() / 1000) * 1000 + leadMs;
  const at = new Date(slot);
  const schedule = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
  const b = await bulkCreate(rest, scjPath(NS_OURS), names('burst', n).map((name) => scjManifest(NS_OURS, name, { schedule }, pods)), 16);
  say(`burst: ${n} SecondCronJobs "${schedule}" created in ${b.ms} ms (slot ${at.toISOString()}, in ${((slot - Date.now()) / 1000).toFixed(1)} s)`);

  // Was the operator still busy adopting the new schedules (finalizer, dry run, status) just before
  // the slot? Writes only: the Lease renewal (get + update) goes on all the time.
  const writesOf = (m: PromSamples): number => m.sum('secondcron_api_requests_total', 'verb="patch"') + m.sum('secondcron_api_requests_total', 'verb="create"');
  await sleepUntil(slot - 1_000);
  const writesBefore = writesOf(await scrape(op));
  await sleepUntil(slot - 200);
  const baseline = await scrape(op);
  const busyBeforeSlot = writesOf(baseline) > writesBefore;
  if (busyBeforeSlot) say('burst: WARNING the operator was still adopting the new schedules at the slot');
  const cpu0 = procCpuSeconds(op.pid as number);
  let sampling = true;
  const queue = sampleQueue(op, () => sampling);
  const done = await waitUntil(() => ours.seen.filter((j) => j.slotMs === slot).length >= n, Math.max(0, slot - Date.now()) + 60_000, 50);
  sampling = false;
  const maxQueue = await queue;
  const after = await scrape(op);
  const windowS = Math.max(0.2, (Date.now() - (slot - 200)) / 1000);
  const cpuPct = round2(((procCpuSeconds(op.pid as number) - cpu0) / windowS) * 100);
  const o = side(ours.seen, n, slot);
  say(`burst: secondcron ${o.side.seen}/${n} Jobs, first ${o.side.first_ms} ms, p50 ${o.side.p50_ms} ms, p99 ${o.side.p99_ms} ms, last ${o.side.last_ms} ms after the slot${done ? '' : ' (TIMED OUT)'}`);
  return { side: o, busyBeforeSlot, maxQueue, delta: after.since(baseline), after, windowS, cpuPct, done };
}

type BurstOpts = { schedules: number; pods: boolean; floorConcurrentP50Ms: number | null; timing: BurstTiming };

export async function runBurst(
  cluster: Cluster,
  opts: BurstOpts,
): Promise<{ result: BurstResult; samples: { secondcron: number[]; cronjob: number[]; cronjobDefaultQps: number[] } }> {
  const both = await runBothBursts(cluster, opts);
  const atDefaults = await cronJobAtDefaultQps(cluster, { ...opts, leadMs: opts.timing.cronJobLeadMs, drainFirst: NS_UPSTREAM, oursLastMs: both.result.secondcron_last_ms });
  return {
    result: { ...both.result, cronjob_default_qps: atDefaults.result },
    samples: { ...both.samples, cronjobDefaultQps: atDefaults.latencies },
  };
}

async function runBothBursts(
  cluster: Cluster,
  opts: BurstOpts,
): Promise<{ result: Omit<BurstResult, 'cronjob_default_qps'>; samples: { secondcron: number[]; cronjob: number[] } }> {
  const rest = restFor(cluster.kubeconfigPath);
  const defaults = parseConfig([], {});
  const n = opts.schedules;
  const t = opts.timing;
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
    // The CronJobs first: their slot can only be a minute boundary.
    const upstreamSlot = Math.ceil((Date.now() + t.cronJobLeadMs) / 60_000) * 60_000;
    const up = new Date(upstreamSlot);
    const cjSchedule = `${up.getUTCMinutes()} ${up.getUTCHours()} * * *`;
    const b = await bulkCreate(rest, cronJobPath(NS_UPSTREAM), names('cron', n).map((name) => cronJobManifest(NS_UPSTREAM, name, cjSchedule, opts.pods)), 16);
    say(`burst: ${n} CronJobs "${cjSchedule}" created in ${b.ms} ms (slot ${up.toISOString()}, in ${((upstreamSlot - Date.now()) / 1000).toFixed(1)} s)`);

    // Ours before theirs if our set-up, slot and burst fit before it; else after theirs is over, so
    // that neither burst (nor our set-up writes) runs during the other.
    let o: OursMeasured;
    let c: { side: BurstSide; latencies: number[] };
    if (Math.ceil(Date.now() / 1000) * 1000 + t.scjLeadMs + t.separationMs <= upstreamSlot) {
      o = await measureOurs(rest, op, ours, n, opts.pods, t.scjLeadMs);
      c = await measureUpstream(upstream, n, upstreamSlot);
    } else {
      c = await measureUpstream(upstream, n, upstreamSlot);
      o = await measureOurs(rest, op, ours, n, opts.pods, t.scjLeadMs);
    }

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
      busy_before_slot: o.busyBeforeSlot,
      operator: { ...operatorFigures(o.delta, o.after, o.windowS), cpu_pct: o.cpuPct },
    };
    const ratio = o.side.side.last_ms && c.side.last_ms ? round2(c.side.last_ms / o.side.side.last_ms) : null;
    return {
      result: {
        secondcron_first_ms: o.side.side.first_ms,
        secondcron_last_ms: o.side.side.last_ms,
        cronjob_first_ms: c.side.first_ms,
        cronjob_last_ms: c.side.last_ms,
        ratio_last: ratio,
        secondcron: o.side.side,
        cronjob: c.side,
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
