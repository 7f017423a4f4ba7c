import { MAX_TIMER_DELAY_MS, type MonotonicClock, type TimerHandle, type Timers, type WallClock } from './clock.js';

/**
 * Returns how late (positive) or early (negative) a timer armed with `delayMs` wakes, in ms.
 * Lets tests model libuv's early wake-ups and event-loop jitter deterministically (seeded PRNG).
 */
export type WakeJitter = (delayMs: number) => number;

export interface FakeClockOptions {
  /** Monotonic start value (default 0). */
  monoStartMs?: number;
  /** Wall start value, UTC epoch ms (default 2026-01-01T00:00:00Z). */
  wallStartMs?: number;
  wakeJitter?: WakeJitter;
}

/** libuv works in whole milliseconds, so a timer can wake up to 1 ms before its delay elapsed. */
export const MAX_EARLY_WAKE_MS = 1;

interface FakeTimer {
  readonly id: number;
  readonly fireAtMs: number;
  readonly delayMs: number;
  readonly fn: () => void;
}

export interface PendingFakeTimer {
  /** Monotonic instant the timer will run (jitter included). */
  fireAtMs: number;
  /** Delay as requested (after clamping). */
  delayMs: number;
}

/**
 * A deterministic clock for tests: monotonic time, wall time and timers that move only when told.
 *
 * - `advance(ms)` runs due timers in order of their (jittered) fire time, moving time to each one.
 * - `stall(ms)` models a blocked event loop: time jumps and overdue timers then all run late, at once.
 * - `setWall` / `stepWall` move the wall clock alone, as an NTP step or a VM resume does.
 * - `wakeJitter` makes timers fire late, or up to MAX_EARLY_WAKE_MS early.
 */
export class FakeClock {
  readonly mono: MonotonicClock;
  readonly wall: WallClock;
  readonly timers: Timers;
  wakeJitter: WakeJitter | undefined;

  private monoMs: number;
  private wallOffsetMs: number;
  private readonly pending = new Map<number, FakeTimer>();
  private nextId = 1;
  private peakArmed = 0;
  private setCount = 0;

  constructor(options: FakeClockOptions = {}) {
    this.monoMs = options.monoStartMs ?? 0;
    this.wallOffsetMs = (options.wallStartMs ?? Date.UTC(2026, 0, 1)) - this.monoMs;
    this.wakeJitter = options.wakeJitter;
    this.mono = { nowMs: () => this.monoMs };
    this.wall = { nowMs: () => this.monoMs + this.wallOffsetMs };
    this.timers = {
      set: (delayMs, fn) => this.setTimer(delayMs, fn),
      clear: (handle) => this.clearTimer(handle),
    };
  }

  /** Timers currently armed. */
  get armedCount(): number {
    return this.pending.size;
  }

  /** Highest number of timers armed at the same time since construction. */
  get peakArmedCount(): number {
    return this.peakArmed;
  }

  /** Total timers ever armed (each re-arm counts). */
  get timersSetCount(): number {
    return this.setCount;
  }

  /** Pending timers, earliest first. */
  pendingTimers(): PendingFakeTimer[] {
    return this.sortedPending().map((t) => ({ fireAtMs: t.fireAtMs, delayMs: t.delayMs }));
  }

  /** Moves time forward by `ms`, running every timer that comes due on the way, at its own instant. */
  advance(ms: number): number {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.advance: ms must be >= 0, got ${ms}`);
    return this.advanceTo(this.monoMs + ms);
  }

  /** Like advance, to an absolute monotonic instant. Returns how many timers ran. */
  advanceTo(targetMonoMs: number): number {
    let ran = 0;
    for (;;) {
      const next = this.earliest();
      if (next === undefined || next.fireAtMs > targetMonoMs) break;
      this.runTimer(next);
      ran++;
    }
    this.monoMs = Math.max(this.monoMs, targetMonoMs);
    return ran;
  }

  /** Jumps to the earliest pending timer and runs it. Returns false if nothing is armed. */
  runNext(): boolean {
    const next = this.earliest();
    if (next === undefined) return false;
    this.runTimer(next);
    return true;
  }

  /**
   * An event-loop stall: time jumps by `ms` without running anything, then every overdue timer runs
   * (late, at the new time), in fire-time order. Returns how many timers ran.
   */
  stall(ms: number): number {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.stall: ms must be >= 0, got ${ms}`);
    this.monoMs += ms;
    return this.advanceTo(this.monoMs);
  }

  /** Sets the wall clock (monotonic time is unaffected). */
  setWall(wallMs: number): void {
    this.wallOffsetMs = wallMs - this.monoMs;
  }

  /** Steps the wall clock by `deltaMs` (negative = backwards); monotonic time is unaffected. */
  stepWall(deltaMs: number): void {
    this.wallOffsetMs += deltaMs;
  }

  private setTimer(delayMs: number, fn: () => void): TimerHandle {
    // Same coercion as Node's setTimeout: below 1 (or NaN) means 1; callers must cap long delays.
    let delay = delayMs >= 1 ? delayMs : 1;
    delay = Math.min(delay, MAX_TIMER_DELAY_MS);
    const jitter = Math.max(this.wakeJitter?.(delay) ?? 0, -MAX_EARLY_WAKE_MS);
    // Never before half the delay: an early wake still lets some time pass, so a caller that
    // re-arms for the remainder always makes progress.
    const fireAtMs = Math.max(this.monoMs + delay + jitter, this.monoMs + delay / 2);
    const id = this.nextId++;
    this.pending.set(id, { id, fireAtMs, delayMs: delay, fn });
    this.setCount++;
    this.peakArmed = Math.max(this.peakArmed, this.pending.size);
    return { id } as unknown as TimerHandle;
  }

  private clearTimer(handle: TimerHandle): void {
    const id = (handle as unknown as { id?: unknown }).id;
    if (typeof id === 'number') this.pending.delete(id);
  }

  private runTimer(timer: FakeTimer): void {
    this.monoMs = Math.max(this.monoMs, timer.fireAtMs);
    this.pending.delete(timer.id);
    timer.fn();
  }

  private earliest(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.pending.values()) {
      if (best === undefined || t.fireAtMs < best.fireAtMs || (t.fireAtMs === best.fireAtMs && t.id < best.id)) {
        best = t;
      }
    }
    return best;
  }

  private sortedPending(): FakeTimer[] {
    return [...this.pending.values()].sort((a, b) => a.fireAtMs - b.fireAtMs || a.id - b.id);
  }
}
