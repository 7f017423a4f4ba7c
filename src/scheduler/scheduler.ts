import {
  MAX_TIMER_DELAY_MS,
  type MonotonicClock,
  type TimerHandle,
  type Timers,
  type WallClock,
} from '../clock/clock.js';
import { catchUp, nextSlotAfter } from './catch-up.js';
import { IndexedMinHeap } from './indexed-min-heap.js';
import type { SlotSource } from './slot-source.js';

/** One slot firing for one entry. */
export interface Fire {
  key: string;
  /** The slot instant being fired (wall ms). */
  slotMs: number;
  /** How late the loop woke relative to that slot's deadline (>= 0), measured on the monotonic clock. */
  latenessMs: number;
  /** Older slots of the same key that passed while we were late and are NOT fired. */
  skipped: number;
  /** Oldest skipped slot, when skipped > 0 (for logs/Events). */
  skippedFirstMs?: number;
  /** Set when the entry was too far behind to count: `skipped` is extrapolated from slot spacing. */
  skippedIsEstimate?: boolean;
}

export interface SchedulerOptions {
  mono: MonotonicClock;
  wall: WallClock;
  timers: Timers;
  /** Called synchronously, in slot order. Should not throw; if it does, see onError. */
  onFire(fire: Fire): void;
  /** The wall clock stepped by about deltaMs relative to the monotonic anchor (NTP step, VM resume). */
  onClockStep?(deltaMs: number): void;
  /** An onFire/onClockStep callback or an entry's SlotSource threw; `key` names the entry if any. */
  onError?(error: unknown, key: string | undefined): void;
  /** |wall - anchored estimate| beyond this is a step (default 1000). Below it is slew. */
  stepThresholdMs?: number;
  /** Longest sleep between wake-ups, so the wall anchor is re-checked this often (default 5000). */
  maxSleepMs?: number;
  /** Behind by more than this many slots, an entry is caught up coarsely (default 10000). */
  maxCatchUpSlots?: number;
}

export const DEFAULT_STEP_THRESHOLD_MS = 1000;
export const DEFAULT_MAX_SLEEP_MS = 5000;
export const DEFAULT_MAX_CATCH_UP_SLOTS = 10_000;
/** A wake-up that came early re-arms for at least this long, so it never spins. */
const MIN_REARM_MS = 1;
/**
 * Date.now() has whole-ms resolution, so a wall read differs from an exact estimate by up to 1 ms
 * for no reason at all. Re-anchoring on such noise would quantise every deadline and lateness to
 * whole ms; below this the anchor is kept and time stays measured on the monotonic clock.
 */
const WALL_READ_RESOLUTION_MS = 1;

interface Entry {
  readonly key: string;
  readonly source: SlotSource;
  /** Next slot to fire, wall ms. Deadlines derive from it through the anchor, never from the last fire. */
  slot: number;
  /** From set(): even after a clock step, the entry never gets a slot at or before this. */
  readonly afterMs: number;
  /** Insertion order: ties between equal slots fire in the order entries were set. */
  readonly seq: number;
}

interface DueFire {
  readonly entry: Entry;
  readonly slotMs: number;
  readonly skipped: number;
  readonly skippedFirstMs: number;
  readonly skippedIsEstimate: boolean;
}

/**
 * The timer core: one armed timer for the earliest slot over an indexed min-heap of entries.
 *
 * Slots are wall-clock instants; sleeping is measured on the monotonic clock. The two meet through an
 * anchor (anchorMono, anchorWall), checked on every wake-up: the deadline of slot s is
 * anchorMono + (s - anchorWall). Keeping the heap in wall ms means re-anchoring never reorders it,
 * and computing each deadline from the absolute slot means error never accumulates.
 */
export class Scheduler {
  private readonly mono: MonotonicClock;
  private readonly wall: WallClock;
  private readonly timers: Timers;
  private readonly onFire: (fire: Fire) => void;
  private readonly onClockStep: ((deltaMs: number) => void) | undefined;
  private readonly onError: ((error: unknown, key: string | undefined) => void) | undefined;
  private readonly stepThresholdMs: number;
  private readonly maxSleepMs: number;
  private readonly maxCatchUpSlots: number;

  private readonly heap = new IndexedMinHeap<Entry>(
    (a, b) => a.slot < b.slot || (a.slot === b.slot && a.seq < b.seq),
    (e) => e.key,
  );
  private anchorMono: number;
  private anchorWall: number;
  private timer: TimerHandle | undefined;
  /** Wall estimate the armed timer wakes at; a new entry due earlier must re-arm. */
  private armedWakeWall = Infinity;
  private running = false;
  private inWake = false;
  private seq = 0;
  private lastWake: number;

  constructor(opts: SchedulerOptions) {
    this.mono = opts.mono;
    this.wall = opts.wall;
    this.timers = opts.timers;
    this.onFire = opts.onFire;
    this.onClockStep = opts.onClockStep;
    this.onError = opts.onError;
    this.stepThresholdMs = positive('stepThresholdMs', opts.stepThresholdMs ?? DEFAULT_STEP_THRESHOLD_MS);
    // Also keeps every delay under setTimeout's 2^31-1 ms limit.
    this.maxSleepMs = Math.min(positive('maxSleepMs', opts.maxSleepMs ?? DEFAULT_MAX_SLEEP_MS), MAX_TIMER_DELAY_MS);
    this.maxCatchUpSlots = positive('maxCatchUpSlots', opts.maxCatchUpSlots ?? DEFAULT_MAX_CATCH_UP_SLOTS);
    this.anchorMono = this.mono.nowMs();
    this.anchorWall = this.wall.nowMs();
    this.lastWake = this.anchorMono;
  }

  get size(): number {
    return this.heap.size;
  }

  has(key: string): boolean {
    return this.heap.has(key);
  }

  /** Wall ms of the entry's next slot, or null if there is no such entry. */
  nextSlot(key: string): number | null {
    return this.heap.get(key)?.slot ?? null;
  }

  /**
   * Inserts or replaces the entry; its next slot is source.next(max(wallNow, afterMs)), and no later
   * recomputation (clock step) goes at or before afterMs either. Replacing restarts the entry from now
   * (its tie order too). A source with no slot left removes the key. If `source.next` throws, the
   * error propagates and nothing changes. Safe to call from onFire.
   */
  set(key: string, source: SlotSource, afterMs?: number): void {
    if (afterMs !== undefined && Number.isNaN(afterMs)) throw new RangeError('Scheduler.set: afterMs is NaN');
    // The later of the anchored estimate and a fresh read: a forward step not yet noticed by a wake-up
    // must not hand out a slot that already passed (it would fire as "late"); a backward one is
    // corrected at the next wake-up, which recomputes every entry.
    const now = Math.max(this.wallEstimate(this.mono.nowMs()), this.wall.nowMs());
    const slot = nextSlotAfter(source, afterMs === undefined ? now : Math.max(now, afterMs));
    if (slot === null) {
      this.heap.delete(key);
      return;
    }
    this.heap.set({ key, source, slot, afterMs: afterMs ?? Number.NEGATIVE_INFINITY, seq: this.seq++ });
    if (this.running && !this.inWake && slot < this.armedWakeWall) this.arm();
  }

  /** Removes the entry. The armed timer is left alone: waking early for nothing is harmless. */
  delete(key: string): void {
    this.heap.delete(key);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.lastWake = this.mono.nowMs();
    // The anchor is checked at the first wake-up (within maxSleepMs), not here, so start() never
    // calls back into the caller. Overdue entries wake in 1 ms and follow the missed-slot rule.
    if (!this.inWake) this.arm();
  }

  /** Clears the timer and stops firing at once, even mid-batch. Entries are kept. */
  stop(): void {
    this.running = false;
    this.disarm();
  }

  /** Monotonic ms of the last wake-up (or of start()): a loop that stops waking shows here. */
  lastWakeMonoMs(): number {
    return this.lastWake;
  }

  private wallEstimate(monoMs: number): number {
    return this.anchorWall + (monoMs - this.anchorMono);
  }

  /**
   * Monotonic ms from monoNow to the slot's deadline (negative once due). Computed as a difference
   * of differences so no epoch-sized sum rounds it (a double near 1.8e12 only resolves ~0.2 µs).
   */
  private msUntil(slotMs: number, monoNow: number): number {
    return slotMs - this.anchorWall - (monoNow - this.anchorMono);
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.armedWakeWall = Infinity;
    if (this.running) this.wake();
  };

  private wake(): void {
    this.inWake = true;
    try {
      const monoNow = this.mono.nowMs();
      this.lastWake = monoNow;
      this.reanchor(monoNow);
      this.fireDue(monoNow);
    } finally {
      this.inWake = false;
      if (this.running) this.arm();
    }
  }

  /**
   * Compares a fresh wall read with the anchored estimate. Read noise (< 1 ms) keeps the anchor; a
   * small difference is slew, absorbed silently by re-anchoring; a large one is a step: entries are
   * recomputed from the new now, keeping any slot that is earlier (a forward step makes those
   * overdue; they then follow the missed-slot rule), so a backward step does not leave entries
   * sleeping for the stepped amount.
   */
  private reanchor(monoNow: number): void {
    const wallNow = this.wall.nowMs();
    const deltaMs = wallNow - this.wallEstimate(monoNow);
    if (Math.abs(deltaMs) < WALL_READ_RESOLUTION_MS) return;
    this.anchorMono = monoNow;
    this.anchorWall = wallNow;
    if (!(Math.abs(deltaMs) > this.stepThresholdMs)) return;
    for (const entry of this.heap.values()) {
      let fresh: number | null;
      try {
        fresh = nextSlotAfter(entry.source, Math.max(wallNow, entry.afterMs));
      } catch (error) {
        this.heap.delete(entry.key);
        this.report(error, entry.key);
        continue;
      }
      if (fresh !== null && fresh < entry.slot) entry.slot = fresh;
    }
    this.heap.rebuild();
    if (this.onClockStep !== undefined) {
      try {
        this.onClockStep(deltaMs);
      } catch (error) {
        this.report(error, undefined);
      }
    }
  }

  /** Fires, in slot order, the latest due slot of every entry whose next slot is at or before now. */
  private fireDue(monoNow: number): void {
    const nowWall = this.wallEstimate(monoNow);
    const due: DueFire[] = [];
    for (const entry of this.heap.collectWhile((e) => this.msUntil(e.slot, monoNow) <= 0)) {
      try {
        const c = catchUp(entry.source, entry.slot, nowWall, this.maxCatchUpSlots);
        due.push({
          entry,
          slotMs: c.slotMs,
          skipped: c.skipped,
          skippedFirstMs: entry.slot,
          skippedIsEstimate: c.skippedIsEstimate,
        });
      } catch (error) {
        this.heap.delete(entry.key);
        this.report(error, entry.key);
      }
    }
    due.sort((a, b) => a.slotMs - b.slotMs || a.entry.seq - b.entry.seq);

    for (const d of due) {
      if (!this.running) return; // stopped by a callback: the rest stay due, untouched
      // Deleted or replaced by an earlier callback in this batch: the fire belongs to a dead entry.
      if (this.heap.get(d.entry.key) !== d.entry) continue;
      // Advance before calling out, so onFire sees the entry's next slot (e.g. for status).
      try {
        const next = nextSlotAfter(d.entry.source, d.slotMs);
        if (next === null) {
          this.heap.delete(d.entry.key);
        } else {
          d.entry.slot = next;
          this.heap.update(d.entry.key);
        }
      } catch (error) {
        this.heap.delete(d.entry.key);
        this.report(error, d.entry.key);
      }
      const fire: Fire = {
        key: d.entry.key,
        slotMs: d.slotMs,
        latenessMs: Math.max(0, -this.msUntil(d.slotMs, monoNow)),
        skipped: d.skipped,
      };
      if (d.skipped > 0) fire.skippedFirstMs = d.skippedFirstMs;
      if (d.skippedIsEstimate) fire.skippedIsEstimate = true;
      try {
        this.onFire(fire);
      } catch (error) {
        this.report(error, d.entry.key);
      }
    }
  }

  private arm(): void {
    this.disarm();
    const monoNow = this.mono.nowMs();
    let delay = this.maxSleepMs;
    const first = this.heap.peek();
    if (first !== undefined) {
      // Whole ms, rounded up: timers are ms-granular and waking before the deadline only costs a re-arm.
      delay = Math.min(delay, Math.max(MIN_REARM_MS, Math.ceil(this.msUntil(first.slot, monoNow))));
    }
    this.armedWakeWall = this.wallEstimate(monoNow) + delay;
    this.timer = this.timers.set(delay, this.onTimer);
  }

  private disarm(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    this.armedWakeWall = Infinity;
  }

  private report(error: unknown, key: string | undefined): void {
    if (this.onError === undefined) return;
    try {
      this.onError(error, key);
    } catch {
      // The error sink failing must not take the loop down with it.
    }
  }
}

function positive(name: string, value: number): number {
  if (!(value > 0)) throw new RangeError(`Scheduler: ${name} must be > 0, got ${value}`);
  return value;
}
