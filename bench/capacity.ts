// `make bench-capacity`: the largest rate of one-second Jobs this machine's control plane sustains
// (issue 36), found without the operator: the floor client alone (lib/floor-client.ts: the operator's
// client, Job bodies, concurrency and history deletions, released on every whole second) runs
// `rate` creates a second for CAPACITY_MINUTES, on a fresh control plane per rate with the soak's
// settings (GOGC, the Job controller's limits). The soak and the heavy scenario are then run at the
// largest rate that passed: what they judge is the operator, not the machine.
//
// A rate passes when the API server received every create of the window within a second of the
// whole second it was due, from its audit log (lib/late-creates.ts: later, the operator would have run
// the schedule's next slot instead, a skipped slot).
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
import { LATE_MS, lateCreates } from './lib/late-creates.js';
import { round2 } from './lib/stats.js';
import { FLOOR_CONCURRENCY, floorOwner, runFloorClient } from './scenarios/floor.js';

const USER = 'admin';
const NS = 'bench-capacity';
const CONTROL_PLANE = ['kube-apiserver', 'etcd'] as const;

interface RateRun {
  rate: number;
  seconds: number;
  jobs: number;
  /** Creates with a 201 in the audit log. */
  stored: number;
  /** Creates the API server received LATE_MS or more after their second, or did not store. */
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
    const judged = lateCreates(out.released.map(([name, ms]) => [`${NS}/${name}`, ms] as const), received);
    const share = judged.share;
    const run: RateRun = {
      rate,
      seconds,
      jobs: judged.creates,
      stored: judged.stored,
      late: judged.late,
      late_seconds: judged.late_seconds,
      passed: judged.late === 0,
      client_share: { p50_ms: share.p50_ms, p99_ms: share.p99_ms, max_ms: share.max_ms },
      cpu_pct: cpu,
      load_end: load(),
    };
    say(`capacity: ${rate}/s: ${run.late} of ${run.jobs} creates received ≥ ${LATE_MS} ms after their second or not stored (in ${run.late_seconds} seconds); client share p50 ${share.p50_ms} p99 ${share.p99_ms} max ${share.max_ms} ms; kube-apiserver ${cpu['kube-apiserver']} %, etcd ${cpu.etcd} % of a core`);
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
