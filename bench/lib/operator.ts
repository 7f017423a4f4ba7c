// One operator replica for one scenario, scoped to that scenario's namespace (its Lease lives there
// too, so scenarios never wait on each other's Lease), with the default flags for everything that
// touches performance (--max-concurrent-creates, --qps, --burst) and the V8 heap limit the Helm chart
// deploys it with (heapLimitMiB in values.yaml), so the figures are those of an installed operator.
//
// BENCH_CPU_PROF=<dir>: the operator is started with cpu-profile-hook.js preloaded and a profile of
// its whole run is written to <dir> before it is stopped (see finishOperator).
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

import { load as parseYaml } from 'js-yaml';

import type { Cluster } from '../../test/cluster/cluster.js';
import { OperatorProcess } from '../../test/cluster/operator-process.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { PromSamples } from './prom-text.js';
import { say, waitUntil } from './progress.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const HOOK = join(HERE, 'cpu-profile-hook.js');
/**
 * The operator as compiled beside the bench (build/src/main.js): the same sources as dist/main.js
 * from the same compiler options, without a second compilation in `make bench`.
 */
const OPERATOR_MAIN = join(HERE, '..', '..', 'src', 'main.js');
const CHART_VALUES = join(HERE, '..', '..', '..', 'helm', 'secondcron', 'values.yaml');
const DOCKERFILE = join(HERE, '..', '..', '..', 'Dockerfile');

/** node's own flags in the image's ENTRYPOINT (["node", <flags>…, "dist/main.js"]). */
export function imageNodeArgs(): string[] {
  const line = readFileSync(DOCKERFILE, 'utf8').split('\n').find((l) => l.startsWith('ENTRYPOINT '));
  const words = line ? (JSON.parse(line.slice('ENTRYPOINT '.length)) as unknown) : undefined;
  if (!Array.isArray(words) || words[0] !== 'node' || words.at(-1) !== 'dist/main.js' || !words.every((w) => typeof w === 'string')) {
    throw new Error(`bench: the Dockerfile's ENTRYPOINT is not ["node", …flags, "dist/main.js"]: ${line ?? 'none'}`);
  }
  return words.slice(1, -1) as string[];
}

/**
 * The `ENV` lines of the image's runtime stage (`ENV KEY=value`, one each), so the operator runs in
 * the bench with the environment it has in a pod (glibc's malloc settings among them).
 * BENCH_IMAGE_ENV=none leaves them out.
 */
function imageEnv(): Record<string, string> {
  if (process.env.BENCH_IMAGE_ENV === 'none') return {};
  const lines = readFileSync(DOCKERFILE, 'utf8').split('\n');
  const runtime = lines.findIndex((l) => /^FROM \S+ AS runtime$/.test(l));
  if (runtime < 0) throw new Error('bench: the Dockerfile has no "FROM … AS runtime" stage');
  const env: Record<string, string> = {};
  for (const line of lines.slice(runtime + 1).filter((l) => l.startsWith('ENV '))) {
    const m = /^ENV ([A-Za-z_][A-Za-z0-9_]*)=(\S+)$/.exec(line);
    if (!m) throw new Error(`bench: a Dockerfile ENV line not of the form ENV KEY=value: ${line}`);
    env[m[1]!] = m[2]!;
  }
  return env;
}

/** The image's ENV values as the operator gets them: the bench's own environment wins. */
export function operatorImageEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(imageEnv()).map(([k, v]) => [k, process.env[k] ?? v]));
}

/** The operator's node flags in the bench: BENCH_NODE_ARGS (space-separated; "" for none), else the image's. */
export function operatorNodeArgs(): string[] {
  const env = process.env.BENCH_NODE_ARGS;
  return env === undefined ? imageNodeArgs() : env.split(' ').filter(Boolean);
}

/** NODE_OPTIONS as the chart sets them by default. */
export function chartNodeOptions(): string {
  const values = parseYaml(readFileSync(CHART_VALUES, 'utf8')) as { heapLimitMiB?: number | null };
  // Kept in step with templates/deployment.yaml by test/integration/helm-chart.test.ts.
  return typeof values.heapLimitMiB === 'number' ? `--max-old-space-size=${values.heapLimitMiB} --max-semi-space-size=4` : '';
}

/** The operator's Node flags in the bench: BENCH_NODE_OPTIONS (e.g. "" for V8's defaults), else the chart's. */
export function operatorNodeOptions(): string {
  return process.env.BENCH_NODE_OPTIONS ?? chartNodeOptions();
}

/**
 * `identity` tells replicas of one namespace apart (the failover scenario runs three). `metricsSecure`:
 * /metrics as the binary's default serves it (HTTPS, authorized); otherwise plain HTTP for the polling.
 * `args`: operator flags of the scenario's own (the burst's `--qps`/`--burst` at kube-controller-manager's).
 */
export function makeOperator(cluster: Cluster, namespace: string, identity = `bench-${namespace}`, opts: { metricsSecure?: boolean; args?: string[] } = {}): OperatorProcess {
  const profDir = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
  if (profDir) mkdirSync(profDir, { recursive: true });
  const snapDir = heapSnapshotDir();
  const nodeOptions = [
    profDir ? `--import ${HOOK}` : '',
    snapDir ? `--heapsnapshot-signal=${HEAP_SNAPSHOT_SIGNAL} --diagnostic-dir=${snapDir}` : '',
    operatorNodeOptions(),
  ]
    .filter(Boolean)
    .join(' ');
  const env: NodeJS.ProcessEnv = { ...cluster.env, ...operatorImageEnv(), ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) };
  if (profDir) Object.assign(env, { BENCH_CPU_PROF: profDir, BENCH_CPU_PROF_NAME: `operator-${identity}` });
  return new OperatorProcess({
    kubeconfig: cluster.kubeconfigPath,
    env,
    namespaces: [namespace],
    identity,
    // BENCH_OPERATOR_MAIN: another build of the operator (e.g. a patched copy), for experiments.
    mainJs: process.env.BENCH_OPERATOR_MAIN ? resolve(process.env.BENCH_OPERATOR_MAIN) : OPERATOR_MAIN,
    nodeArgs: operatorNodeArgs(),
    logLevel: 'info',
    // BENCH_OPERATOR_ARGS: extra operator flags (space-separated), e.g. --per-schedule-metrics=false.
    metricsSecure: opts.metricsSecure === true,
    args: ['--leader-election-namespace', namespace, ...(opts.args ?? []), ...(process.env.BENCH_OPERATOR_ARGS ?? '').split(' ').filter(Boolean)],
  });
}

/**
 * The operator's own families (its registry), asked for by name (`/metrics?name[]=…`): the bench's
 * polling leaves out the per-schedule gauges (80,000 samples at 10,000 schedules), so what the
 * operator spends on /metrics is what a Prometheus costs it, not what the bench does (issue 24).
 */
const OPERATOR_FAMILIES = new URLSearchParams(new Metrics(false).registry.getMetricsAsArray().map((m): [string, string] => ['name[]', m.name]));
for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes']) {
  OPERATOR_FAMILIES.append('name[]', name);
}

/** The operator's families from /metrics with a time limit: an operator whose event loop is stuck must not stall the bench. */
export async function scrape(op: OperatorProcess, timeoutMs = 5_000): Promise<PromSamples> {
  const res = await fetch(`http://127.0.0.1:${op.metricsPort}/metrics?${OPERATOR_FAMILIES}`, { signal: AbortSignal.timeout(timeoutMs) });
  return new PromSamples(await res.text());
}

export interface ScrapeCost {
  /** Median of `times` scrapes, first byte asked → last byte received, ms. */
  ms: number;
  bytes: number;
  /** Sample lines (not comments). */
  samples: number;
}

/**
 * Times whole /metrics scrapes as Prometheus makes them (`Accept-Encoding: gzip`, bytes as sent) or
 * uncompressed (`identity`). node:http, not fetch: fetch would decompress and hide the wire size.
 */
export async function scrapeCost(op: OperatorProcess, encoding: 'gzip' | 'identity', times = 5): Promise<ScrapeCost> {
  const runs: { ms: number; body: Buffer }[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    const body = await new Promise<Buffer>((resolveBody, reject) => {
      const req = httpGet(`http://127.0.0.1:${op.metricsPort}/metrics`, { headers: { 'accept-encoding': encoding }, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolveBody(Buffer.concat(chunks)));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('scrape timed out')));
      req.on('error', reject);
    });
    runs.push({ ms: performance.now() - t0, body });
  }
  const sorted = [...runs].sort((a, b) => a.ms - b.ms);
  const last = runs[runs.length - 1] as { body: Buffer };
  const text = encoding === 'gzip' ? gunzipSync(last.body).toString('utf8') : last.body.toString('utf8');
  return {
    ms: (sorted[Math.floor(sorted.length / 2)] as { ms: number }).ms,
    bytes: last.body.length,
    samples: text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length,
  };
}

/**
 * BENCH_HEAP_SNAPSHOT=<dir> (not with BENCH_CPU_PROF, which has the same signal): the scale scenario
 * has its operator write a V8 heap snapshot into <dir> after the idle window (Node's
 * --heapsnapshot-signal), to see where the memory at 10,000 schedules goes.
 */
const HEAP_SNAPSHOT_SIGNAL = 'SIGUSR2';

function heapSnapshotDir(): string | undefined {
  if (!process.env.BENCH_HEAP_SNAPSHOT || process.env.BENCH_CPU_PROF) return undefined;
  const dir = resolve(process.env.BENCH_HEAP_SNAPSHOT);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes a heap snapshot when BENCH_HEAP_SNAPSHOT is set; resolves once the file is complete, true if it was written. */
export async function heapSnapshot(op: OperatorProcess): Promise<boolean> {
  const dir = heapSnapshotDir();
  if (!dir || op.pid === undefined) return false;
  const before = new Set(readdirSync(dir));
  process.kill(op.pid, HEAP_SNAPSHOT_SIGNAL);
  // Written synchronously by the operator's main thread: /metrics answers again once it is done.
  const written = await waitUntil(async () => readdirSync(dir).some((f) => !before.has(f)) && (await scrape(op, 60_000)) !== undefined, 120_000, 1_000);
  say(written ? `  heap snapshot of ${op.identity} written to ${dir}` : `  no heap snapshot from ${op.identity} within 120 s`);
  return written;
}

/** Starts the operator and waits until it is Ready and holds the Lease. */
export async function startLeadingOperator(cluster: Cluster, namespace: string, args: string[] = []): Promise<OperatorProcess> {
  const op = makeOperator(cluster, namespace, undefined, { args });
  await op.start();
  await op.ready(60_000);
  const leading = await waitUntil(async () => (await scrape(op)).get('secondcron_leader') === 1, 30_000);
  if (!leading) throw new Error(`operator in ${namespace} did not become leader within 30 s\n${op.logs(20)}`);
  return op;
}

/** Writes the CPU profile (when profiling) and stops the operator, removing its log directory. */
export async function finishOperator(op: OperatorProcess): Promise<void> {
  const dir = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
  if (dir && op.running && op.pid !== undefined) {
    const before = existsSync(dir) ? readdirSync(dir).length : 0;
    process.kill(op.pid, 'SIGUSR2');
    const written = await waitUntil(() => readdirSync(dir).length > before, 60_000, 250);
    say(written ? `  CPU profile of ${op.identity} written to ${dir}` : `  no CPU profile from ${op.identity} within 60 s`);
    // Keep the log beside the profile: it explains the timeline.
    writeLog(dir, op);
  }
  await op.dispose();
}

function writeLog(dir: string, op: OperatorProcess): void {
  try {
    const text = op.logs();
    if (text) writeFileSync(join(dir, `${op.identity ?? 'operator'}-${Date.now()}.log`), text);
  } catch {
    // the log is a convenience
  }
}

/** CPU seconds (user + system) of a live process from /proc: independent of the process itself. */
export function procCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14, 15 of stat)
  return ticks / 100; // USER_HZ is 100 on Linux
}

/** VmHWM (peak resident set) and VmRSS of a live process, MiB. */
export function procMemoryMiB(pid: number): { rss: number; hwm: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 };
}

/** Where an operator's resident memory is, MiB: the kernel's split (/proc) and V8's (its /metrics), read together. */
export interface MemoryBreakdown {
  rss: number;
  /** Anonymous pages: the heap, buffers, stacks and the allocator's arenas. */
  rss_anon: number;
  /** File-backed pages: the node binary's code and data, shared libraries. */
  rss_file: number;
  heap_used: number;
  /** What V8 holds for its heap (used or not): nodejs_heap_size_total_bytes. */
  heap_committed: number;
  /** Memory of JS objects held outside V8's heap (Buffers): nodejs_external_memory_bytes. */
  external: number;
  /** rss_anon − heap_committed − external, computed: code space outside the heap, stacks, malloc's arenas and what they keep. */
  anon_outside_heap: number;
}

export async function memoryBreakdown(op: OperatorProcess): Promise<MemoryBreakdown> {
  const m = await scrape(op, 30_000);
  const proc = procMemoryMiB(op.pid as number);
  const mib = (name: string): number => (m.get(name) ?? NaN) / 2 ** 20;
  const [heapCommitted, external] = [mib('nodejs_heap_size_total_bytes'), mib('nodejs_external_memory_bytes')];
  const r2 = (v: number): number => Math.round(v * 100) / 100;
  return {
    rss: r2(proc.rss),
    rss_anon: r2(proc.anon),
    rss_file: r2(proc.file),
    heap_used: r2(mib('nodejs_heap_size_used_bytes')),
    heap_committed: r2(heapCommitted),
    external: r2(external),
    anon_outside_heap: r2(proc.anon - heapCommitted - external),
  };
}
