export { MAX_TIMER_DELAY_MS } from './clock.js';
export type { MonotonicClock, WallClock, TimerHandle, Timers } from './clock.js';
export {
  clampTimerDelay,
  createSystemTimers,
  systemMonotonicClock,
  systemTimers,
  systemWallClock,
} from './system-clock.js';
export type { SystemTimersOptions } from './system-clock.js';
