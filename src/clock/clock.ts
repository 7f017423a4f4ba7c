/**
 * Time as the core sees it. Core modules never read `Date.now()`, `process.hrtime` or call
 * `setTimeout` themselves: they take these interfaces, so tests can drive time with FakeClock.
 */

/** Monotonic time in float milliseconds from an arbitrary origin. Never jumps, never goes back. */
export interface MonotonicClock {
  nowMs(): number;
}

/** Wall time, UTC epoch milliseconds. May be slewed or stepped (NTP, VM suspend). */
export interface WallClock {
  nowMs(): number;
}

/** Largest delay setTimeout honours; anything above silently becomes 1 ms in Node. */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

declare const timerHandleBrand: unique symbol;

/** Opaque handle returned by Timers.set; only meaningful to the Timers that issued it. */
export interface TimerHandle {
  readonly [timerHandleBrand]: true;
}

/**
 * One-shot timers. `set` accepts any delay: implementations clamp it to what the platform can honour
 * (Node turns delays above 2^31-1 ms into 1 ms, so the real implementation caps them).
 * A timer may fire a little early or late; callers re-check the clock on wake-up.
 */
export interface Timers {
  set(delayMs: number, fn: () => void): TimerHandle;
  /** Cancels a pending timer; a handle that already fired or was cleared is ignored. */
  clear(handle: TimerHandle): void;
}
