// Everything the controller remembers about one SecondCronJob, in one place: created when the
// resource is first reconciled, dropped in one place when it goes (or comes back with a new uid).
// Slot bookkeeping lives in its ledger (slots/ledger.ts); the rest is about the spec and status.
import type { CompileResult } from '../schedule/index.js';
import type { SecondCronJob, SecondCronJobStatus } from './api.js';
import { SlotLedger } from './slots/ledger.js';

export type TemplateVerdict =
  | { kind: 'unjudged' }
  | { kind: 'valid' }
  | { kind: 'invalid'; message: string };

export interface ScheduleRecord {
  readonly uid: string;
  /** The schedule compiled for `generation`. */
  generation: number | undefined;
  compiled: CompileResult;
  /** What the slots are computed from (schedule, interval, time zone), and whether it was suspended. */
  scheduleSpec: string;
  suspended: boolean;
  readonly ledger: SlotLedger;
  /** The Job template's verdict (server-side dry run, or the previous leader's) for `templateGeneration`. */
  template: TemplateVerdict;
  templateGeneration: number | undefined;
  /** The finalizer was removed by this replica: the resource is going, nothing is left to do. */
  finalized: boolean;
  /** Status last written by this replica, the resourceVersion it was computed from, and when (monotonic ms). */
  lastWrittenStatus: { status: SecondCronJobStatus; from: string } | undefined;
  lastStatusWriteMonoMs: number;
  /** A status change is known and waits for this moment, to be written with the ones after it (monotonic ms). */
  statusDueMonoMs: number | undefined;
}

/** The fields slots are computed from: an edit of any of them starts the schedule anew. */
export function scheduleSpecOf(scj: SecondCronJob): string {
  const { schedule, intervalSeconds, timeZone } = scj.spec;
  return JSON.stringify([schedule, intervalSeconds, timeZone]);
}

export function newRecord(scj: SecondCronJob, compiled: CompileResult): ScheduleRecord {
  return {
    uid: scj.metadata.uid,
    generation: scj.metadata.generation,
    compiled,
    scheduleSpec: scheduleSpecOf(scj),
    suspended: scj.spec.suspend === true,
    ledger: new SlotLedger(),
    template: { kind: 'unjudged' },
    templateGeneration: undefined,
    finalized: false,
    lastWrittenStatus: undefined,
    lastStatusWriteMonoMs: Number.NEGATIVE_INFINITY,
    statusDueMonoMs: undefined,
  };
}
