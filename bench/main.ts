// `make bench`: trigger latency, throughput and scale of secondcron on a private local control plane,
// side by side with the upstream CronJob controller of the same kube-controller-manager. Measures,
// never asserts: prints a table, writes bench/results/latest.json and bench/results/latency.svg.
//
//   BENCH_QUICK=1        reduced sizes (about 6 minutes)
//   BENCH_ONLY=a,b       run only these scenarios (floor, steady, light, rounds, burst, scale, scheduler, failover, herd, flood); results
//                        then go to bench/results/partial.json, never over latest.json
//   BENCH_PODS=1         Jobs run a real (kwok) pod instead of completing at once without one
//   BENCH_SCALE=n        the scale and failover scenarios at n schedules (100000 for issue 36; not in the default run)
//   BENCH_CPU_PROF=dir   V8 CPU profile of every operator run into dir
//   BENCH_NODE_OPTIONS   Node flags for the operator instead of the chart's heap limit; BENCH_OPERATOR_MAIN another operator build
//   BENCH_NODE_ARGS      node's own flags for the operator instead of the image's ENTRYPOINT ones ("" for none)
//   BENCH_FLOOD_NICE=n   niceness of the flood scenario's flooding process (0 by default)
//   BENCH_CONTROL_PLANE_GOGC=n  GOGC of the control plane's Go processes (400 by default; 100 is Go's own), as `make soak`
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type Cluster, startCluster } from '../test/cluster/cluster.js';
import { KCM_FAST_LIMITS, benchConfig } from './config.js';
import { chartNodeOptions, operatorImageEnv, operatorNodeArgs } from './lib/operator.js';
import { drainJobs } from './lib/job-drain.js';
import { restFor, serverVersion } from './lib/kube.js';
import { commit, load, machineInfo } from './lib/machine.js';
import { say } from './lib/progress.js';
import { efficiency } from './report/efficiency.js';
import { type Results, failed, isFailed } from './report/results.js';
import { type RunSamples, judge, printTable, writeResults } from './report/write.js';
import { BURST_TIMING, runBurst } from './scenarios/burst.js';
import { FLOOR_NAMESPACE, runFloor } from './scenarios/floor.js';
import { LIGHT_NAMESPACE, runLight } from './scenarios/light.js';
import { type ScaleRun, startScale } from './scenarios/scale.js';
import { runFailover } from './scenarios/failover.js';
import { runHerd } from './scenarios/herd.js';
import { runFlood } from './scenarios/flood.js';
import { runRounds } from './scenarios/rounds.js';
import { runScheduler } from './scenarios/scheduler.js';
import { STEADY_NAMESPACE, runSteady } from './scenarios/steady.js';
import { installCrd } from '../test/cluster/crd.js';

/** The user of the cluster's admin kubeconfig, which the bench, the operators and the floor client use. */
const BENCH_USER = 'admin';

const SCENARIOS = ['scheduler', 'floor', 'steady', 'light', 'rounds', 'scale', 'burst', 'failover', 'herd', 'flood'] as const;
type Scenario = (typeof SCENARIOS)[number];

/** The repository root: the nearest directory above this file with a package.json. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('bench: cannot find the repository root (package.json)');
    dir = parent;
  }
  return dir;
}

function selected(env: NodeJS.ProcessEnv): Set<Scenario> {
  if (!env.BENCH_ONLY) return new Set(SCENARIOS);
  const wanted = env.BENCH_ONLY.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((w) => !(SCENARIOS as readonly string[]).includes(w));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
  return new Set(wanted as Scenario[]);
}

async function main(): Promise<number> {
  const root = repoRoot();
  process.chdir(root); // the operator runs dist/main.js relative to the working directory
  const cfg = benchConfig(process.env);
  const only = selected(process.env);
  const startedAt = new Date();
  const t0 = performance.now();
  const machine = machineInfo();
  const notRun = new Error(`not run (BENCH_ONLY=${process.env.BENCH_ONLY ?? ''})`);
  say(`secondcron bench (${cfg.quick ? 'QUICK' : 'full'}${cfg.pods ? ', real pods' : ''}) at ${commit().slice(0, 12)}; ${machine.cores} cores ${machine.cpu_model}; load ${machine.load_start.join(' ')}; operator node flags: ${machine.operator_node_args.join(' ') || 'none'}; image ENV: ${JSON.stringify(operatorImageEnv())}; control plane GOGC ${machine.control_plane_gogc}`);
  if ((machine.load_start[0] ?? 0) > 1) say(`note: the machine is busy (1-minute load ${machine.load_start[0]} on ${machine.cores} cores): expect noisy figures`);

  const results: Results = {
    commit: commit(),
    quick: cfg.quick,
    date: startedAt.toISOString(),
    duration_s: 0,
    machine,
    config: { ...cfg, operator_node_options: process.env.BENCH_NODE_OPTIONS ?? chartNodeOptions(), operator_node_args: operatorNodeArgs().join(' '), operator_image_env: operatorImageEnv() },
    floor: failed('floor', notRun),
    steady: failed('steady', notRun),
    light: failed('light', notRun),
    rounds: failed('rounds', notRun),
    efficiency: failed('efficiency', notRun),
    burst: failed('burst', notRun),
    scale: failed('scale', notRun),
    scheduler: failed('scheduler', notRun),
    failover: failed('failover', notRun),
    herd: failed('herd', notRun),
    flood: failed('flood', notRun),
    targets: [],
  };
  const samples: RunSamples = {};
  let errors = 0;
  const attempt = async (name: Scenario, run: () => Promise<void>): Promise<void> => {
    if (!only.has(name)) return;
    try {
      await run();
    } catch (err) {
      errors++;
      results[name] = failed(name, err);
      say(`${name}: FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
  };

  // The pure core first, while no control plane competes for the CPU.
  await attempt('scheduler', async () => {
    const r = await runScheduler(cfg.scheduler);
    results.scheduler = r.result;
    samples.scheduler = r.samples;
  });

  let cluster: Cluster | undefined;
  if (['floor', 'steady', 'light', 'rounds', 'scale', 'burst', 'failover', 'herd', 'flood'].some((s) => only.has(s as Scenario))) {
    say('starting a private control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)');
    // The API server audits the bench's user (the operator runs as it, so does the floor client): the
    // requests per Job counted by the server itself (lib/audit-log.ts).
    cluster = await startCluster({ nodes: 1, auditUsers: [BENCH_USER], goGC: machine.control_plane_gogc });
    say(`control plane up in ${(cluster.startupMs / 1000).toFixed(1)} s (${cluster.dir})`);
  }
  try {
    if (cluster) {
      const c = cluster;
      await installCrd((args) => c.kubectl(args));
      machine.k8s_version = await serverVersion(restFor(c.kubeconfigPath));

      // The Job controller fast enough to finish 100 Jobs/s, so that history deletions keep pace with
      // the creates in steady (and in the floor that mirrors it); the test limits again from scale on.
      const ticking = ['floor', 'steady', 'light', 'rounds'].some((s) => only.has(s as Scenario));
      if (ticking) await c.restartControllerManager(KCM_FAST_LIMITS);
      await attempt('floor', async () => {
        const r = await runFloor(c, { ...cfg.floor, batchSize: cfg.steady.schedules, lightBatchSize: cfg.light.schedules, pods: cfg.pods });
        results.floor = r.result;
        samples.floorRtt = r.samples.rttConcurrent;
        samples.floorBatch = r.samples.batchToWatch;
        samples.floorClientShare = r.samples.batchClientShare;
        await drainJobs(c.kubeconfigPath, FLOOR_NAMESPACE, 180_000);
      });
      await attempt('steady', async () => {
        const r = await runSteady(c, { ...cfg.steady, pods: cfg.pods }, isFailed(results.floor) ? null : results.floor.batches.secondToWatch);
        results.steady = r.result;
        samples.steady = r.samples;
        samples.steadyOperatorShare = r.operatorShares;
        await drainJobs(c.kubeconfigPath, STEADY_NAMESPACE, 180_000);
      });
      await attempt('light', async () => {
        const r = await runLight(c, { ...cfg.light, pods: cfg.pods }, isFailed(results.floor) ? null : results.floor);
        results.light = r.result;
        samples.light = r.samples;
        await drainJobs(c.kubeconfigPath, LIGHT_NAMESPACE, 180_000);
      });
      await attempt('rounds', async () => {
        results.rounds = await runRounds(c, { ...cfg.rounds, steadySchedules: cfg.steady.schedules, lightSchedules: cfg.light.schedules, pods: cfg.pods });
      });
      if (ticking) await c.restartControllerManager();
      // Scale, then burst: no scenario overlaps another (issue 24).
      let scale: ScaleRun | undefined;
      await attempt('scale', async () => {
        scale = await startScale(c, { ...cfg.scale, pods: cfg.pods });
      });
      if (scale) {
        const run = scale;
        await attempt('scale', async () => {
          results.scale = await run.measureIdle();
        });
      }
      await attempt('burst', async () => {
        const floorP50 = isFailed(results.floor) ? null : results.floor.p50_ms;
        const timing = cfg.quick ? BURST_TIMING.quick : BURST_TIMING.full;
        const r = await runBurst(c, { ...cfg.burst, pods: cfg.pods, floorConcurrentP50Ms: floorP50, timing });
        results.burst = r.result;
        samples.burstOurs = r.samples.secondcron;
        samples.burstUpstream = r.samples.cronjob;
        samples.burstUpstreamDefaultQps = r.samples.cronjobDefaultQps;
      });
      await attempt('failover', async () => {
        results.failover = await runFailover(c, { ...cfg.failover, pods: cfg.pods });
      });
      await attempt('herd', async () => {
        const r = await runHerd(c, { ...cfg.herd, pods: cfg.pods });
        results.herd = r.result;
        samples.herdZero = r.samples.zero;
        samples.herdHashed = r.samples.hashed;
      });
      await attempt('flood', async () => {
        const r = await runFlood(c, { ...cfg.flood, pods: cfg.pods });
        results.flood = r.result;
        samples.flood = r.samples;
      });
    }
  } finally {
    if (cluster) {
      say('stopping the control plane');
      await cluster.stop();
    }
  }

  if (only.has('steady')) results.efficiency = efficiency(results.steady, results.floor);
  machine.load_end = load();
  results.duration_s = Math.round((performance.now() - t0) / 1000);
  judge(results);
  const partial = process.env.BENCH_ONLY !== undefined && process.env.BENCH_ONLY !== '';
  const { jsonPath, svgPath } = writeResults(join(root, 'bench', 'results'), partial, results, samples);
  printTable(results);
  say(`wrote ${jsonPath} and ${svgPath}; load at the end ${machine.load_end.join(' ')}; ${results.duration_s} s in all`);
  return errors > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
