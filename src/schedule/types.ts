/** A source of slot instants (UTC epoch milliseconds, always whole seconds). */
export interface SlotSource {
  /** The first slot strictly after `afterMs`, or null if none exists (never loops forever). */
  next(afterMs: number): number | null;
}

/** The scheduling part of a SecondCronJob spec: exactly one of `schedule` / `intervalSeconds`. */
export interface ScheduleSpec {
  schedule?: string;
  intervalSeconds?: number;
  timeZone?: string;
}

export type CompileResult =
  | {
      ok: true;
      source: SlotSource;
      describe: string;
      /** A cron schedule as it runs: `H` items replaced by their hashed values (else the schedule as written). */
      resolvedSchedule?: string;
    }
  | { ok: false; reason: 'InvalidSchedule' | 'UnknownTimeZone'; message: string };
