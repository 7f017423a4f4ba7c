// Slot bookkeeping for the failure tests: which 1 s slots got a Job, on time or not, and what the
// operators counted as missed.
import type { OperatorProcess } from '../../cluster/operator-process.js';

export interface CreatedSlot {
  slotMs: number;
  /** The Job's creationTimestamp (whole seconds, as the API server stores it). */
  createdMs: number;
}

/** Sum of secondcron_triggers_missed_total over every reason. */
export async function missedTotal(op: OperatorProcess): Promise<number> {
  const text = await op.metrics();
  return text
    .split('\n')
    .filter((l) => l.startsWith('secondcron_triggers_missed_total{'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Slots s (1 s apart) with fromMs < s <= toMs that have no Job, over every schedule. */
export function slotsWithoutJob(schedules: CreatedSlot[][], fromMs: number, toMs: number): number {
  let missing = 0;
  for (const created of schedules) {
    const have = new Set(created.map((c) => c.slotMs));
    for (let s = fromMs + 1000; s <= toMs; s += 1000) if (!have.has(s)) missing++;
  }
  return missing;
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
