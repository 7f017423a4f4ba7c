// The missed-slot rule (CronJob v2): of the slots that fell due since the last decided one, only the
// most recent may run, and only within startingDeadlineSeconds; never a burst of backfill.
import type { SlotSource } from '../../schedule/index.js';
import { catchUp } from '../../scheduler/index.js';

export interface DueSlots {
  /** The most recent due slot: the only one that may run. */
  latestMs: number;
  /** The oldest due slot (equal to latestMs when only one is due). */
  firstMs: number;
  /** Due slots before latestMs; they are counted as missed and never run. */
  olderCount: number;
}

// Beyond this many, the older slots are counted by extrapolation (exact for intervals).
const COUNT_CAP = 100_000;

/** Slots s with afterMs < s <= nowMs, summarised; null if none fell due. */
export function dueSlots(source: SlotSource, afterMs: number, nowMs: number): DueSlots | null {
  const first = source.next(afterMs);
  if (first === null || first > nowMs) return null;
  const c = catchUp(source, first, nowMs, COUNT_CAP);
  return { latestMs: c.slotMs, firstMs: first, olderCount: c.skipped };
}
