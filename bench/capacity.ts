// `make bench-capacity`: the largest rate of one-second Jobs this machine's control plane sustains
// (issue 36), found without the operator: the floor client alone (lib/floor-client.ts: the operator's
// client, Job bodies, concurrency and history deletions, released on every whole second) runs
// `rate` creates a second for CAPACITY_MINUTES, on a fresh control plane per rate with the soak's
// settings (GOGC, the Job controller's limits). The soak and the heavy scenario are then run at the
// largest rate that passed: what they judge is the operator, not the machine.
//
// A create the API server received 1 s or more after its second is "late": the operator would by
// then have decided the schedule's next slot and run only that one (DESIGN §3), so a slot would have
// been skipped. A rate passes when no create of the whole window was late. Judged from the API
// server's audit log (requestReceivedTimestamp) against the whole second each batch was due, never
// from the client's own answers.
//
//   CAPACITY_RATES (100,80,60,40)  tried in this order; stops at the first that passes
//   CAPACITY_MINUTES (10)          how long each rate runs
//   BENCH_CONTROL_PLANE_GOGC       as the bench and the soak (400)
// Writes bench/results/capacity.json; exit 1 when no rate passed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type Cluster, startCluster } from '../test/cluster/cluster.js';
import { installCrd } from '../test/cluster/crd.js';
import { SOAK_KCM_LIMITS, controlPlaneGoGC } from './config.js';
import { auditedJobCreates } from './lib/latency-split.js';
import { restFor } from './lib/kube.js';
import { commit, load } from './lib/machine.js';
import { procCpuSeconds } from './lib/operator.js';
import { say } from './lib/progress.js';
import { round2, summarize } from './lib/stats.js';
import { FLOOR_CONCURRENCY, floorOwner, runFloorClient } from './scenarios/floor.js';

const USER = 'admin';
const NS = 'bench-capacity';
/** A create received this long after its second or later would have been superseded by the next slot. */
const LATE_MS = 1_000;
const CONTROL_PLANE = ['kube-apiserver', 'etcd'] as const;

interface RateRun {
  rate: number;
  seconds: number;
  jobs: number;
  /** Creates with a 201 in the audit log. */
  stored: number;
  /** Creates the API server received LATE_MS or more after their second. */
  late: number;
  /** Whole seconds with at least one late create. */
  late_seconds: number;
  passed: boolean;
  /** Second → the API server received the create (the client's share), ms. */
  client_share: { p50_ms: number | null; p99_ms: number | null; max_ms: number | null };
  /** Share of one core over the window, from /proc. */
  cpu_pct: Record<(typeof CONTROL_PLANE)[number], number | null>;
  load_end: number[];
}

function numberList(name: string, fallback: string): number[] {
  const raw = process.env[name] ?? fallback;
  const values = raw.split(',').map((s) => Number(s.trim()));
  if (!values.length || values.some((v) => !Number.isInteger(v) || v < 1)) throw new Error(`${name} must be whole numbers >= 1 separated by commas, not ${raw}`);
  return values;
}

async function runRate(rate: number, seconds: number): Promise<RateRun> {
  const cluster: Cluster = await startCluster({ nodes: 1, auditUsers: [USER], goGC: controlPlaneGoGC(process.env) });
  try {
    await installCrd((args) => cluster.kubectl(args));
    await cluster.restartControllerManager(SOAK_KCM_LIMITS);
    const scj = await floorOwner(restFor(cluster.kubeconfigPath), NS, false);
    const pids = CONTROL_PLANE.map((name) => [name, cluster.pidOf(name)] as const);
    const cpu0 = pids.map(([, pid]) => (pid === undefined ? null : procCpuSeconds(pid)));
    const t0 = performance.now();
    say(`capacity: ${rate} creates a second for ${seconds} s from the floor client alone`);
    const out = await runFloorClient({ kubeconfigPath: cluster.kubeconfigPath, namespace: NS, scj, firstSlotS: 1_000_000_000, batches: seconds, size: rate, concurrency: FLOOR_CONCURRENCY, watch: false });
    const windowS = (performance.now() - t0) / 1000;
    const cpu = Object.fromEntries(pids.map(([name, pid], i) => {
      const before = cpu0[i];
      return [name, pid === undefined || before === undefined || before === null ? null : round2(((procCpuSeconds(pid) - before) / windowS) * 100)];
    })) as RateRun['cpu_pct'];
    if (!cluster.auditLogPath) throw new Error('capacity: the cluster writes no audit log');
    const received = await auditedJobCreates(cluster.auditLogPath, new Set([NS]));
    // In release order, `rate` a second; a create without a 201 in the log counts as late (never stored in time).
    const shares = out.released.map(([name, releasedMs]) => {
      const at = received.get(`${NS}/${name}`);
      return at === undefined ? Infinity : at - Math.floor(releasedMs / 1000) * 1000; // from the whole second it was due
    });
    const late = shares.filter((ms) => ms >= LATE_MS).length;
    const lateSeconds = new Set(shares.flatMap((ms, i) => (ms >= LATE_MS ? [Math.floor(i / rate)] : []))).size;
    const share = summarize(shares.filter(Number.isFinite));
    const run: RateRun = {
      rate,
      seconds,
      jobs: out.creates,
      stored: shares.filter(Number.isFinite).length,
      late,
      late_seconds: lateSeconds,
      passed: late === 0,
      client_share: { p50_ms: share.p50_ms, p99_ms: share.p99_ms, max_ms: share.max_ms },
      cpu_pct: cpu,
      load_end: load(),
    };
    say(`capacity: ${rate}/s: ${late} of ${run.jobs} creates received ≥ ${LATE_MS} ms after their second or not stored (in ${lateSeconds} seconds); client share p50 ${share.p50_ms} p99 ${share.p99_ms} max ${share.max_ms} ms; kube-apiserver ${cpu['kube-apiserver']} %, etcd ${cpu.etcd} % of a core`);
    return run;
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<number> {
  const rates = numberList('CAPACITY_RATES', '100,80,60,40');
  const [minutes] = numberList('CAPACITY_MINUTES', '10');
  const startedAt = new Date().toISOString();
  say(`capacity: rates ${rates.join(', ')} a second, ${minutes} min each, until one passes; control plane GOGC ${controlPlaneGoGC(process.env)}; load ${load().join(' ')}`);
  const runs: RateRun[] = [];
  for (const rate of rates) {
    const run = await runRate(rate, (minutes ?? 10) * 60);
    runs.push(run);
    if (run.passed) break;
  }
  const sustained = runs.find((r) => r.passed)?.rate ?? null;
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const out = join(root, 'bench', 'results', 'capacity.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify({ commit: commit(), date: startedAt, late_ms: LATE_MS, control_plane_gogc: controlPlaneGoGC(process.env), sustained_rate: sustained, runs }, null, 2) + '\n');
  say(`capacity: largest rate sustained ${sustained ?? 'none of those tried'}; wrote ${out}`);
  return sustained === null ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench-capacity failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
