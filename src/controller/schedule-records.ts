// Everything the controller remembers about one SecondCronJob, in one place: created when the
// resource is first reconciled, dropped in one place when it goes (or comes back with a new uid).
// Slot bookkeeping lives in its ledger (slots/ledger.ts); the rest is about the spec and status.
import type { WallClock } from '../clock/clock.js';
import type { Logger } from '../log.js';
import type { CompileResult } from '../schedule/index.js';
import type { SecondCronJob, SecondCronJobStatus } from '../api/resources.js';
import type { EventSink } from './events.js';
import type { Executor } from './executor.js';
import { SlotLedger } from './slots/ledger.js';
import { scheduleSpecOf } from './slots/schedule-hash.js';
import { compileSecondCronJob } from './verdict.js';

export type TemplateVerdict =
  | { kind: 'unjudged' }
  | { kind: 'valid' }
  | { kind: 'invalid'; message: string };

/** The verdicts without detail, one object each for every record (thousands of records, one verdict). */
export const TEMPLATE_UNJUDGED: TemplateVerdict = Object.freeze({ kind: 'unjudged' });
export const TEMPLATE_VALID: TemplateVerdict = Object.freeze({ kind: 'valid' });

type Seen = Readonly<{ scheduleChangedMs?: number; suspendedMs?: number }>;
/** Most records never see anything between two reconciles: they share this one (frozen) object. */
const NOTHING_SEEN: Seen = Object.freeze({});

export interface ScheduleRecord {
  readonly uid: string;
  /** The schedule compiled for `generation`. */
  generation: number | undefined;
  compiled: CompileResult;
  /**
   * The spec `compiled` was made from: what its slots are computed from (scheduleSpecOf), compared when
   * a new generation comes. The cache's own object (it keeps one spec per generation, slim.ts), not a
   * string made from it (~60 bytes a schedule). And whether it was suspended.
   */
  spec: SecondCronJob['spec'];
  suspended: boolean;
  /**
   * Seen by the cache's update events before the next reconcile: when a version with another schedule,
   * or a suspended one, went by (an edit undone, or a suspend and resume, folded into one reconcile).
   */
  seen: Seen;
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

export interface ScheduleRecordsDeps {
  executor: Executor;
  events: EventSink;
  wall: WallClock;
  log: Logger;
  isLeader: () => boolean;
  /** Something counted by `secondcron_schedules` may have changed. */
  onChange: () => void;
}

export class ScheduleRecords {
  private readonly byKey = new Map<string, ScheduleRecord>();

  constructor(private readonly d: ScheduleRecordsDeps) {}

  get(key: string): ScheduleRecord | undefined {
    return this.byKey.get(key);
  }

  entries(): IterableIterator<[string, ScheduleRecord]> {
    return this.byKey.entries();
  }

  values(): IterableIterator<ScheduleRecord> {
    return this.byKey.values();
  }

  get size(): number {
    return this.byKey.size;
  }

  delete(key: string): void {
    this.byKey.delete(key);
  }

  /** The cache delivered a new version: what went by is remembered for the next reconcile. */
  updated(key: string, old: SecondCronJob, scj: SecondCronJob): void {
    const rec = this.byKey.get(key);
    if (!rec || rec.uid !== scj.metadata.uid) return;
    const now = this.d.wall.nowMs();
    if (rec.seen.scheduleChangedMs === undefined && scheduleSpecOf(old.spec) !== scheduleSpecOf(scj.spec)) rec.seen = { ...rec.seen, scheduleChangedMs: now };
    if (rec.seen.suspendedMs === undefined && scj.spec.suspend === true && !rec.suspended) rec.seen = { ...rec.seen, suspendedMs: now };
  }

  /**
   * The record for the resource as the cache holds it now. A new generation that changed what slots are
   * computed from, or resumed, starts the schedule anew from the moment it was first seen: no slot of the
   * old schedule fires after it and every slot that was due before it is counted (I7); the slots that
   * fell while suspended are neither run nor counted (I6).
   */
  record(key: string, scj: SecondCronJob): ScheduleRecord {
    let rec = this.byKey.get(key);
    const seen = rec?.seen ?? NOTHING_SEEN;
    if (rec && rec.uid === scj.metadata.uid && rec.generation === scj.metadata.generation && seen.scheduleChangedMs === undefined && seen.suspendedMs === undefined) return rec;
    const nowMs = this.d.wall.nowMs();
    const compiled = compileSecondCronJob(scj, nowMs);
    this.d.onChange();
    if (!compiled.ok) {
      this.d.log.warn('invalid schedule', { key, reason: compiled.reason, message: compiled.message });
      if (this.d.isLeader()) this.d.events.record(scj, 'Warning', compiled.reason, compiled.message);
    }
    const suspended = scj.spec.suspend === true;
    if (rec && rec.uid === scj.metadata.uid) {
      const changed = scheduleSpecOf(rec.spec) !== scheduleSpecOf(scj.spec) || seen.scheduleChangedMs !== undefined;
      const resumed = !suspended && (rec.suspended || seen.suspendedMs !== undefined);
      if (changed || resumed) {
        const old = rec.compiled.ok && !rec.suspended ? { source: rec.compiled.source, spec: scheduleSpecOf(rec.spec) } : undefined;
        // Slots of the old schedule are counted up to the moment the edit (or the suspension) was seen.
        const until = Math.min(seen.scheduleChangedMs ?? nowMs, seen.suspendedMs ?? nowMs);
        // Counted by the leader only; a follower just moves its ledger on (it may lead next).
        if (this.d.isLeader()) this.d.executor.scheduleChanged(scj, rec, old, until, nowMs);
        else rec.ledger.scheduleChanged(nowMs);
      }
      rec.generation = scj.metadata.generation;
      rec.compiled = compiled;
      rec.spec = scj.spec;
      rec.suspended = suspended;
      rec.seen = NOTHING_SEEN;
    } else {
      if (rec) this.d.executor.forget(key); // same name, new object
      rec = newRecord(scj, compiled);
      // Resumed while no leader was looking: the last status was written while it was suspended.
      const ready = scj.status?.conditions?.find((c) => c.type === 'Ready');
      if (!suspended && ready?.reason === 'Suspended') rec.ledger.scheduleChanged(nowMs);
      this.byKey.set(key, rec);
    }
    return rec;
  }
}

function newRecord(scj: SecondCronJob, compiled: CompileResult): ScheduleRecord {
  return {
    uid: scj.metadata.uid,
    generation: scj.metadata.generation,
    compiled,
    spec: scj.spec,
    suspended: scj.spec.suspend === true,
    seen: NOTHING_SEEN,
    ledger: new SlotLedger(),
    template: TEMPLATE_UNJUDGED,
    templateGeneration: undefined,
    finalized: false,
    lastWrittenStatus: undefined,
    lastStatusWriteMonoMs: Number.NEGATIVE_INFINITY,
    statusDueMonoMs: undefined,
  };
}
