// The missed-slot rule (CronJob v2): after downtime or a failover only the most recent missed slot
// may run, and only within startingDeadlineSeconds; never a burst of backfill.
import { type SlotSource, latestSlotAtOrBefore } from '../schedule/index.js';

export interface MissedSlots {
  /** The most recent slot that fell due while nobody scheduled it. */
  latestMs: number;
  /** Older slots in the same gap; they are counted as missed and never run. */
  olderCount: number;
}

const COUNT_CAP = 100_000;

/** Slots s with lastKnownMs < s <= nowMs, summarised; null if none fell due. */
export function findMissedSlots(source: SlotSource, lastKnownMs: number, nowMs: number): MissedSlots | null {
  const latest = latestSlotAtOrBefore(source, nowMs, lastKnownMs);
  if (latest === null) return null;
  let olderCount = 0;
  for (let s = source.next(lastKnownMs); s !== null && s < latest && olderCount < COUNT_CAP; s = source.next(s)) olderCount++;
  return { latestMs: latest, olderCount };
}
