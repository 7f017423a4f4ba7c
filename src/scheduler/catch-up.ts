import { latestSlotAtOrBefore } from '../schedule/latest-slot.js';
import type { SlotSource } from './slot-source.js';

/** Result of catching an entry up to "now" after a late wake-up. */
export interface CatchUp {
  /** The latest slot at or before now: the only one that fires. */
  slotMs: number;
  /** Due slots before `slotMs` that will not fire. */
  skipped: number;
  /** True when the entry was too far behind to count slot by slot and `skipped` is extrapolated. */
  skippedIsEstimate: boolean;
}

/** `source.next`, rejecting answers that break the contract (they would stall or loop the scheduler). */
export function nextSlotAfter(source: SlotSource, afterMs: number): number | null {
  const slot = source.next(afterMs);
  if (slot === null) return null;
  if (!(slot > afterMs)) {
    throw new RangeError(`SlotSource.next(${afterMs}) returned ${slot}; a slot strictly after it was expected`);
  }
  return slot;
}

/**
 * Finds the latest slot <= nowMs, starting from `firstDueMs` (a due slot). Walks slot by slot so the
 * skipped count is exact, up to `maxSteps`; an entry further behind (an every-second schedule after a
 * long stall) is finished by a binary search over time — O(log(behind ms)) calls — and the skipped
 * count is extrapolated from the mean spacing of the slots already walked (exact for intervals).
 */
export function catchUp(source: SlotSource, firstDueMs: number, nowMs: number, maxSteps: number): CatchUp {
  let latest = firstDueMs;
  let skipped = 0;
  for (;;) {
    const next = nextSlotAfter(source, latest);
    if (next === null || next > nowMs) return { slotMs: latest, skipped, skippedIsEstimate: false };
    if (skipped >= maxSteps) {
      // next(latest) <= nowMs, so a slot exists in (latest, nowMs].
      const last = latestSlotAtOrBefore(source, nowMs, latest) as number;
      // Slots firstDue..next span skipped+1 gaps.
      const meanGapMs = (next - firstDueMs) / (skipped + 1);
      const beyond = Math.round((last - next) / meanGapMs);
      return { slotMs: last, skipped: skipped + 1 + beyond, skippedIsEstimate: true };
    }
    latest = next;
    skipped++;
  }
}
