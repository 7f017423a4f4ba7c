// Scenario flood (issues 21 and 34): does what a pod can send to the operator's ports move its
// trigger latency? N SecondCronJobs at intervalSeconds 1 under one operator with --metrics-secure
// (its own self-signed certificate; a TokenReview and a SubjectAccessReview per token, at most 4 at
// a time, the rest answered 503). Rounds of four windows of the same length:
// - quiet;
// - junk: keep-alive connections send distinct junk bearer tokens to GET /metrics, spread evenly;
// - connections: connection attempts spread evenly over both ports, held silent, after a TLS
//   handshake, or after a request's first line (bench/lib/connection-flood.ts), the health port
//   probed once a second as the kubelet does;
// - decoy, the control: the junk of a junk window on bench/lib/decoy-server.ts, a TLS port in a
//   process of its own that refuses everything with 401 and asks no one — what the flood costs this
//   machine while the operator sees none of it.
// The order rotates every round (each kind takes each place once in four rounds), so drift on a
// noisy machine falls on every kind; 5 s between windows are not measured. Judged on the operator's own share of each Job's latency: its
// slot → the API server's requestReceivedTimestamp of its create (the audit log,
// bench/lib/latency-split.ts), per round against the same round's quiet window, the median of those
// ratios (issue 34). Slot → watch arrival (JobWatcher, as steady) is kept beside it. The flood comes
// from a process of its own (bench/lib/flooder.ts), not the one stamping arrivals.
import type { Cluster } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import type { ConnectionOutcome } from '../lib/connection-flood.js';
import { DecoyServer } from '../lib/decoy-server.js';
import { Flooder } from '../lib/flooder.js';
import { bulkCreate, createNamespace, restFor, scjManifest, scjPath } from '../lib/kube.js';
import { auditedJobCreates } from '../lib/latency-split.js';
import { finishOperator, makeOperator, procCpuSeconds } from '../lib/operator.js';
import { say, sleepUntil, waitUntil } from '../lib/progress.js';
import { type RoundRatios, type Summary, round2, roundRatios, summarize } from '../lib/stats.js';

export const FLOOD_NAMESPACE = 'bench-flood';

const KINDS = ['quiet', 'junk', 'decoy', 'connections'] as const;
export type WindowKind = (typeof KINDS)[number];
type FloodKind = Exclude<WindowKind, 'quiet'>;
const FLOODS: readonly FloodKind[] = ['junk', 'connections', 'decoy'];

export interface WindowFigures {
  /** Slot → the API server received the create (its audit log): the operator's share. */
  operator_share: Summary;
  /** Slot → the watcher saw the Job. */
  slot_to_watch: Summary;
  /** The operator's CPU over these windows (% of one core, /proc). */
  operator_cpu_pct: number;
}

export interface FloodResult {
  schedules: number;
  rounds: number;
  window_s: number;
  /** Junk requests per junk (and decoy) window, and the keep-alive connections they share. */
  junk_per_window: number;
  junk_connections: number;
  /** Connection attempts per connections window. */
  connection_attempts: number;
  windows: Record<WindowKind, WindowFigures>;
  /** Operator-share p99 ratios to quiet, per round and their median (the issue's "median of ratios"). */
  p99_ratio: Record<FloodKind, RoundRatios>;
  p50_ratio: Record<FloodKind, RoundRatios>;
  /** The operator's answers to the junk, by status (401: reviewed and refused; 503: over the review cap). */
  junk_answers: Record<string, number>;
  /** The decoy's (all 401 unless it failed). */
  decoy_answers: Record<string, number>;
  /** What each connections window did, in order. */
  connection_outcomes: ConnectionOutcome[];
  /**
   * Operator CPU seconds per 1,000 junk requests: (CPU in the junk windows − CPU in the quiet
   * windows, both from /proc) ÷ junk requests sent, × 1,000. Computed, not a counter.
   */
  cpu_s_per_1000_junk: number | null;
  /** The decoy's CPU over the decoy windows, and the flooding process's over all flood windows (% of one core). */
  decoy_cpu_pct: number;
  flooder_cpu_pct: number;
  flooder_nice: number;
  /** Slots of the measured windows, one Job each expected; counted from the watcher and the audit log. */
  expected: number;
  seen: number;
  duplicates: number;
  missed: number;
  /** Jobs the watcher saw without a 201 create in the audit log (0 unless the log is incomplete). */
  unaudited: number;
}

interface Window {
  round: number;
  kind: WindowKind;
  from: number;
  to: number;
}

export interface FloodOptions {
  schedules: number;
  rounds: number;
  windowSeconds: number;
  junkPerWindow: number;
  junkConnections: number;
  connectionAttempts: number;
  flooderNice: number;
  pods: boolean;
}

/**
 * Unmeasured time between two windows. Without it a quiet window right after a connection flood
 * carried the flood's aftermath (the sockets it left closed, their garbage collected): in the first
 * run the quiet windows had the worst p99 of all four kinds (52 ms against 23–26 ms), and every
 * flood "improved" on quiet.
 */
const GAP_MS = 5_000;

/** Round r takes the kinds rotated by r: over four rounds each kind is in each place once. */
function floodWindows(start: number, rounds: number, windowMs: number): Window[] {
  const out: Window[] = [];
  for (let r = 0; r < rounds; r++) {
    KINDS.forEach((_, i) => {
      const from = start + (r * KINDS.length + i) * (windowMs + GAP_MS);
      out.push({ round: r, kind: KINDS[(i + r) % KINDS.length] as WindowKind, from, to: from + windowMs });
    });
  }
  return out;
}

export async function runFlood(cluster: Cluster, opts: FloodOptions): Promise<{ result: FloodResult; samples: Record<WindowKind, number[]> }> {
  if (!cluster.auditLogPath) throw new Error('flood: the control plane keeps no audit log; the operator share is read from it');
  const rest = restFor(cluster.kubeconfigPath);
  await createNamespace(rest, FLOOD_NAMESPACE);
  const op = makeOperator(cluster, FLOOD_NAMESPACE, `bench-${FLOOD_NAMESPACE}`, { metricsSecure: true });
  await op.start();
  await op.ready(60_000);
  const watcher = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: FLOOD_NAMESPACE }).start();
  const decoy = await DecoyServer.start();
  const flooder = Flooder.start(opts.flooderNice);
  try {
    const names = Array.from({ length: opts.schedules }, (_, i) => `tick-${String(i).padStart(3, '0')}`);
    await bulkCreate(rest, scjPath(FLOOD_NAMESPACE), names.map((n) => scjManifest(FLOOD_NAMESPACE, n, { intervalSeconds: 1 }, opts.pods)), 16);
    const warm = await waitUntil(() => new Set(watcher.seen.map((j) => j.owner)).size >= opts.schedules, 60_000, 200);
    if (!warm) throw new Error(`only ${new Set(watcher.seen.map((j) => j.owner)).size} of ${opts.schedules} schedules fired within 60 s`);

    const windowMs = opts.windowSeconds * 1000;
    const windows = floodWindows(Math.ceil(Date.now() / 1000) * 1000 + 2_000, opts.rounds, windowMs);
    say(
      `flood: ${opts.rounds} rounds of four ${opts.windowSeconds} s windows (quiet; ${opts.junkPerWindow} junk tokens over ${opts.junkConnections} connections; ` +
        `${opts.connectionAttempts} connection attempts on both ports; the junk on a decoy), order rotated each round`,
    );
    if (op.pid === undefined || decoy.pid === undefined) throw new Error('flood: the operator or the decoy has no pid');
    const operatorCpu = cpuPerKind(op.pid, windows);
    const decoyCpu = cpuPerKind(decoy.pid, windows);
    // Handled where they are awaited; a process gone mid-flood must not crash the bench first.
    operatorCpu.catch(() => {});
    decoyCpu.catch(() => {});
    const answers = { junk: new Map<string, number>(), decoy: new Map<string, number>() };
    const outcomes: ConnectionOutcome[] = [];
    let flooderCpuMs = 0;
    for (const w of windows) {
      if (w.kind === 'quiet') continue;
      if (w.kind === 'connections') {
        const o = await flooder.connections({ host: '127.0.0.1', metricsPort: op.metricsPort, healthPort: op.healthPort, fromMs: w.from, windowMs, attempts: opts.connectionAttempts });
        outcomes.push(o);
        flooderCpuMs += o.cpuMs;
        continue;
      }
      const port = w.kind === 'junk' ? op.metricsPort : decoy.port;
      const sent = await flooder.junk({ url: `https://127.0.0.1:${port}/metrics`, fromMs: w.from, windowMs, requests: opts.junkPerWindow, connections: opts.junkConnections });
      const tally = answers[w.kind];
      for (const [status, n] of Object.entries(sent.answers)) tally.set(status, (tally.get(status) ?? 0) + n);
      flooderCpuMs += sent.cpuMs;
    }
    const cpuPct = await operatorCpu;
    const decoyCpuPct = await decoyCpu;
    // Every slot of the last window has had time to be created, audited and seen.
    await sleepUntil((windows.at(-1) as Window).to + 5_000);

    const windowOf = (slotMs: number): Window | undefined => windows.find((w) => slotMs >= w.from && slotMs < w.to);
    const owners = new Set(names);
    const received = await auditedJobCreates(cluster.auditLogPath, new Set([FLOOD_NAMESPACE]));
    /** The first Job seen of each (schedule, slot): its window, slot → watch, and operator share. */
    const firstOfSlot = new Map<string, { w: Window; watchMs: number; shareMs: number | undefined }>();
    let duplicates = 0;
    for (const j of watcher.seen) {
      const w = windowOf(j.slotMs);
      if (!w || !owners.has(j.owner)) continue;
      const key = `${j.owner}@${j.slotMs}`;
      const at = received.get(`${j.namespace}/${j.name}`);
      const prev = firstOfSlot.get(key);
      if (prev) duplicates++;
      if (!prev || j.arrivedMs - j.slotMs < prev.watchMs) firstOfSlot.set(key, { w, watchMs: j.arrivedMs - j.slotMs, shareMs: at === undefined ? undefined : at - j.slotMs });
    }
    const slots = [...firstOfSlot.values()];
    const shares = (pick: (w: Window) => boolean): number[] => slots.filter((s) => pick(s.w) && s.shareMs !== undefined).map((s) => s.shareMs as number);
    const figures = (kind: WindowKind): WindowFigures => ({
      operator_share: summarize(shares((w) => w.kind === kind)),
      slot_to_watch: summarize(slots.filter((s) => s.w.kind === kind).map((s) => s.watchMs)),
      operator_cpu_pct: cpuPct[kind],
    });
    const ratios = (kind: FloodKind, p: 50 | 99): RoundRatios => {
      const perRound = Array.from({ length: opts.rounds }, (_, r) => {
        const of = (k: WindowKind): number | null => summarize(shares((w) => w.round === r && w.kind === k))[p === 50 ? 'p50_ms' : 'p99_ms'];
        const [flooded, quiet] = [of(kind), of('quiet')];
        return flooded === null || quiet === null || quiet === 0 ? null : round2(flooded / quiet);
      });
      return roundRatios(perRound);
    };
    const byStatus = (m: Map<string, number>): Record<string, number> => Object.fromEntries([...m].sort(([a], [b]) => Number(a) - Number(b)));
    const junkSent = [...answers.junk.values()].reduce((a, b) => a + b, 0);
    const roundsS = (opts.rounds * windowMs) / 1000;
    const expected = opts.schedules * windows.length * opts.windowSeconds;
    const result: FloodResult = {
      schedules: opts.schedules,
      rounds: opts.rounds,
      window_s: opts.windowSeconds,
      junk_per_window: opts.junkPerWindow,
      junk_connections: opts.junkConnections,
      connection_attempts: opts.connectionAttempts,
      windows: { quiet: figures('quiet'), junk: figures('junk'), decoy: figures('decoy'), connections: figures('connections') },
      p99_ratio: { junk: ratios('junk', 99), connections: ratios('connections', 99), decoy: ratios('decoy', 99) },
      p50_ratio: { junk: ratios('junk', 50), connections: ratios('connections', 50), decoy: ratios('decoy', 50) },
      junk_answers: byStatus(answers.junk),
      decoy_answers: byStatus(answers.decoy),
      connection_outcomes: outcomes,
      cpu_s_per_1000_junk: junkSent ? round2(((((cpuPct.junk - cpuPct.quiet) / 100) * roundsS) / junkSent) * 1000) : null,
      decoy_cpu_pct: decoyCpuPct.decoy,
      flooder_cpu_pct: round2((100 * flooderCpuMs) / (FLOODS.length * opts.rounds * windowMs)) as number,
      flooder_nice: opts.flooderNice,
      expected,
      seen: slots.length,
      duplicates,
      missed: expected - slots.length,
      unaudited: slots.filter((s) => s.shareMs === undefined).length,
    };
    const w = result.windows;
    const share = (k: WindowKind): string => `${w[k].operator_share.p50_ms}/${w[k].operator_share.p99_ms}`;
    const ratio = (k: FloodKind): string => `×${result.p99_ratio[k].median} (${result.p99_ratio[k].rounds.join(', ')})`;
    say(
      `flood: operator share p50/p99 ms quiet ${share('quiet')}, junk ${share('junk')} ${ratio('junk')}, connections ${share('connections')} ${ratio('connections')}, ` +
        `decoy ${share('decoy')} ${ratio('decoy')}; junk answers ${JSON.stringify(result.junk_answers)}; connections ${JSON.stringify(outcomes.map(({ connected, closedByOperator, failed, openAtEnd, peakOpen, probes }) => ({ connected, closedByOperator, failed, openAtEnd, peakOpen, probes })))}; ` +
        `operator CPU ${KINDS.map((k) => `${k} ${cpuPct[k]} %`).join(', ')}; ${result.cpu_s_per_1000_junk} CPU s per 1,000 junk; seen ${result.seen}/${expected}, duplicates ${duplicates}`,
    );
    const samples = Object.fromEntries(KINDS.map((k) => [k, shares((x) => x.kind === k)])) as Record<WindowKind, number[]>;
    return { result, samples };
  } finally {
    await flooder.stop();
    await decoy.stop();
    watcher.stop();
    await finishOperator(op);
  }
}

/** The process's CPU over each kind of window (% of one core), read from /proc at every window boundary. */
async function cpuPerKind(pid: number, windows: Window[]): Promise<Record<WindowKind, number>> {
  const spent: Record<WindowKind, number> = { quiet: 0, junk: 0, decoy: 0, connections: 0 };
  const span: Record<WindowKind, number> = { quiet: 0, junk: 0, decoy: 0, connections: 0 };
  for (const w of windows) {
    await sleepUntil(w.from);
    const [cpu0, t0] = [procCpuSeconds(pid), Date.now()];
    await sleepUntil(w.to);
    spent[w.kind] += procCpuSeconds(pid) - cpu0;
    span[w.kind] += (Date.now() - t0) / 1000;
  }
  const pct = (kind: WindowKind): number => round2(span[kind] ? (100 * spent[kind]) / span[kind] : 0) as number;
  return { quiet: pct('quiet'), junk: pct('junk'), decoy: pct('decoy'), connections: pct('connections') };
}
