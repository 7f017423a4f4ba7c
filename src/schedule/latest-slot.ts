import type { SlotSource } from './types.js';
import { DAY_MS, HOUR_MS } from './calendar.js';

/** Look-back windows, smallest first; past the last one the window keeps growing fourfold. */
const WINDOWS_MS = [60_000, HOUR_MS, DAY_MS, 31 * DAY_MS, 366 * DAY_MS] as const;

/**
 * The latest slot s with notBeforeMs < s <= atMs, or null.
 *
 * Used after downtime, when the window may hold millions of slots (every second for a day), so it
 * never walks the window. It widens a look-back window from atMs until the window holds a slot, then
 * binary-searches the largest x with next(x) <= atMs: next() of that x is the answer.
 */
export function latestSlotAtOrBefore(source: SlotSource, atMs: number, notBeforeMs: number): number | null {
  if (!(notBeforeMs < atMs)) return null;

  let windowIndex = 0;
  let windowMs: number = WINDOWS_MS[0];
  let low: number; // next(low) <= atMs
  let found: number;
  for (;;) {
    const candidateLow = Math.max(notBeforeMs, atMs - windowMs);
    const slot = source.next(candidateLow);
    if (slot !== null && slot <= atMs) {
      low = candidateLow;
      found = slot;
      break;
    }
    if (candidateLow === notBeforeMs) return null;
    windowIndex++;
    windowMs = windowIndex < WINDOWS_MS.length ? (WINDOWS_MS[windowIndex] as number) : windowMs * 4;
  }

  // Often the first slot found is already the only one.
  const following = source.next(found);
  if (following === null || following > atMs) return found;

  // Invariant: next(low) = found <= atMs, and there is no slot in (high, atMs], so found <= high.
  let high = atMs;
  while (high - low > 1) {
    const mid = low + Math.floor((high - low) / 2);
    const slot = source.next(mid);
    if (slot !== null && slot <= atMs) {
      low = mid;
      found = slot;
      if (found >= high) break; // nothing later is possible
    } else {
      high = mid;
    }
  }
  return found;
}
