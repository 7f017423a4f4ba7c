// One side of a burst: the Jobs of N schedules due in the same instant, as an independent watcher
// saw them arrive (watch arrival minus the slot the controller stamped on the Job).
import type { JobWatcher, SeenJob } from '../../test/cluster/job-watcher.js';
import { say, waitUntil } from '../lib/progress.js';
import { summarize } from '../lib/stats.js';

export interface BurstSide {
  schedules: number;
  slot: string;
  seen: number;
  duplicates: number;
  first_ms: number | null;
  last_ms: number | null;
  p50_ms: number | null;
  p99_ms: number | null;
  /** Jobs per second between the first and the last arrival. */
  jobs_per_s: number | null;
}

export function side(jobs: SeenJob[], schedules: number, slotMs: number): { side: BurstSide; latencies: number[] } {
  const atSlot = jobs.filter((j) => j.slotMs === slotMs);
  const perOwner = new Map<string, number>();
  for (const j of atSlot) perOwner.set(j.owner, (perOwner.get(j.owner) ?? 0) + 1);
  const latencies = atSlot.map((j) => j.arrivedMs - slotMs);
  const s = summarize(latencies);
  const spanS = s.max_ms !== null && s.min_ms !== null ? (s.max_ms - s.min_ms) / 1000 : 0;
  return {
    side: {
      schedules,
      slot: new Date(slotMs).toISOString(),
      seen: perOwner.size,
      duplicates: atSlot.length - perOwner.size,
      first_ms: s.min_ms,
      last_ms: s.max_ms,
      p50_ms: s.p50_ms,
      p99_ms: s.p99_ms,
      jobs_per_s: spanS > 0 ? Math.round(atSlot.length / spanS) : null,
    },
    latencies,
  };
}

export async function measureUpstream(upstream: JobWatcher, n: number, slot: number, label = 'CronJob'): Promise<{ side: BurstSide; latencies: number[]; done: boolean }> {
  if (Date.now() < slot) say(`burst: waiting for the ${label} slot ${new Date(slot).toISOString()} (${((slot - Date.now()) / 1000).toFixed(0)} s)`);
  const done = await waitUntil(() => upstream.seen.filter((j) => j.slotMs === slot).length >= n, Math.max(0, slot - Date.now()) + 120_000, 100);
  const c = side(upstream.seen, n, slot);
  say(`burst: ${label} ${c.side.seen}/${n} Jobs, first ${c.side.first_ms} ms, p50 ${c.side.p50_ms} ms, p99 ${c.side.p99_ms} ms, last ${c.side.last_ms} ms after the slot${done ? '' : ' (TIMED OUT)'}`);
  return { ...c, done };
}

export const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
