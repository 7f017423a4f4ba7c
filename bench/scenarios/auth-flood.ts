// Scenario auth_flood (issue 21): does a flood of junk bearer tokens on the secure /metrics move the
// trigger latency? N SecondCronJobs at intervalSeconds 1 under one operator with --metrics-secure
// (its own self-signed certificate; a TokenReview and a SubjectAccessReview per token, at most 4 at
// a time, the rest answered 503). Rounds of three windows of the same length: quiet; the flood on
// the operator (50 keep-alive connections send 5,000 distinct junk tokens spread evenly over it);
// the same flood on a decoy (bench/lib/decoy-server.ts: a TLS port in a process of its own that
// refuses everything with 401 and asks no one). The two flood windows swap places every round, so
// drift on a noisy machine falls on every kind. Latency is slot → watch arrival of the Jobs whose
// slots fall in each kind of window (JobWatcher, as steady). The junk comes from a process of its
// own (bench/lib/junk-flood.ts), not the one stamping arrivals. Target: flood p99 ≤ 1.10 × quiet
// p99; the decoy windows are the control: on a machine whose cores the flooder shares, what the
// flood moves without the operator seeing any of it. test/integration/metrics-auth-load.test.ts
// asserts the cap and the answers on the real control plane; this measures what the flood costs.
import type { Cluster } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import { DecoyServer } from '../lib/decoy-server.js';
import { JunkFlooder } from '../lib/junk-flood.js';
import { bulkCreate, createNamespace, restFor, scjManifest, scjPath } from '../lib/kube.js';
import { finishOperator, makeOperator, procCpuSeconds } from '../lib/operator.js';
import { say, sleepUntil, waitUntil } from '../lib/progress.js';
import { type Summary, round2, summarize } from '../lib/stats.js';

export const AUTH_FLOOD_NAMESPACE = 'bench-auth-flood';

export interface AuthFloodResult {
  schedules: number;
  rounds: number;
  window_s: number;
  /** Junk requests per flood window, and the connections they share. */
  junk_per_window: number;
  connections: number;
  quiet: Summary;
  flood: Summary;
  /** The control: the same flood on the decoy, the operator untouched. */
  decoy: Summary;
  /** flood / quiet, two decimals. */
  p50_ratio: number | null;
  p99_ratio: number | null;
  /** decoy / quiet, two decimals: the move the machine's share of the flood makes by itself. */
  decoy_p50_ratio: number | null;
  decoy_p99_ratio: number | null;
  /** The operator's answers to the junk requests, by status (401: reviewed and refused; 503: over the cap). */
  answers: Record<string, number>;
  /** The decoy's (all 401 unless it failed). */
  decoy_answers: Record<string, number>;
  /** How long each flood took to send (it is paced to the window; longer means the operator answered slowly). */
  flood_ms: number[];
  /** The operator's CPU (% of one core, from /proc) over each kind of window. */
  operator_cpu_pct: Record<WindowKind, number>;
  /** The decoy's CPU over the decoy windows (% of one core): what refusing the flood costs with no review. */
  decoy_cpu_pct: number;
  /** The flooding process's own CPU over the operator's flood windows (% of one core): on this machine it shares the cores. */
  flooder_cpu_pct: number;
  /** Its niceness (BENCH_FLOOD_NICE). */
  flooder_nice: number;
  expected: number;
  seen: number;
  duplicates: number;
  missed: number;
}

type WindowKind = 'quiet' | 'flood' | 'decoy';

export async function runAuthFlood(
  cluster: Cluster,
  opts: { schedules: number; rounds: number; windowSeconds: number; junkPerWindow: number; connections: number; flooderNice: number; pods: boolean },
): Promise<{ result: AuthFloodResult; samples: { quiet: number[]; flood: number[]; decoy: number[] } }> {
  const rest = restFor(cluster.kubeconfigPath);
  await createNamespace(rest, AUTH_FLOOD_NAMESPACE);
  const op = makeOperator(cluster, AUTH_FLOOD_NAMESPACE, `bench-${AUTH_FLOOD_NAMESPACE}`, { metricsSecure: true });
  await op.start();
  await op.ready(60_000);
  const watcher = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: AUTH_FLOOD_NAMESPACE }).start();
  const decoy = await DecoyServer.start();
  const flooder = JunkFlooder.start(opts.flooderNice);
  try {
    const names = Array.from({ length: opts.schedules }, (_, i) => `tick-${String(i).padStart(3, '0')}`);
    await bulkCreate(rest, scjPath(AUTH_FLOOD_NAMESPACE), names.map((n) => scjManifest(AUTH_FLOOD_NAMESPACE, n, { intervalSeconds: 1 }, opts.pods)), 16);
    const warm = await waitUntil(() => new Set(watcher.seen.map((j) => j.owner)).size >= opts.schedules, 60_000, 200);
    if (!warm) throw new Error(`only ${new Set(watcher.seen.map((j) => j.owner)).size} of ${opts.schedules} schedules fired within 60 s`);

    const windowMs = opts.windowSeconds * 1000;
    const start = Math.ceil(Date.now() / 1000) * 1000 + 2_000;
    const windows: Window[] = [];
    for (let r = 0; r < opts.rounds; r++) {
      const q = start + r * 3 * windowMs;
      const floods: WindowKind[] = r % 2 === 0 ? ['flood', 'decoy'] : ['decoy', 'flood'];
      windows.push({ kind: 'quiet', from: q, to: q + windowMs });
      floods.forEach((kind, i) => windows.push({ kind, from: q + (i + 1) * windowMs, to: q + (i + 2) * windowMs }));
    }
    say(`auth_flood: ${opts.rounds} rounds of ${opts.windowSeconds} s quiet + ${opts.windowSeconds} s of ${opts.junkPerWindow} junk tokens over ${opts.connections} connections on the operator + the same on a decoy`);
    const answers = { flood: new Map<string, number>(), decoy: new Map<string, number>() };
    const floodMs: number[] = [];
    let flooderCpuMs = 0;
    if (op.pid === undefined || decoy.pid === undefined) throw new Error('auth_flood: the operator or the decoy has no pid');
    const operatorCpu = sampleCpuPerWindow(op.pid, windows);
    const decoyCpu = sampleCpuPerWindow(decoy.pid, windows);
    // Handled where they are awaited; a process gone mid-flood must not crash the bench first.
    operatorCpu.catch(() => {});
    decoyCpu.catch(() => {});
    for (const w of windows.filter((x) => x.kind !== 'quiet')) {
      const sent = await flooder.run({
        url: w.kind === 'flood' ? `https://127.0.0.1:${op.metricsPort}/metrics` : `https://127.0.0.1:${decoy.port}/metrics`,
        fromMs: w.from,
        windowMs,
        requests: opts.junkPerWindow,
        connections: opts.connections,
      });
      const tally = w.kind === 'flood' ? answers.flood : answers.decoy;
      for (const [status, n] of Object.entries(sent.answers)) tally.set(status, (tally.get(status) ?? 0) + n);
      if (w.kind !== 'flood') continue;
      floodMs.push(sent.ms);
      flooderCpuMs += sent.cpuMs;
    }
    const cpuPct = await operatorCpu;
    const decoyCpuPct = await decoyCpu;
    const last = windows[windows.length - 1] as { to: number };
    // Every slot of the last window has had time to be created and seen.
    await sleepUntil(last.to + 5_000);

    const kindOf = (slotMs: number): WindowKind | undefined => windows.find((w) => slotMs >= w.from && slotMs < w.to)?.kind;
    const owners = new Set(names);
    const measured = watcher.seen.filter((j) => owners.has(j.owner) && kindOf(j.slotMs) !== undefined);
    const latencies = (kind: WindowKind): number[] => measured.filter((j) => kindOf(j.slotMs) === kind).map((j) => j.arrivedMs - j.slotMs);
    const [quietMs, floodLatencies, decoyLatencies] = [latencies('quiet'), latencies('flood'), latencies('decoy')];
    const quiet = summarize(quietMs);
    const flood = summarize(floodLatencies);
    const decoyed = summarize(decoyLatencies);
    const ratio = (a: number | null, b: number | null): number | null => (a === null || b === null || b === 0 ? null : round2(a / b));
    const byStatus = (m: Map<string, number>): Record<string, number> => Object.fromEntries([...m].sort(([a], [b]) => Number(a) - Number(b)));
    const expected = opts.schedules * opts.rounds * 3 * opts.windowSeconds;
    const seenSlots = new Set(measured.map((j) => `${j.owner}@${j.slotMs}`));
    const result: AuthFloodResult = {
      schedules: opts.schedules,
      rounds: opts.rounds,
      window_s: opts.windowSeconds,
      junk_per_window: opts.junkPerWindow,
      connections: opts.connections,
      quiet,
      flood,
      decoy: decoyed,
      p50_ratio: ratio(flood.p50_ms, quiet.p50_ms),
      p99_ratio: ratio(flood.p99_ms, quiet.p99_ms),
      decoy_p50_ratio: ratio(decoyed.p50_ms, quiet.p50_ms),
      decoy_p99_ratio: ratio(decoyed.p99_ms, quiet.p99_ms),
      answers: byStatus(answers.flood),
      decoy_answers: byStatus(answers.decoy),
      flood_ms: floodMs,
      operator_cpu_pct: cpuPct,
      decoy_cpu_pct: decoyCpuPct.decoy,
      flooder_cpu_pct: round2((100 * flooderCpuMs) / (opts.rounds * windowMs)) as number,
      flooder_nice: opts.flooderNice,
      expected,
      seen: seenSlots.size,
      duplicates: measured.length - seenSlots.size,
      missed: expected - seenSlots.size,
    };
    say(
      `auth_flood: quiet p50 ${quiet.p50_ms} p99 ${quiet.p99_ms} ms; flood p50 ${flood.p50_ms} p99 ${flood.p99_ms} ms (p99 ×${result.p99_ratio}); ` +
        `decoy p50 ${decoyed.p50_ms} p99 ${decoyed.p99_ms} ms (p99 ×${result.decoy_p99_ratio}); answers ${JSON.stringify(result.answers)}, decoy ${JSON.stringify(result.decoy_answers)}; ` +
        `floods took ${floodMs.join(', ')} ms; operator CPU quiet ${cpuPct.quiet} % flood ${cpuPct.flood} % decoy ${cpuPct.decoy} %, decoy ${decoyCpuPct.decoy} %, flooder ${result.flooder_cpu_pct} %`,
    );
    return { result, samples: { quiet: quietMs, flood: floodLatencies, decoy: decoyLatencies } };
  } finally {
    await flooder.stop();
    await decoy.stop();
    watcher.stop();
    await finishOperator(op);
  }
}

interface Window {
  kind: WindowKind;
  from: number;
  to: number;
}

/** The process's CPU over each kind of window (% of one core), read from /proc at every window boundary. */
async function sampleCpuPerWindow(pid: number, windows: Window[]): Promise<Record<WindowKind, number>> {
  const spent = { quiet: 0, flood: 0, decoy: 0 };
  const span = { quiet: 0, flood: 0, decoy: 0 };
  for (const w of windows) {
    await sleepUntil(w.from);
    const [cpu0, t0] = [procCpuSeconds(pid), Date.now()];
    await sleepUntil(w.to);
    spent[w.kind] += procCpuSeconds(pid) - cpu0;
    span[w.kind] += (Date.now() - t0) / 1000;
  }
  const pct = (kind: WindowKind): number => round2((100 * spent[kind]) / span[kind]) as number;
  return { quiet: pct('quiet'), flood: pct('flood'), decoy: pct('decoy') };
}
