// `make bench-freeze`: recovery after an API server freeze, repeated (issue 37). Not in CI.
//
// Two replicas (one Lease, default election timings) on a private control plane; 100 SecondCronJobs at
// intervalSeconds 1 with startingDeadlineSeconds 5. FREEZE_RUNS times: kube-apiserver stopped with
// SIGSTOP for 30 s, SIGCONT, then a 60 s window. Judged from the API server's audit log, not from the
// operators' counters: per slot, how many schedules got their Job stored and answered within the
// slot's own second (helpers/slot-recovery.ts); per run, the time from SIGCONT to the first slot from
// which every slot of the window has >= 95 % of the schedules on time, and the slots below 95 %.
// Also, per second after the thaw: the operators' requests by kind with the API server's latency
// (requestReceivedTimestamp → stageTimestamp), and the leader's in-flight creates, queue depth and
// event-loop delay. Writes bench/results/freeze.json.
//
//   FREEZE_RUNS (5)  FREEZE_SCHEDULES (100)  FREEZE_SECONDS (30)  FREEZE_WINDOW_SECONDS (60)
//   BENCH_PODS=1: every Job runs a (kwok) pod, as a user's would; BENCH_CONTROL_PLANE_GOGC (400, as the bench)
import { createReadStream, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import { type Cluster, startCluster } from '../test/cluster/cluster.js';
import { installCrd } from '../test/cluster/crd.js';
import type { OperatorProcess } from '../test/cluster/operator-process.js';
import { auditedJobWrites } from '../test/integration/helpers/audit-creates.js';
import { type SlotOnTime, describeShares, slotsBelow, slotsOnTime, sustainedFrom } from '../test/integration/helpers/slot-recovery.js';
import { SOAK_KCM_LIMITS, controlPlaneGoGC } from './config.js';
import { bulkCreate, createNamespace, restFor, scjManifest, scjPath } from './lib/kube.js';
import { commit, load } from './lib/machine.js';
import { finishOperator, makeOperator } from './lib/operator.js';
import { PromSamples } from './lib/prom-text.js';
import { say, sleep, sleepUntil } from './lib/progress.js';

const NS = 'bench-freeze';
const USER = 'admin';
const ON_TIME_SHARE = 0.95;
/** Slots judged from this long after SIGCONT (issue 37: sustained from 2 s after the return). */
const GRACE_MS = 2_000;

const env = (name: string, fallback: number): number => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number, not ${process.env[name]}`);
  return v;
};

interface Sample {
  atMs: number;
  replica: string;
  leader: boolean;
  inflight: number;
  queue: number;
  lagMaxMs: number;
}

export interface FreezeRun {
  run: number;
  thawed_at: string;
  /** SIGCONT → first slot from which every slot of the window is >= 95 % on time; null: never. */
  sustained_ms: number | null;
  /** Slots from SIGCONT + 2 s to the window's end below 95 % on time. */
  slots_below: number;
  /** The worst slot from +2 s; received in time / latest received: the operator's share; slowest answer: the server's. */
  worst_slot: { at_s: number; on_time: number; with_job: number; received_in_time: number; latest_received_ms: number; slowest_answer_ms: number } | null;
  /** Per second after SIGCONT: [on time, with a Job]. */
  per_slot: [number, number][];
  /** Per second after SIGCONT, the operators' requests by kind: count and the API server's max latency (ms). */
  requests: Record<string, { n: number; max_ms: number; p50_ms: number }>[];
  /** Per second after SIGCONT (the leader's): max in-flight creates, max queue depth, max event-loop delay (ms). */
  leader: { inflight: number; queue: number; lag_ms: number; who: string }[];
}

async function main(): Promise<number> {
  const runs = env('FREEZE_RUNS', 5);
  const schedules = env('FREEZE_SCHEDULES', 100);
  const freezeMs = env('FREEZE_SECONDS', 30) * 1000;
  const windowMs = env('FREEZE_WINDOW_SECONDS', 60) * 1000;
  const need = Math.ceil(schedules * ON_TIME_SHARE);
  const pods = process.env.BENCH_PODS === '1';
  say(`freeze: ${runs} × (SIGSTOP ${freezeMs / 1000} s, ${windowMs / 1000} s window), ${schedules} × 1 s, startingDeadlineSeconds 5, two replicas${pods ? ', a pod per Job' : ''}; control plane GOGC ${controlPlaneGoGC(process.env)}; load ${load().join(' ')}`);
  const cluster: Cluster = await startCluster({ nodes: 1, auditUsers: [USER], goGC: controlPlaneGoGC(process.env) });
  const replicas: OperatorProcess[] = [];
  const results: FreezeRun[] = [];
  try {
    await installCrd((args) => cluster.kubectl(args));
    await cluster.restartControllerManager(SOAK_KCM_LIMITS);
    const rest = restFor(cluster.kubeconfigPath);
    await createNamespace(rest, NS);
    for (const id of ['freeze-a', 'freeze-b']) {
      const op = makeOperator(cluster, NS, id);
      await op.start();
      await op.ready(60_000);
      replicas.push(op);
    }
    const names = Array.from({ length: schedules }, (_, i) => `tick-${String(i).padStart(3, '0')}`);
    await bulkCreate(rest, scjPath(NS), names.map((n) => scjManifest(NS, n, { intervalSeconds: 1, startingDeadlineSeconds: 5 }, pods)), 16);
    await sleep(20_000);

    const samples: Sample[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const atMs = Date.now();
        await Promise.all(replicas.map(async (op) => {
          const m = await scrapeSome(op).catch(() => undefined);
          if (!m) return;
          samples.push({
            atMs,
            replica: op.identity ?? '?',
            leader: m.get('secondcron_leader') === 1,
            inflight: m.get('secondcron_job_create_inflight') ?? 0,
            queue: m.get('secondcron_job_create_queue_depth') ?? 0,
            lagMaxMs: (m.get('nodejs_eventloop_lag_max_seconds') ?? 0) * 1000,
          });
        }));
        await sleep(250 - (Date.now() - atMs));
      }
    })();

    for (let run = 1; run <= runs; run++) {
      await sleepUntil(Math.floor(Date.now() / 1000) * 1000 + 1_500);
      cluster.pauseApiServer();
      await sleep(freezeMs);
      const thawedMs = Date.now();
      cluster.resumeApiServer();
      await sleep(windowMs + 2_000);
      const writes = await auditedJobWrites({ namespace: NS }, { path: requireAudit(cluster) });
      const fromMs = Math.ceil((thawedMs + GRACE_MS) / 1000) * 1000;
      const toMs = thawedMs + windowMs;
      const perSlot = slotsOnTime(writes, names, Math.ceil(thawedMs / 1000) * 1000, toMs);
      const judged = perSlot.filter((s) => s.slotMs >= fromMs);
      const sustained = sustainedFrom(judged, need);
      const below = slotsBelow(judged, need);
      const worst = below[0];
      const requests = await requestsPerSecond(requireAudit(cluster), thawedMs, windowMs);
      results.push({
        run,
        thawed_at: new Date(thawedMs).toISOString(),
        sustained_ms: sustained === undefined ? null : sustainedSince(perSlot, need, thawedMs),
        slots_below: below.length,
        worst_slot: worst
          ? { at_s: Math.round((worst.slotMs - thawedMs) / 100) / 10, on_time: worst.onTime, with_job: worst.withJob, received_in_time: worst.receivedInTime, latest_received_ms: worst.latestReceivedMs, slowest_answer_ms: worst.slowestAnswerMs }
          : null,
        per_slot: perSlot.map((s) => [s.onTime, s.withJob]),
        requests,
        leader: leaderPerSecond(samples, thawedMs, windowMs),
      });
      const r = results.at(-1) as FreezeRun;
      say(`freeze run ${run}: sustained on time ${r.sustained_ms === null ? 'never' : `${(r.sustained_ms / 1000).toFixed(2)} s`} after SIGCONT; ${r.slots_below} slot(s) from +2 s below ${need}/${schedules}${worst ? `, worst at +${r.worst_slot?.at_s} s: ${describeShares(worst)}` : ''}`);
      say(`  on time per second after SIGCONT: ${perSlot.map((s) => s.onTime).join(' ')}`);
      await sleep(15_000);
    }
    sampling = false;
    await sampler;
  } finally {
    for (const op of replicas) await finishOperator(op).catch(() => undefined);
    await cluster.stop();
  }
  const out = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'freeze.json'), JSON.stringify({ commit: commit(), date: new Date().toISOString(), load_end: load(), runs: results }, null, 1) + '\n');
  say(`wrote bench/results/freeze.json; sustained (s): ${results.map((r) => (r.sustained_ms === null ? 'never' : (r.sustained_ms / 1000).toFixed(2))).join(', ')}; slots below: ${results.map((r) => r.slots_below).join(', ')}`);
  return 0;
}

/** SIGCONT → the first slot of the sustained run (slots before SIGCONT + 2 s count too when they are on time). */
function sustainedSince(perSlot: readonly SlotOnTime[], need: number, thawedMs: number): number | null {
  const from = sustainedFrom(perSlot, need);
  return from === undefined ? null : Math.max(0, from - thawedMs);
}

function requireAudit(cluster: Cluster): string {
  if (!cluster.auditLogPath) throw new Error('freeze: the cluster writes no audit log');
  return cluster.auditLogPath;
}

const FAMILIES = new URLSearchParams([
  ['name[]', 'secondcron_leader'],
  ['name[]', 'secondcron_job_create_inflight'],
  ['name[]', 'secondcron_job_create_queue_depth'],
  // prom-client sets every event-loop gauge in nodejs_eventloop_lag_seconds' collect: without it the
  // max is never updated. Each scrape reads the max since the previous one.
  ['name[]', 'nodejs_eventloop_lag_seconds'],
  ['name[]', 'nodejs_eventloop_lag_max_seconds'],
]);

async function scrapeSome(op: OperatorProcess): Promise<PromSamples> {
  const res = await fetch(`http://127.0.0.1:${op.metricsPort}/metrics?${FAMILIES}`, { signal: AbortSignal.timeout(2_000) });
  return new PromSamples(await res.text());
}

function leaderPerSecond(samples: readonly Sample[], thawedMs: number, windowMs: number): FreezeRun['leader'] {
  const out: FreezeRun['leader'] = [];
  for (let s = 0; s * 1000 < windowMs; s++) {
    const inSecond = samples.filter((x) => x.leader && x.atMs >= thawedMs + s * 1000 && x.atMs < thawedMs + (s + 1) * 1000);
    out.push({
      inflight: Math.max(0, ...inSecond.map((x) => x.inflight)),
      queue: Math.max(0, ...inSecond.map((x) => x.queue)),
      lag_ms: Math.round(Math.max(0, ...inSecond.map((x) => x.lagMaxMs))),
      who: [...new Set(inSecond.map((x) => x.replica))].join('+'),
    });
  }
  return out;
}

interface AuditLine {
  auditID: string;
  stage: string;
  verb: string;
  userAgent?: string;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  objectRef?: { resource?: string; subresource?: string };
}

/** The operators' completed requests received in each second after SIGCONT, by "verb resource[/sub]". */
async function requestsPerSecond(path: string, thawedMs: number, windowMs: number): Promise<FreezeRun['requests']> {
  const seconds: Map<string, number[]>[] = Array.from({ length: Math.ceil(windowMs / 1000) }, () => new Map());
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.includes('secondcron/') || !line.includes('ResponseComplete')) continue;
    const e = JSON.parse(line) as AuditLine;
    if (e.stage !== 'ResponseComplete' || !e.userAgent?.startsWith('secondcron/')) continue;
    const at = Date.parse(e.requestReceivedTimestamp);
    const s = Math.floor((at - thawedMs) / 1000);
    const bucket = seconds[s];
    if (s < 0 || !bucket) continue;
    const kind = `${e.verb} ${e.objectRef?.resource ?? 'other'}${e.objectRef?.subresource ? '/' + e.objectRef.subresource : ''}`;
    const list = bucket.get(kind) ?? [];
    list.push(Date.parse(e.stageTimestamp) - at);
    bucket.set(kind, list);
  }
  return seconds.map((m) => Object.fromEntries([...m].map(([k, v]) => {
    const sorted = [...v].sort((a, b) => a - b);
    return [k, { n: v.length, max_ms: Math.round(sorted.at(-1) ?? 0), p50_ms: Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0) }];
  })));
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench-freeze failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
