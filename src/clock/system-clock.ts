import { MAX_TIMER_DELAY_MS, type MonotonicClock, type TimerHandle, type Timers, type WallClock } from './clock.js';

export { MAX_TIMER_DELAY_MS };

/** Clamps a requested delay into [0, MAX_TIMER_DELAY_MS]; NaN counts as 0, +Infinity as the maximum. */
export function clampTimerDelay(delayMs: number): number {
  if (Number.isNaN(delayMs) || delayMs <= 0) return 0;
  return Math.min(delayMs, MAX_TIMER_DELAY_MS);
}

// Origin taken at module load, so values stay small and a float keeps sub-microsecond precision.
const hrtimeOrigin = process.hrtime.bigint();

/** process.hrtime based: unaffected by NTP steps or Date changes. */
export const systemMonotonicClock: MonotonicClock = {
  nowMs(): number {
    // Divide in bigint first: whole microseconds stay exact in a double for centuries of uptime.
    return Number((process.hrtime.bigint() - hrtimeOrigin) / 1000n) / 1000;
  },
};

export const systemWallClock: WallClock = {
  nowMs(): number {
    return Date.now();
  },
};

export interface SystemTimersOptions {
  /**
   * Unref each timer so it does not keep the process alive on its own. Off by default: an operator
   * whose only pending work is the next slot must stay up. Tools and tests may want it on.
   */
  unref?: boolean;
}

export function createSystemTimers(options: SystemTimersOptions = {}): Timers {
  const unref = options.unref ?? false;
  return {
    set(delayMs: number, fn: () => void): TimerHandle {
      const timeout = setTimeout(fn, clampTimerDelay(delayMs));
      if (unref) timeout.unref();
      return timeout as unknown as TimerHandle;
    },
    clear(handle: TimerHandle): void {
      clearTimeout(handle as unknown as NodeJS.Timeout);
    },
  };
}

/** Referenced timers (they keep the process alive). */
export const systemTimers: Timers = createSystemTimers();
