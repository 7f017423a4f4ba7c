// Everything the controller remembers about one SecondCronJob, in one place: created when the
// resource is first reconciled, dropped in one place when it goes (or comes back with a new uid).
import type { CompileResult } from '../schedule/index.js';
import type { Job, SecondCronJob, SecondCronJobStatus } from './api.js';

export type TemplateVerdict =
  | { kind: 'unjudged' }
  | { kind: 'valid' }
  | { kind: 'invalid'; message: string };

export interface ScheduleRecord {
  readonly uid: string;
  /** The schedule compiled for `generation`. */
  generation: number | undefined;
  compiled: CompileResult;
  /** The Job template's verdict (server-side dry run, or the previous leader's) for `templateGeneration`. */
  template: TemplateVerdict;
  templateGeneration: number | undefined;
  /** Latest slot this leader saw a Job created for (ours or AlreadyExists), before the cache shows it. */
  lastScheduledMs: number | undefined;
  /**
   * Latest slot this leader decided: a Job, or counted as missed. The catch-up counts only later
   * slots, so no slot is counted twice (a failed create is not "late" again after a failover).
   */
  decidedThroughMs: number;
  /** Slots fired and not decided yet (their creates are queued or in flight). */
  readonly pending: Set<number>;
  /** The leader must run the missed-slot rule for this schedule (new leader, new or changed spec). */
  catchUpDue: boolean;
  /** A Job finished: history limits must be applied. */
  pruneDue: boolean;
  /** Active Jobs that concurrencyPolicy Replace wants gone. */
  readonly replace: Map<string, Job>;
  /**
   * Jobs this leader created that the Job cache has not shown yet (so Forbid/Replace see them at
   * once), with when the create was acknowledged (monotonic ms). Dropped when the cache shows them,
   * or when a relist requested after the acknowledgement does not: the cache is the API server's truth.
   */
  readonly expected: Map<string, { job: Job; ackMonoMs: number }>;
  /** Uids of Jobs whose deletion was sent and not yet seen by the watch. */
  readonly deleting: Set<string>;
  /** Status last written by this replica, the resourceVersion it was computed from, and when (monotonic ms). */
  lastWrittenStatus: { status: SecondCronJobStatus; from: string } | undefined;
  lastStatusWriteMonoMs: number;
  /** A status change is known and waits for this moment, to be written with the ones after it (monotonic ms). */
  statusDueMonoMs: number | undefined;
}

export function newRecord(scj: SecondCronJob, compiled: CompileResult): ScheduleRecord {
  return {
    uid: scj.metadata.uid,
    generation: scj.metadata.generation,
    compiled,
    template: { kind: 'unjudged' },
    templateGeneration: undefined,
    lastScheduledMs: undefined,
    decidedThroughMs: Number.NEGATIVE_INFINITY,
    pending: new Set(),
    catchUpDue: true,
    pruneDue: true,
    replace: new Map(),
    expected: new Map(),
    deleting: new Set(),
    lastWrittenStatus: undefined,
    lastStatusWriteMonoMs: Number.NEGATIVE_INFINITY,
    statusDueMonoMs: undefined,
  };
}
