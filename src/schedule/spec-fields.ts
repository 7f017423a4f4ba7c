// The SecondCronJob fields of "Beyond CronJob" (DESIGN §2), declared here while the resource types in
// src/controller/api.ts are being moved; they are meant to be merged into SecondCronJobSpec and
// SecondCronJobStatus there (and this file removed).

/** concurrencyPolicy with Enqueue (a due slot that finds no free place waits for one). */
export type ConcurrencyPolicyWithEnqueue = 'Allow' | 'Forbid' | 'Replace' | 'Enqueue';

/** Added to SecondCronJobSpec. */
export interface BeyondCronJobSpecFields {
  /** 1–16 cron expressions, exclusive with schedule and intervalSeconds; the union of their instants. */
  schedules?: string[];
  concurrencyPolicy?: ConcurrencyPolicyWithEnqueue;
  /** Forbid and Enqueue: at most this many Jobs active or being created (default 1). */
  maxConcurrency?: number;
  /** RFC 3339: no slot before it (inclusive bound). */
  notBefore?: string;
  /** RFC 3339: no slot after it (inclusive bound); later than notBefore. */
  notAfter?: string;
}

/** Added to SecondCronJobStatus. */
export interface BeyondCronJobStatusFields {
  /** Enqueue: the slot waiting for a free place (RFC 3339), absent when none waits. */
  queuedScheduleTime?: string;
  /** Each cron expression as it runs (`H` resolved), in spec order; one item for spec.schedule. */
  resolvedSchedules?: string[];
}

/** Ready=True reasons of the window (windowState): nothing is wrong, the schedule is outside its window. */
export const READY_REASON_NOT_YET_ACTIVE = 'NotYetActive';
export const READY_REASON_WINDOW_ENDED = 'WindowEnded';
