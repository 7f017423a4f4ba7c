// Scenario herd (issue 25): N schedules written alike, `0 * * * * *`, against N written with H,
// `H * * * * *`, on the same control plane, one after the other, each under its own operator. The
// first is a herd of N Jobs at second 0 of every minute; the second spreads the same N over the
// minute by the hash of namespace/name. Latency is watch arrival minus slot, from an independent
// watcher; the longest wait of a slot is the largest of them.
import type { Cluster } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import type { OperatorProcess } from '../../test/cluster/operator-process.js';
import { compileSchedule, hashIdentity } from '../../src/schedule/index.js';
import { drainJobs } from '../lib/job-drain.js';
import { bulkCreate, createNamespace, restFor, scjManifest, scjPath } from '../lib/kube.js';
import { load } from '../lib/machine.js';
import { finishOperator, procCpuSeconds, scrape, startLeadingOperator } from '../lib/operator.js';
import { say, sleep, sleepUntil, waitUntil } from '../lib/progress.js';
import { round2, summarize } from '../lib/stats.js';
import { type LatencySplit, type TimedJob, describeSplit, splitLatency } from '../lib/latency-split.js';
import { type OperatorFigures, operatorFigures } from './operator-figures.js';

export interface HerdSide {
  schedule: string;
  namespace: string;
  /** Adoption: operator start → every schedule has its finalizer and dry run, s. */
  adopted_s: number | null;
  /** The measured window: whole minutes from this instant. */
  window_start: string;
  expected: number;
  seen: number;
  duplicates: number;
  missed: number;
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
  /** The longest a slot waited: slot → its Job seen by the watch, the largest of all. */
  max_ms: number | null;
  /** Every Job of the window split at the API server's door (its audit log): the operator's share and the server's. */
  split: LatencySplit | null;
  /** Most schedules sharing one second of the minute (the herd), from the resolved schedules. */
  busiest_second: number;
  /** Seconds of the minute with at least one slot. */
  seconds_used: number;
  throttled_429: number;
  operator: OperatorFigures;
  load_start: number[];
  load_end: number[];
}

export interface HerdResult {
  schedules: number;
  minutes: number;
  zero: HerdSide;
  hashed: HerdSide;
  /** zero / hashed, two decimals: how much worse the herd is. */
  p99_ratio: number | null;
  max_ratio: number | null;
}

const SIDES = [
  { key: 'zero', schedule: '0 * * * * *', namespace: 'bench-herd-zero' },
  { key: 'hashed', schedule: 'H * * * * *', namespace: 'bench-herd-hashed' },
] as const;
const ADOPT_TIMEOUT_MS = 300_000;
/** After the last slot of the window: long enough for a herd drained at the client QPS. */
const GRACE_MS = 60_000;

export async function runHerd(cluster: Cluster, opts: { schedules: number; minutes: number; pods: boolean }): Promise<{ result: HerdResult; samples: { zero: number[]; hashed: number[] } }> {
  const zero = await runSide(cluster, SIDES[0], opts);
  await drainJobs(cluster.kubeconfigPath, SIDES[0].namespace, 180_000);
  const hashed = await runSide(cluster, SIDES[1], opts);
  await drainJobs(cluster.kubeconfigPath, SIDES[1].namespace, 180_000);
  const ratio = (a: number | null, b: number | null): number | null => (a === null || b === null || b <= 0 ? null : round2(a / b));
  return {
    result: { schedules: opts.schedules, minutes: opts.minutes, zero: zero.side, hashed: hashed.side, p99_ratio: ratio(zero.side.p99_ms, hashed.side.p99_ms), max_ratio: ratio(zero.side.max_ms, hashed.side.max_ms) },
    samples: { zero: zero.latencies, hashed: hashed.latencies },
  };
}

async function runSide(
  cluster: Cluster,
  side: (typeof SIDES)[number],
  opts: { schedules: number; minutes: number; pods: boolean },
): Promise<{ side: HerdSide; latencies: number[] }> {
  const NS = side.namespace;
  const rest = restFor(cluster.kubeconfigPath);
  const loadStart = load();
  await createNamespace(rest, NS);
  const names = Array.from({ length: opts.schedules }, (_, i) => `herd-${String(i).padStart(4, '0')}`);
  // Created before the operator starts, so its adoption (finalizer, dry run, status) is one phase.
  const bulk = await bulkCreate(rest, scjPath(NS), names.map((n) => scjManifest(NS, n, { schedule: side.schedule }, opts.pods)), 16);
  say(`herd: ${opts.schedules} SecondCronJobs "${side.schedule}" in ${NS} created in ${bulk.ms} ms; starting the operator`);
  const watcher = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: NS }).start();
  const t0 = performance.now();
  const op = await startLeadingOperator(cluster, NS);
  try {
    const adoptedMs = await adopted(op, opts.schedules);
    say(adoptedMs === null ? `herd: WARNING adoption not over after ${ADOPT_TIMEOUT_MS / 1000} s` : `herd: adopted in ${((adoptedMs - t0) / 1000).toFixed(1)} s`);

    const w0 = Math.ceil((Date.now() + 5_000) / 60_000) * 60_000;
    const w1 = w0 + opts.minutes * 60_000;
    await sleepUntil(w0 - 500);
    const before = await scrape(op);
    const cpu0 = procCpuSeconds(op.pid as number);
    const c0 = performance.now();
    say(`herd: measuring "${side.schedule}" slots ${new Date(w0).toISOString()} … ${new Date(w1).toISOString()}`);
    const expected = opts.schedules * opts.minutes;
    const inWindow = (slotMs: number): boolean => slotMs >= w0 && slotMs < w1;
    await sleepUntil(w1);
    await waitUntil(() => watcher.seen.filter((j) => inWindow(j.slotMs)).length >= expected, GRACE_MS, 250);
    const cpuS = procCpuSeconds(op.pid as number) - cpu0;
    const windowS = (performance.now() - c0) / 1000;
    const after = await scrape(op);

    const byKey = new Map<string, number[]>();
    const timed: TimedJob[] = [];
    for (const j of watcher.seen) {
      if (!inWindow(j.slotMs)) continue;
      const key = `${j.owner}@${j.slotMs}`;
      byKey.set(key, [...(byKey.get(key) ?? []), j.arrivedMs - j.slotMs]);
      timed.push({ namespace: j.namespace, name: j.name, dueMs: j.slotMs, arrivedMs: j.arrivedMs });
    }
    const latencies = [...byKey.values()].map((l) => Math.min(...l));
    const split = (await splitLatency(cluster.auditLogPath, timed))?.split ?? null;
    const s = summarize(latencies);
    const delta = after.since(before);
    const perSecond = secondsOfMinute(side.schedule, NS, names);
    const result: HerdSide = {
      schedule: side.schedule,
      namespace: NS,
      adopted_s: adoptedMs === null ? null : round2((adoptedMs - t0) / 1000),
      window_start: new Date(w0).toISOString(),
      expected,
      seen: byKey.size,
      duplicates: [...byKey.values()].reduce((n, l) => n + l.length - 1, 0),
      missed: expected - byKey.size,
      p50_ms: s.p50_ms,
      p90_ms: s.p90_ms,
      p99_ms: s.p99_ms,
      max_ms: s.max_ms,
      split,
      busiest_second: Math.max(...perSecond),
      seconds_used: perSecond.filter((n) => n > 0).length,
      throttled_429: delta.sum('secondcron_api_requests_total', 'code="429"'),
      operator: { ...operatorFigures(delta, after, windowS), cpu_pct: round2((cpuS / windowS) * 100) },
      load_start: loadStart,
      load_end: load(),
    };
    say(
      `herd: "${side.schedule}" seen ${result.seen}/${expected}, duplicates ${result.duplicates}; slot → watch p50 ${s.p50_ms} p99 ${s.p99_ms} max ${s.max_ms} ms; ` +
        `busiest second ${result.busiest_second} schedules, ${result.seconds_used} seconds used; operator CPU ${result.operator.cpu_pct} %`,
    );
    say(`herd: "${side.schedule}" latency split at the API server: ${describeSplit(split, 'operator')}`);
    return { side: result, latencies };
  } finally {
    watcher.stop();
    await finishOperator(op);
  }
}

/** Start → the moment every schedule had its finalizer and Job-template dry run (performance.now()), or null. */
async function adopted(op: OperatorProcess, n: number): Promise<number | null> {
  const deadline = performance.now() + ADOPT_TIMEOUT_MS;
  while (performance.now() < deadline) {
    const m = await scrape(op).catch(() => undefined);
    if (m && m.sum('secondcron_api_requests_total', 'purpose="finalizer"') >= n && m.sum('secondcron_api_requests_total', 'purpose="dry_run"') >= n) return performance.now();
    await sleep(500);
  }
  return null;
}

/** Schedules per second of the minute, from the schedules as the operator resolves them. */
function secondsOfMinute(schedule: string, namespace: string, names: readonly string[]): number[] {
  const perSecond = new Array<number>(60).fill(0);
  const at = Date.UTC(2026, 0, 1);
  for (const name of names) {
    const compiled = compileSchedule({ schedule }, at, at, hashIdentity(namespace, name));
    if (!compiled.ok) throw new Error(`herd: ${schedule} does not compile: ${compiled.message}`);
    const slot = compiled.source.next(at) as number;
    const second = new Date(slot).getUTCSeconds();
    perSecond[second] = (perSecond[second] as number) + 1;
  }
  return perSecond;
}
