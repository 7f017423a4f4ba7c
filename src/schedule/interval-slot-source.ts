import type { SlotSource } from './types.js';
import { SECOND_MS, floorToSecond } from './calendar.js';

/**
 * Slots anchor + k * interval for k >= 1. The anchor is the resource's creationTimestamp, which every
 * replica reads alike, so all replicas compute the same slots (and so the same Job names).
 */
export class IntervalSlotSource implements SlotSource {
  private readonly anchorMs: number;
  private readonly intervalMs: number;

  constructor(anchorMs: number, intervalSeconds: number) {
    this.anchorMs = floorToSecond(anchorMs);
    this.intervalMs = intervalSeconds * SECOND_MS;
  }

  next(afterMs: number): number | null {
    if (!Number.isFinite(afterMs)) return null;
    const k = Math.max(1, Math.floor((afterMs - this.anchorMs) / this.intervalMs) + 1);
    return this.anchorMs + k * this.intervalMs;
  }
}
