// Our side of one burst round: N new SecondCronJobs due in one second `leadMs` ahead, measured by an
// independent watcher, with the operator's queue gauges sampled and its CPU from /proc.
import type { JobWatcher } from '../../test/cluster/job-watcher.js';
import type { OperatorProcess } from '../../test/cluster/operator-process.js';
import type { KubeRest } from '../../src/kube/rest.js';
import { bulkCreate, scjManifest, scjPath } from '../lib/kube.js';
import { procCpuSeconds, scrape } from '../lib/operator.js';
import type { PromSamples } from '../lib/prom-text.js';
import { say, sleep, sleepUntil, waitUntil } from '../lib/progress.js';
import { round2 } from '../lib/stats.js';
import { type BurstSide, names, side } from './burst-side.js';

/** Max of the operator's queue-depth and in-flight gauges, scraped every 250 ms while `active()` (each scrape costs the operator a little). */
async function sampleQueue(op: OperatorProcess, active: () => boolean): Promise<{ depth: number; inflight: number }> {
  const max = { depth: 0, inflight: 0 };
  while (active()) {
    try {
      const m = await scrape(op);
      max.depth = Math.max(max.depth, m.get('secondcron_job_create_queue_depth') ?? 0);
      max.inflight = Math.max(max.inflight, m.get('secondcron_job_create_inflight') ?? 0);
    } catch {
      // a missed sample is not a result
    }
    await sleep(250);
  }
  return max;
}

export interface OursMeasured {
  side: { side: BurstSide; latencies: number[] };
  busyBeforeSlot: boolean;
  maxQueue: { depth: number; inflight: number };
  delta: PromSamples;
  after: PromSamples;
  windowS: number;
  cpuPct: number | null;
  done: boolean;
}

/** Creates our N schedules (in `namespace`, watched by `ours`) for one second `leadMs` ahead and measures that slot. */
export async function measureOurs(rest: KubeRest, op: OperatorProcess, ours: JobWatcher, namespace: string, n: number, pods: boolean, leadMs: number, prefix: string): Promise<OursMeasured> {
  const slot = Math.ceil(Date.now() / 1000) * 1000 + leadMs;
  const at = new Date(slot);
  const schedule = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
  const b = await bulkCreate(rest, scjPath(namespace), names(prefix, n).map((name) => scjManifest(namespace, name, { schedule }, pods)), 16);
  say(`burst: ${n} SecondCronJobs "${schedule}" created in ${b.ms} ms (slot ${at.toISOString()}, in ${((slot - Date.now()) / 1000).toFixed(1)} s)`);

  // Was the operator still busy adopting the new schedules (finalizer, dry run, status) just before
  // the slot? Writes only: the Lease renewal (get + update) goes on all the time.
  const writesOf = (m: PromSamples): number => m.sum('secondcron_api_requests_total', 'verb="patch"') + m.sum('secondcron_api_requests_total', 'verb="create"');
  await sleepUntil(slot - 1_000);
  const writesBefore = writesOf(await scrape(op));
  await sleepUntil(slot - 200);
  const baseline = await scrape(op);
  const busyBeforeSlot = writesOf(baseline) > writesBefore;
  if (busyBeforeSlot) say('burst: WARNING the operator was still adopting the new schedules at the slot');
  const cpu0 = procCpuSeconds(op.pid as number);
  let sampling = true;
  const queue = sampleQueue(op, () => sampling);
  const done = await waitUntil(() => ours.seen.filter((j) => j.slotMs === slot).length >= n, Math.max(0, slot - Date.now()) + 60_000, 50);
  sampling = false;
  const maxQueue = await queue;
  const after = await scrape(op);
  const windowS = Math.max(0.2, (Date.now() - (slot - 200)) / 1000);
  const cpuPct = round2(((procCpuSeconds(op.pid as number) - cpu0) / windowS) * 100);
  const o = side(ours.seen, n, slot);
  say(`burst: secondcron ${o.side.seen}/${n} Jobs, first ${o.side.first_ms} ms, p50 ${o.side.p50_ms} ms, p99 ${o.side.p99_ms} ms, last ${o.side.last_ms} ms after the slot${done ? '' : ' (TIMED OUT)'}`);
  return { side: o, busyBeforeSlot, maxQueue, delta: after.since(baseline), after, windowS, cpuPct, done };
}
