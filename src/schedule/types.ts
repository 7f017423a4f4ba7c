import type { ActiveWindow } from './active-window.js';

/** A source of slot instants (UTC epoch milliseconds, always whole seconds). */
export interface SlotSource {
  /** The first slot strictly after `afterMs`, or null if none exists (never loops forever). */
  next(afterMs: number): number | null;
}

/**
 * The scheduling part of a SecondCronJob spec: exactly one of `schedule` / `schedules` /
 * `intervalSeconds`, an optional `timeZone` (cron only) and an optional window. Fields are `unknown`
 * where a resource from a file or an older schema may hold anything.
 */
export interface ScheduleSpec {
  schedule?: string;
  /** 1–16 cron expressions; their union of instants (an instant listed twice fires once). */
  schedules?: readonly string[];
  intervalSeconds?: number;
  timeZone?: string;
  /** RFC 3339; slots before it do not exist. */
  notBefore?: string;
  /** RFC 3339; slots after it do not exist. */
  notAfter?: string;
}

export type CompileResult =
  | {
      ok: true;
      /** Every slot of the schedule, none outside the window. */
      source: SlotSource;
      describe: string;
      /**
       * A cron schedule as it runs: `H` items replaced by their hashed values (else the schedule as
       * written). For `schedules`, the resolved expressions joined by "; " (one string for the column).
       */
      resolvedSchedule?: string;
      /** Each cron expression as it runs, in spec order (one item for `schedule`); absent for intervals. */
      resolvedSchedules?: readonly string[];
      /** spec.notBefore / notAfter parsed; absent when neither is set (windowState: always Active). */
      window?: ActiveWindow;
    }
  | { ok: false; reason: 'InvalidSchedule' | 'UnknownTimeZone'; message: string };
