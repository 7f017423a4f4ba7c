// The missed-slot rule (CronJob v2): after downtime or a failover only the most recent missed slot
// may run, and only within startingDeadlineSeconds; never a burst of backfill.
import type { SlotSource } from '../schedule/index.js';
import { catchUp } from '../scheduler/index.js';

export interface MissedSlots {
  /** The most recent slot that fell due while nobody scheduled it. */
  latestMs: number;
  /** Older slots in the same gap; they are counted as missed and never run. */
  olderCount: number;
}

// Beyond this many, the older slots are counted by extrapolation (exact for intervals).
const COUNT_CAP = 100_000;

/** Slots s with lastKnownMs < s <= nowMs, summarised; null if none fell due. */
export function findMissedSlots(source: SlotSource, lastKnownMs: number, nowMs: number): MissedSlots | null {
  const first = source.next(lastKnownMs);
  if (first === null || first > nowMs) return null;
  const c = catchUp(source, first, nowMs, COUNT_CAP);
  return { latestMs: c.slotMs, olderCount: c.skipped };
}
