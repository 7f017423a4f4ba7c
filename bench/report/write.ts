// The end of a run: judge the targets, write the JSON and the SVG, print the table.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { parseConfig } from '../../src/config.js';
import type { WindowKind } from '../scenarios/flood.js';
import { type Results, isFailed } from './results.js';
import { latencySvg } from './svg.js';
import { markdownTable, tableRows, textTable } from './table.js';
import { judgeTargets } from './targets.js';

/** Latency samples of the run, for the chart (ms). */
export interface RunSamples {
  floorRtt?: number[];
  floorBatch?: number[];
  /** The floor batches' and steady's Jobs: slot (or release second) → the API server received the create (its audit log). */
  floorClientShare?: number[];
  steady?: number[];
  steadyOperatorShare?: number[];
  light?: number[];
  burstOurs?: number[];
  burstUpstream?: number[];
  burstUpstreamDefaultQps?: number[];
  scheduler?: number[];
  herdZero?: number[];
  herdHashed?: number[];
  /** The flood scenario's operator shares by kind of window. */
  flood?: Record<WindowKind, number[]>;
}

const num = (r: object, k: string): number | null => {
  const v = (r as Record<string, unknown>)[k];
  return typeof v === 'number' ? v : null;
};

export function judge(results: Results): void {
  results.targets = judgeTargets({
    steady: { duplicates: num(results.steady, 'duplicates'), missed: num(results.steady, 'missed') },
    rounds: isFailed(results.rounds)
      ? { p50Ratio: null, p99Ratio: null, shareP99Ratio: null }
      : { p50Ratio: results.rounds.steady.ratio.p50.median, p99Ratio: results.rounds.steady.ratio.p99.median, shareP99Ratio: results.rounds.steady.ratio.client_share_p99.median },
    light: { p50Ratio: num(results.light, 'p50_ratio'), p99Ratio: num(results.light, 'p99_ratio') },
    efficiency: {
      // Judged on the larger of two counts of the same window: the operator's own counter and the
      // API server's audit log (an operator that forgot to count a request cannot flatter itself).
      requestsPerJob: maxOf(num(results.efficiency, 'requests_per_job'), num(results.efficiency, 'requests_per_job_audited')),
      cpuPer1000: num(results.efficiency, 'cpu_s_per_1000_jobs'),
      floorCpuPer1000: num(results.efficiency, 'floor_cpu_s_per_1000_creates'),
    },
    ratioLast: num(results.burst, 'ratio_last'),
    scale: { rss: num(results.scale, 'rss_mib'), ready: num(results.scale, 'ready_s'), idleCpu: num(results.scale, 'idle_cpu_pct') },
    schedulerP99: num(results.scheduler, 'p99_ms'),
    flood: isFailed(results.flood)
      ? { junk: null, connections: null, decoy: null }
      : { junk: results.flood.p99_ratio.junk.median, connections: results.flood.p99_ratio.connections.median, decoy: results.flood.p99_ratio.decoy.median },
    split: {
      steadyOperatorP99: isFailed(results.steady) ? null : (results.steady.split?.client.p99_ms ?? null),
      burstLastReceived: isFailed(results.burst) ? null : (results.burst.secondcron_split?.client.max_ms ?? null),
      burstTokenFloor: isFailed(results.burst) ? null : results.burst.limits.token_bucket_floor_ms,
    },
    failover: {
      nonCanaryWrites: isFailed(results.failover) || !results.failover.settled ? null : results.failover.writes_60s_non_canary,
      schedules: num(results.failover, 'schedules'),
    },
  });
}

/** Writes <dir>/<base>.json and the chart; a partial run (BENCH_ONLY) never overwrites latest.json. */
export function writeResults(dir: string, partial: boolean, results: Results, samples: RunSamples): { jsonPath: string; svgPath: string } {
  mkdirSync(dir, { recursive: true });
  const jsonPath = join(dir, partial ? 'partial.json' : 'latest.json');
  const svgPath = join(dir, partial ? 'partial.svg' : 'latency.svg');
  writeFileSync(jsonPath, JSON.stringify(results, null, 2) + '\n');
  const c = results.config;
  const m = results.machine;
  const series = [
    { label: `floor: Job create round trip, ${parseConfig([], {}).maxConcurrentCreates} in flight`, samples: samples.floorRtt ?? [], color: '#999999' },
    { label: `floor: ${c.steady.schedules} creates released each second → watch (no operator)`, samples: samples.floorBatch ?? [], color: '#555555' },
    { label: `steady: slot → watch, ${c.steady.schedules} × intervalSeconds 1`, samples: samples.steady ?? [], color: '#1f77b4' },
    { label: `floor batches: second → the API server received the create (audit log): the client's share`, samples: samples.floorClientShare ?? [], color: '#b0b0b0' },
    { label: `steady: slot → the API server received the create (audit log): the operator's share`, samples: samples.steadyOperatorShare ?? [], color: '#aec7e8' },
    { label: `light: slot → watch, ${c.light.schedules} × intervalSeconds 1`, samples: samples.light ?? [], color: '#17becf' },
    { label: `burst: secondcron, ${c.burst.schedules} due at once`, samples: samples.burstOurs ?? [], color: '#2ca02c' },
    { label: `burst: CronJob controller, ${c.burst.schedules} due at once`, samples: samples.burstUpstream ?? [], color: '#d62728' },
    { label: `burst: CronJob controller at kcm's default qps 20 / burst 30`, samples: samples.burstUpstreamDefaultQps ?? [], color: '#ff9896' },
    { label: `scheduler alone: timer lateness, ${c.scheduler.entries}/s`, samples: samples.scheduler ?? [], color: '#9467bd' },
    { label: `herd: ${c.herd.schedules} × "0 * * * * *"`, samples: samples.herdZero ?? [], color: '#8c564b' },
    { label: `herd: ${c.herd.schedules} × "H * * * * *"`, samples: samples.herdHashed ?? [], color: '#e377c2' },
    { label: `flood: ${c.flood.schedules} × 1 s, quiet windows: the operator's share (audit log)`, samples: samples.flood?.quiet ?? [], color: '#bcbd22' },
    { label: `flood: ${c.flood.junkPerWindow} junk tokens per ${c.flood.windowSeconds} s: the operator's share`, samples: samples.flood?.junk ?? [], color: '#7f7f7f' },
    { label: `flood: ${c.flood.connectionAttempts} connection attempts per ${c.flood.windowSeconds} s: the operator's share`, samples: samples.flood?.connections ?? [], color: '#dbdb8d' },
    { label: 'flood: the same junk on a decoy (control): the operator\'s share', samples: samples.flood?.decoy ?? [], color: '#c7c7c7' },
  ];
  const subtitle = `${results.commit.slice(0, 12)} · ${results.date.slice(0, 16)}Z · ${c.quick ? 'QUICK' : 'full'} · ${m.cores}× ${m.cpu_model} · ${m.k8s_version} · load ${m.load_start[0]}`;
  writeFileSync(svgPath, latencySvg('secondcron bench: latency distributions (CDF)', subtitle, series));
  return { jsonPath, svgPath };
}

export function printTable(results: Results): void {
  const rows = tableRows(results);
  process.stdout.write(`\n${textTable(rows)}\n\n`);
  process.stdout.write(`Markdown:\n\n${markdownTable(rows)}\n\n`);
}

function maxOf(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}
