// On-time recovery after an API stall: which 1 s slots got their Job within their own second.
// (Slots without a Job and the operators' count of them: slot-audit.ts.)
export interface CreatedSlot {
  slotMs: number;
  /** The Job's creationTimestamp (whole seconds, as the API server stores it). */
  createdMs: number;
}

/**
 * Milliseconds from `sinceMs` to the first slot from which every schedule's slots, for five seconds
 * running, got their Job within the slot's own second; undefined if that never happened before toMs.
 */
export function onTimeRecovery(schedules: CreatedSlot[][], sinceMs: number, toMs: number, runS = 5): number | undefined {
  const onTime = (s: number): boolean => schedules.every((created) => created.some((c) => c.slotMs === s && c.createdMs - s < 1000));
  for (let s = Math.ceil(sinceMs / 1000) * 1000; s + (runS - 1) * 1000 <= toMs; s += 1000) {
    let ok = true;
    for (let k = 0; k < runS && ok; k++) ok = onTime(s + k * 1000);
    if (ok) return s - sinceMs;
  }
  return undefined;
}
