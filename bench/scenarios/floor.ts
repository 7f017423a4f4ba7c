// Scenario 1: the physical floor. Job creates straight from KubeRest (the operator's own client:
// JSON over undici with one keep-alive dispatcher), sequentially and N at a time (the operator's
// --max-concurrent-creates default), with no scheduler, queue or rate limit in front. The bodies are
// what the operator posts (buildJob of a real SecondCronJob), and the same independent watcher times
// when each Job becomes visible, so "create → watch" is comparable with the steady scenario. The
// batch phase (the steady scenario's shape) runs in a client process of its own (lib/floor-client.ts)
// whose CPU per create, watch decoding included, is the floor for the operator's CPU per Job.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import pLimit from 'p-limit';

import { parseConfig } from '../../src/config.js';
import type { Cluster } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import { type JobManifest, type SecondCronJob, jobsPath } from '../../src/api/resources.js';
import { buildJob } from '../../src/controller/job-builder.js';
import type { KubeRest } from '../../src/kube/rest.js';
import { diesWithParent } from '../../test/cluster/parent-death.js';
import type { FloorClientInput, FloorClientOutput } from '../lib/floor-client.js';
import { drainJobs } from '../lib/job-drain.js';
import { createNamespace, restFor, scjManifest, scjPath } from '../lib/kube.js';
import { operatorNodeArgs, operatorNodeOptions } from '../lib/operator.js';
import { say, waitUntil } from '../lib/progress.js';
import { type Summary, summarize } from '../lib/stats.js';
import { type LatencySplit, type TimedJob, describeSplit, splitLatency } from '../lib/latency-split.js';

const FLOOR_CLIENT = join(dirname(fileURLToPath(import.meta.url)), '..', 'lib', 'floor-client.js');
const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/** The operator's default --max-concurrent-creates: the floor is measured at the operator's concurrency. */
export const FLOOR_CONCURRENCY = parseConfig([], {}).maxConcurrentCreates;

export interface FloorPhase {
  creates: number;
  concurrency: number;
  rtt: Summary;
  createToWatch: Summary;
  perSecond: number;
}

/**
 * The steady scenario's shape without the operator: `size` creates released together on every whole
 * second (N in flight), timed from that second to the watch arrival of each Job, exactly as steady
 * times slot → watch. What is left between the two is the operator's own cost. The creates come
 * from a process of their own (lib/floor-client.ts) that also watches and decodes those Jobs as the
 * operator does: its CPU per create is the floor for the operator's CPU per Job.
 */
export interface FloorBatches {
  batches: number;
  size: number;
  secondToWatch: Summary;
  /** CPU of the floor client (user + system) per 1,000 creates, watch decoding included, s. */
  cpu_s_per_1000_creates: number | null;
  client: { creates: number; deletes: number; cpu_user_s: number; cpu_system_s: number; window_s: number; watch_events: number };
  /** Each Job's second → watch split at the API server's door (its audit log): the floor client's share and the server's. */
  split: LatencySplit | null;
}

export interface FloorResult {
  p50_ms: number | null;
  p99_ms: number | null;
  concurrent: FloorPhase;
  sequential: FloorPhase;
  batches: FloorBatches;
  /** The same at the light scenario's size: what its schedules firing together cost the server alone. */
  light_batches: FloorBatches;
}

export interface FloorSamples {
  rttConcurrent: number[];
  batchToWatch: number[];
  /** The batches' creates: the floor client's share (received at the API server − its second). */
  batchClientShare: number[];
}

export const FLOOR_NAMESPACE = 'bench-floor';
const NS = FLOOR_NAMESPACE;
const OWNER = 'floor';

/** The operator's create: same client, same metadata-only answer. */
function createJob(rest: KubeRest, job: JobManifest): Promise<unknown> {
  return rest.request({ verb: 'create', path: jobsPath(NS), body: job, timeoutMs: 30_000, metadataOnly: true, purpose: 'job_create' });
}

/** Waits until the watcher has seen every named Job; per Job, its watch arrival minus the given start. */
async function watchDelays(watcher: JobWatcher, startedAt: Map<string, number>): Promise<number[]> {
  const allSeen = (): boolean => {
    const names = new Set(watcher.seen.map((j) => j.name));
    return [...startedAt.keys()].every((n) => names.has(n));
  };
  await waitUntil(allSeen, 30_000);
  const arrived = new Map(watcher.seen.map((j) => [j.name, j.arrivedMs]));
  return [...startedAt].flatMap(([name, start]) => {
    const a = arrived.get(name);
    return a === undefined ? [] : [a - start];
  });
}

async function phase(rest: KubeRest, watcher: JobWatcher, scj: SecondCronJob, firstSlotS: number, creates: number, concurrency: number): Promise<{ p: FloorPhase; rtt: number[]; watch: number[] }> {
  const limit = pLimit(concurrency);
  const rtt: number[] = [];
  const sentAt = new Map<string, number>();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: creates }, (_, i) =>
      limit(async () => {
        const job = buildJob(scj, (firstSlotS + i) * 1000);
        sentAt.set(job.metadata.name, Date.now());
        const start = performance.now();
        await createJob(rest, job);
        rtt.push(performance.now() - start);
      }),
    ),
  );
  const ms = performance.now() - t0;
  const watch = await watchDelays(watcher, sentAt);
  return {
    p: { creates, concurrency, rtt: summarize(rtt), createToWatch: summarize(watch), perSecond: Math.round((creates / ms) * 1000) },
    rtt,
    watch,
  };
}

/** Runs lib/floor-client.js in its own Node process (the operator's Node flags) and returns its answer. */
export function runFloorClient(input: FloorClientInput): Promise<FloorClientOutput> {
  const [command, args] = diesWithParent(process.execPath, [...operatorNodeArgs(), FLOOR_CLIENT]);
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: operatorNodeOptions() };
  const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stdin.end(JSON.stringify(input));
  const limit = setTimeout(() => child.kill('SIGKILL'), (input.batches + 90) * 1000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      if (code === 0) resolve(JSON.parse(Buffer.concat(out).toString('utf8')) as FloorClientOutput);
      else reject(new Error(`floor client exited with ${code ?? signal} (its error is above)`));
    });
  });
}

/** One batch phase from the floor client's own process, its Jobs timed by `watcher` (of `input.namespace`) and split by the audit log. */
export async function floorBatchPhase(watcher: JobWatcher, input: FloorClientInput, auditLogPath: string | undefined): Promise<{ b: FloorBatches; samples: number[]; clientShares: number[] }> {
  const out = await runFloorClient(input);
  const samples = await watchDelays(watcher, new Map(out.released));
  const arrived = new Map(watcher.seen.map((j) => [j.name, j.arrivedMs]));
  const timed: TimedJob[] = out.released.flatMap(([name, second]) => {
    const a = arrived.get(name);
    return a === undefined ? [] : [{ namespace: input.namespace, name, dueMs: second, arrivedMs: a }];
  });
  const measured = await splitLatency(auditLogPath, timed);
  const cpuS = out.cpu_user_s + out.cpu_system_s;
  const client = { creates: out.creates, deletes: out.deletes, cpu_user_s: round3(out.cpu_user_s), cpu_system_s: round3(out.cpu_system_s), window_s: round3(out.window_s), watch_events: out.watch_events };
  return {
    b: { batches: input.batches, size: input.size, secondToWatch: summarize(samples), cpu_s_per_1000_creates: out.creates ? round3((cpuS / out.creates) * 1000) : null, client, split: measured?.split ?? null },
    samples,
    clientShares: measured?.clientMs ?? [],
  };
}

/**
 * The namespace and the owner of the floor's Jobs: a real, suspended SecondCronJob, so the Jobs carry
 * a valid controller reference exactly like the operator's.
 */
export async function floorOwner(rest: KubeRest, namespace: string, pods: boolean): Promise<SecondCronJob> {
  await createNamespace(rest, namespace);
  return rest.request<SecondCronJob>({
    verb: 'create',
    path: scjPath(namespace),
    body: scjManifest(namespace, OWNER, { intervalSeconds: 3600, suspend: true }, pods),
  });
}

export async function runFloor(cluster: Cluster, opts: { sequential: number; concurrent: number; batches: number; batchSize: number; lightBatchSize: number; pods: boolean }): Promise<{ result: FloorResult; samples: FloorSamples }> {
  const rest = restFor(cluster.kubeconfigPath);
  const scj = await floorOwner(rest, NS, opts.pods);
  const watcher = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: NS }).start();
  try {
    let slot = 1_000_000_000;
    say('floor: warming up (50 creates)');
    await phase(rest, watcher, scj, slot, 50, FLOOR_CONCURRENCY);
    slot += 50;
    say(`floor: ${opts.sequential} sequential creates`);
    const seq = await phase(rest, watcher, scj, slot, opts.sequential, 1);
    slot += opts.sequential;
    say(`  round trip p50 ${seq.p.rtt.p50_ms} ms p99 ${seq.p.rtt.p99_ms} ms; create → watch p50 ${seq.p.createToWatch.p50_ms} ms p99 ${seq.p.createToWatch.p99_ms} ms; ${seq.p.perSecond}/s`);
    say(`floor: ${opts.concurrent} creates, ${FLOOR_CONCURRENCY} in flight`);
    const conc = await phase(rest, watcher, scj, slot, opts.concurrent, FLOOR_CONCURRENCY);
    say(`  round trip p50 ${conc.p.rtt.p50_ms} ms p99 ${conc.p.rtt.p99_ms} ms; create → watch p50 ${conc.p.createToWatch.p50_ms} ms p99 ${conc.p.createToWatch.p99_ms} ms; ${conc.p.perSecond}/s`);
    slot += opts.concurrent;
    /** `size` creates released on each of opts.batches whole seconds, from the floor client's process. */
    const batches = async (size: number, shape: string): Promise<{ b: FloorBatches; samples: number[]; clientShares: number[] }> => {
      // The Job controller's updates of the earlier phases' Jobs would otherwise reach the floor
      // client's watch during its CPU window: the operator decodes only its own Jobs' events.
      say('floor: waiting for the Job controller to finish the Jobs so far');
      await drainJobs(cluster.kubeconfigPath, NS, 180_000);
      say(`floor: ${opts.batches} batches of ${size} creates released on whole seconds (${shape} without the operator) from a client process of its own`);
      const r = await floorBatchPhase(watcher, { kubeconfigPath: cluster.kubeconfigPath, namespace: NS, scj, firstSlotS: slot, batches: opts.batches, size, concurrency: FLOOR_CONCURRENCY }, cluster.auditLogPath);
      slot += (opts.batches + 1) * size; // and one warm-up batch
      const b = r.b.secondToWatch;
      say(`  second → watch p50 ${b.p50_ms} ms p90 ${b.p90_ms} ms p99 ${b.p99_ms} ms max ${b.max_ms} ms; client CPU ${r.b.cpu_s_per_1000_creates} s per 1000 creates (${r.b.client.watch_events} watch events decoded, ${r.b.client.deletes} history deletions sent)`);
      say(`  latency split at the API server: ${describeSplit(r.b.split, 'floor client')}`);
      return r;
    };
    const batch = await batches(opts.batchSize, 'the steady scenario');
    const light = await batches(opts.lightBatchSize, 'the light scenario');
    return {
      result: { p50_ms: conc.p.rtt.p50_ms, p99_ms: conc.p.rtt.p99_ms, concurrent: conc.p, sequential: seq.p, batches: batch.b, light_batches: light.b },
      samples: { rttConcurrent: conc.rtt, batchToWatch: batch.samples, batchClientShare: batch.clientShares },
    };
  } finally {
    watcher.stop();
  }
}
