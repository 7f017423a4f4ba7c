// Scenario 2 (steady) and its light twin: N schedules firing every second. Latency is what an
// independent watcher sees: watch arrival of the Job minus its secondcron.io/scheduled-at slot.
import type { Cluster } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import { bulkCreate, createNamespace, restFor, scjManifest, scjPath } from '../lib/kube.js';
import { finishOperator, procCpuSeconds, scrape, startLeadingOperator } from '../lib/operator.js';
import { say, sleepUntil, waitUntil } from '../lib/progress.js';
import { type Summary, round2, summarize } from '../lib/stats.js';
import { type OperatorFigures, operatorFigures } from './operator-figures.js';
import { type RequestCounts, requestCounts } from './request-counts.js';
import { type AuditedRequests, auditedRequests } from '../lib/audit-log.js';
import { type LatencySplit, type TimedJob, describeSplit, splitLatency } from '../lib/latency-split.js';

export interface TickingResult {
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  expected: number;
  seen: number;
  duplicates: number;
  missed: number;
  schedules: number;
  seconds: number;
  min_ms: number | null;
  mean_ms: number | null;
  operator: OperatorFigures;
  /**
   * The operator's whole cost over the window (/proc CPU, every API request it made by its own
   * counter) and, from the API server's audit log, the requests the server received from it in the
   * same window (null without an audit log).
   */
  window: { seconds: number; cpu_s: number; requests: RequestCounts; audited: AuditedRequests | null };
  /** Every measured Job's latency split at the API server's door (its audit log): the operator's share and the server's. */
  split: LatencySplit | null;
}

/** Measured / reference, two decimals; null when either is missing. */
const ratio = (measured: number | null, reference: number | null): number | null =>
  measured === null || reference === null || reference <= 0 ? null : Math.round((measured / reference) * 100) / 100;

/** p50 and p99 of a run over those of a reference distribution. */
export interface Ratios {
  p50_ratio: number | null;
  p99_ratio: number | null;
}

export function ratios(measured: Pick<Summary, 'p50_ms' | 'p99_ms'>, reference: Pick<Summary, 'p50_ms' | 'p99_ms'> | null | undefined): Ratios {
  return { p50_ratio: ratio(measured.p50_ms, reference?.p50_ms ?? null), p99_ratio: ratio(measured.p99_ms, reference?.p99_ms ?? null) };
}

export interface SteadyResult extends TickingResult {
  /** Against the floor's batches of the same run (the same shape, the API server alone). */
  vs_floor_batches: Ratios;
}

export const STEADY_NAMESPACE = 'bench-steady';
const GRACE_MS = 5_000;

/**
 * `schedules` SecondCronJobs at intervalSeconds 1 in `namespace` under one operator; after each fired
 * once, every slot of a `seconds`-long whole-second window is expected exactly once.
 */
export async function runTicking(
  cluster: Cluster,
  name: string,
  namespace: string,
  opts: { schedules: number; seconds: number; pods: boolean },
): Promise<{ result: TickingResult; samples: number[]; operatorShares: number[] }> {
  const NS = namespace;
  const rest = restFor(cluster.kubeconfigPath);
  await createNamespace(rest, NS);
  say(`${name}: starting the operator`);
  const op = await startLeadingOperator(cluster, NS);
  const watcher = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: NS }).start();
  try {
    const names = Array.from({ length: opts.schedules }, (_, i) => `tick-${String(i).padStart(4, '0')}`);
    const bulk = await bulkCreate(rest, scjPath(NS), names.map((n) => scjManifest(NS, n, { intervalSeconds: 1 }, opts.pods)), 16);
    say(`${name}: ${opts.schedules} SecondCronJobs (intervalSeconds: 1) created in ${bulk.ms} ms; waiting for each to fire once`);
    const warm = await waitUntil(() => new Set(watcher.seen.map((j) => j.owner)).size >= opts.schedules, 30_000, 200);
    if (!warm) say(`${name}: WARNING only ${new Set(watcher.seen.map((j) => j.owner)).size} of ${opts.schedules} schedules fired within 30 s`);

    const w0 = Math.ceil(Date.now() / 1000) * 1000 + 2_000;
    const w1 = w0 + opts.seconds * 1000;
    await sleepUntil(w0 - 500);
    const before = await scrape(op);
    const cpu0 = procCpuSeconds(op.pid as number);
    const t0 = performance.now();
    const wall0 = Date.now();
    say(`${name}: measuring slots ${new Date(w0).toISOString()} … ${new Date(w1).toISOString()} (${opts.seconds} s)`);
    await sleepUntil(w1 + 500);
    const cpuS = procCpuSeconds(op.pid as number) - cpu0;
    const windowS = (performance.now() - t0) / 1000;
    const wall1 = Date.now();
    const after = await scrape(op);
    await sleepUntil(w1 + GRACE_MS);
    const audited = cluster.auditLogPath ? await auditedRequests(cluster.auditLogPath, `(${op.identity ?? ''})`, wall0, wall1) : null;

    const wanted = new Set(names);
    const byKey = new Map<string, number[]>();
    /** The first Job of each slot, as latencies counts it. */
    const firstOfSlot = new Map<string, TimedJob>();
    for (const j of watcher.seen) {
      if (j.slotMs < w0 || j.slotMs >= w1 || !wanted.has(j.owner)) continue;
      const key = `${j.owner}@${j.slotMs}`;
      byKey.set(key, [...(byKey.get(key) ?? []), j.arrivedMs - j.slotMs]);
      const first = firstOfSlot.get(key);
      if (!first || j.arrivedMs < first.arrivedMs) firstOfSlot.set(key, { namespace: j.namespace, name: j.name, dueMs: j.slotMs, arrivedMs: j.arrivedMs });
    }
    const latencies = [...byKey.values()].map((l) => Math.min(...l));
    const measured = await splitLatency(cluster.auditLogPath, [...firstOfSlot.values()]);
    const split = measured?.split ?? null;
    const duplicates = [...byKey.values()].reduce((n, l) => n + l.length - 1, 0);
    const expected = opts.schedules * opts.seconds;
    const s = summarize(latencies);
    const delta = after.since(before);
    const result: TickingResult = {
      p50_ms: s.p50_ms,
      p90_ms: s.p90_ms,
      p99_ms: s.p99_ms,
      max_ms: s.max_ms,
      expected,
      seen: byKey.size,
      duplicates,
      missed: expected - byKey.size,
      schedules: opts.schedules,
      seconds: opts.seconds,
      min_ms: s.min_ms,
      mean_ms: s.mean_ms,
      operator: { ...operatorFigures(delta, after, opts.seconds + 1), cpu_pct: round2((cpuS / windowS) * 100) },
      window: { seconds: Math.round(windowS * 1000) / 1000, cpu_s: Math.round(cpuS * 100) / 100, requests: requestCounts(delta), audited },
      split,
    };
    say(`${name}: seen ${result.seen}/${expected}, duplicates ${duplicates}, missed ${result.missed}; latency p50 ${s.p50_ms} p90 ${s.p90_ms} p99 ${s.p99_ms} max ${s.max_ms} ms; operator CPU ${result.operator.cpu_pct} %, ${result.window.requests.total} API requests (its counter), ${audited?.total ?? 'n/a'} (the API server's audit log)`);
    say(`${name}: latency split at the API server: ${describeSplit(split, 'operator')}`);
    return { result, samples: latencies, operatorShares: measured?.clientMs ?? [] };
  } finally {
    watcher.stop();
    await finishOperator(op);
  }
}

/** 100 × 1 s (full): the heavy load, judged against the API server alone under the same shape. */
export async function runSteady(
  cluster: Cluster,
  opts: { schedules: number; seconds: number; pods: boolean },
  floorBatches: Summary | null,
): Promise<{ result: SteadyResult; samples: number[]; operatorShares: number[] }> {
  const { result, samples, operatorShares } = await runTicking(cluster, 'steady', STEADY_NAMESPACE, opts);
  return { result: { ...result, vs_floor_batches: ratios(result, floorBatches) }, samples, operatorShares };
}
