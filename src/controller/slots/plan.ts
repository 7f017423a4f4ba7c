// Everything about one schedule's slots is decided here, as upstream's syncCronJob decides a CronJob:
// from its spec and status, the Jobs it owns, its outstanding create (the ledger) and `now`. Pure: no
// I/O, no clock, no Kubernetes client. The executor carries the plan out and moves the ledger on.
//
// The rules (DESIGN §3):
// - Slots not yet decided are those after the latest of: creation, what the status a leader wrote says
//   was decided (lastScheduleTime, nextScheduleTime − 1), the slots of the Jobs we own, and what this
//   replica decided itself. Of the due ones only the latest may run; the older ones are counted late.
// - One create per schedule at a time. While one is on the wire, or retrying after an unknown outcome
//   (the Job may exist), nothing newer is decided: its answer comes first, as in upstream's synchronous
//   sync, and the reconcile that the answer queues runs the latest due slot at once (a create slower
//   than the period but faster than two costs no slot; a stall ends with one Job for the slots inside
//   it). A create with proof that nothing was stored (never sent, 429/503) is superseded by a newer slot.
// - A create not on the wire is dropped when the schedule is suspended or its slot belongs to a
//   schedule that has changed since (I6, I7): counted late when it stored nothing, looked up first when
//   the outcome is unknown.
// - Forbid: maxConcurrency (default 1) Jobs not finished (also one being deleted, until it is gone) or
//   being created mean no Job for the slot. Replace: the running Jobs are deleted first (the deletes
//   accepted), then the create.
// - Enqueue (as Furiko's, but at most one slot waits): a due slot that finds no free place waits for
//   one (status.queuedScheduleTime); a newer due slot takes its place and the older is counted late;
//   the waiting slot runs as soon as a Job finishes or goes, within its starting deadline.
// - History: the oldest finished Jobs beyond the limits go, by start time as upstream — but never the
//   Job of the outstanding create's slot, nor one whose slot the persisted status does not cover yet
//   (with history limit 0 a new leader would otherwise find neither Job nor status and run it again, I11).
import type { MissedReason } from '../../metrics/metrics.js';
import type { SlotSource } from '../../schedule/index.js';
import type { Job, SecondCronJob } from '../../api/resources.js';
import { dueSlots } from './due-slots.js';
import { jobsToPrune } from '../history.js';
import { isActive, jobSlotMs } from '../job-state.js';
import type { SlotLedger } from './ledger.js';
import { scheduleHash } from './schedule-hash.js';

export interface PlanInput {
  readonly scj: SecondCronJob;
  /** The compiled schedule; undefined when it is invalid (no slots at all). */
  readonly source: SlotSource | undefined;
  /** The Job template was judged invalid for this generation: due slots are counted as errors. */
  readonly templateInvalid: boolean;
  /** The Jobs this SecondCronJob controls: the cache, plus the ones created that it has not shown yet. */
  readonly jobs: readonly Job[];
  readonly ledger: Readonly<Pick<SlotLedger, 'decidedThroughMs' | 'create' | 'deleting' | 'scheduleChangedMs' | 'queuedSlotMs'>>;
  readonly nowMs: number;
}

export interface Missed {
  readonly reason: MissedReason;
  readonly count: number;
  /** The (oldest) slot concerned, for the Event. */
  readonly slotMs: number;
}

/**
 * What becomes of the outstanding create: `keep` it, `supersede` it (it stored nothing: dropped, its
 * slot counted in `missed`), or `settle` it (not retried: its outcome is unknown, so the Job is looked
 * up and the slot counted late only if it is not there).
 */
export type OutstandingFate = 'keep' | 'supersede' | 'settle';

export interface Plan {
  /** Slots through this instant are decided by this plan (the create's own slot once it is queued). */
  readonly decidedThroughMs: number;
  readonly outstanding: OutstandingFate;
  readonly missed: readonly Missed[];
  /** The latest due slot gets a Job, once every Job in `replace` is deleted (the deletes accepted). */
  readonly create: { readonly slotMs: number; readonly deadlineMs: number; readonly supersededAtMs: number } | undefined;
  readonly replace: readonly Job[];
  /** Enqueue: the slot that waits for a free place from now on (undefined: none waits). */
  readonly queued: number | undefined;
}

export function plan(inp: PlanInput): Plan {
  const { scj, ledger, nowMs } = inp;
  const spec = scj.spec;
  const live = inp.jobs.filter((j) => !ledger.deleting.has(j.metadata.name));
  let out: Plan = {
    decidedThroughMs: ledger.decidedThroughMs,
    outstanding: 'keep',
    missed: [],
    create: undefined,
    replace: [],
    queued: ledger.queuedSlotMs,
  };
  if (!inp.source || scj.metadata.deletionTimestamp) return out;
  const outstanding = ledger.create;
  const missed: Missed[] = [];
  if (outstanding && !outstanding.sent && (spec.suspend || outstanding.slotMs <= ledger.scheduleChangedMs)) {
    // Suspended, or a slot of the schedule before an edit: not sent again (I6, I7).
    if (outstanding.nothingStored) missed.push({ reason: 'late', count: 1, slotMs: outstanding.slotMs });
    out = { ...out, outstanding: outstanding.nothingStored ? 'supersede' : 'settle', missed };
  }
  const queued = ledger.queuedSlotMs ?? queuedByAnotherLeader(scj, inp.jobs, ledger.decidedThroughMs);
  if (spec.suspend) {
    // A waiting slot is dropped with the rest (I6): counted, it was due before the suspension.
    if (queued !== undefined) out = { ...out, missed: [...out.missed, { reason: 'late', count: 1, slotMs: queued }], queued: undefined };
    // What was decided before stays decided, and nothing more: the status keeps it while suspended
    // (suspendedNextScheduleTime, so a wall-clock step backwards re-runs no slot, I5) and must not
    // change with every reconcile. The slots that fall while suspended are skipped by the resume.
    return { ...out, decidedThroughMs: lastDecidedMs(scj, inp.jobs, ledger.decidedThroughMs) };
  }

  const due = dueSlots(inp.source, lastDecidedMs(scj, inp.jobs, ledger.decidedThroughMs), nowMs);
  if (!due && queued === undefined) return out;
  if (outstanding && out.outstanding === 'keep') {
    if (outstanding.sent || !outstanding.nothingStored) return out; // its answer first
    if (!due) return out; // nothing newer: it goes on
    missed.push({ reason: 'late', count: 1, slotMs: outstanding.slotMs });
    out = { ...out, outstanding: 'supersede' };
  }
  if (due) {
    // A newer due slot takes the waiting slot's place.
    if (queued !== undefined) missed.push({ reason: 'late', count: 1, slotMs: queued });
    if (due.olderCount > 0) missed.push({ reason: 'late', count: due.olderCount, slotMs: due.firstMs });
    out = { ...out, missed, queued: undefined, decidedThroughMs: due.latestMs - 1 };
  } else {
    out = { ...out, missed, queued: undefined };
  }

  const slotMs = due ? due.latestMs : (queued as number);
  const miss = (reason: MissedReason): Plan => ({ ...out, missed: [...missed, { reason, count: 1, slotMs }], decidedThroughMs: Math.max(out.decidedThroughMs, slotMs) });
  if (inp.templateInvalid) return miss('error'); // Ready=False InvalidJobTemplate says why
  if (spec.startingDeadlineSeconds !== undefined && nowMs - slotMs > spec.startingDeadlineSeconds * 1000) return miss('deadline');
  const policy = spec.concurrencyPolicy ?? 'Allow';
  // A Job being deleted is active until it is gone, as in upstream's status.active.
  const full = inp.jobs.filter(isActive).length >= (spec.maxConcurrency ?? 1);
  if (policy === 'Forbid' && full) return miss('forbid');
  if (policy === 'Enqueue' && full) return { ...out, queued: slotMs, decidedThroughMs: Math.max(out.decidedThroughMs, slotMs) };
  // No starting deadline: retried until answered or superseded (a daily schedule still runs after an outage).
  const deadlineMs = spec.startingDeadlineSeconds === undefined ? Number.POSITIVE_INFINITY : slotMs + spec.startingDeadlineSeconds * 1000;
  const supersededAtMs = inp.source.next(slotMs) ?? Number.POSITIVE_INFINITY;
  const replace = policy === 'Replace' ? live.filter((j) => isActive(j) && !j.metadata.deletionTimestamp) : [];
  return { ...out, create: { slotMs, deadlineMs, supersededAtMs }, replace };
}

/**
 * Enqueue: the slot a previous leader left waiting (status.queuedScheduleTime, for the same schedule),
 * unless it has its Job already or this replica decided past it.
 */
export function queuedByAnotherLeader(scj: SecondCronJob, jobs: readonly Job[], ledgerDecidedMs: number): number | undefined {
  if ((scj.spec.concurrencyPolicy ?? 'Allow') !== 'Enqueue' || scj.status?.scheduleHash !== scheduleHash(scj)) return undefined;
  const slot = Date.parse(scj.status.queuedScheduleTime ?? '');
  if (Number.isNaN(slot) || slot <= ledgerDecidedMs || jobs.some((j) => jobSlotMs(j) >= slot)) return undefined;
  return slot;
}

/**
 * Finished Jobs beyond the history limits, as they stand when the deletes go out (the reconcile's
 * upkeep, after the decision): never one being deleted, never the slot of the outstanding create (its
 * retry would store a second Job once the first is gone), and only slots the persisted status already
 * covers (a next leader must not decide them again, I11).
 */
export function historyToPrune(inp: Pick<PlanInput, 'scj' | 'jobs' | 'ledger'>): Job[] {
  const live = inp.jobs.filter((j) => !inp.ledger.deleting.has(j.metadata.name));
  const spec = inp.scj.spec;
  const covered = persistedDecidedMs(inp.scj);
  const outstandingSlot = inp.ledger.create?.slotMs;
  return jobsToPrune(live, spec.successfulJobsHistoryLimit ?? 3, spec.failedJobsHistoryLimit ?? 1).filter((j) => {
    const slot = jobSlotMs(j);
    if (Number.isNaN(slot)) return true; // started by hand: no slot to decide again
    return slot !== outstandingSlot && slot <= covered;
  });
}

/**
 * Through which instant the status in the cache (as written and read back) says slots were decided.
 * nextScheduleTime (suspendedNextScheduleTime while suspended) speaks for the schedule it was computed
 * for: trusted while the schedule's fields hash the same (a template or history edit changes no slot);
 * a status without the hash (written by an older version) only for its own generation.
 */
function persistedDecidedMs(scj: SecondCronJob, hash: string = scheduleHash(scj)): number {
  const status = scj.status;
  const lastSchedule = Date.parse(status?.lastScheduleTime ?? '');
  const sameSchedule = status?.scheduleHash !== undefined ? status.scheduleHash === hash : status?.observedGeneration === scj.metadata.generation;
  const next = sameSchedule ? Date.parse(status?.nextScheduleTime ?? status?.suspendedNextScheduleTime ?? '') - 1 : Number.NaN;
  return Math.max(Number.isNaN(lastSchedule) ? Number.NEGATIVE_INFINITY : lastSchedule, Number.isNaN(next) ? Number.NEGATIVE_INFINITY : next);
}

/**
 * The latest instant through which every slot is known to be decided: by this replica (its ledger), or
 * by any leader before it, as its status and Jobs show. nextScheduleTime is written as the first slot a
 * leader had not decided; `hash`: the schedule it must have been written for (default: the spec's).
 */
export function lastDecidedMs(scj: SecondCronJob, jobs: readonly Job[], ledgerDecidedMs: number, hash?: string): number {
  let known = Math.max(Date.parse(scj.metadata.creationTimestamp), ledgerDecidedMs, persistedDecidedMs(scj, hash));
  for (const j of jobs) {
    const slot = jobSlotMs(j);
    if (slot > known) known = slot;
  }
  return known;
}

/**
 * What status.nextScheduleTime says: the first slot whose outcome is not final. A slot whose create is
 * still outstanding, or whose Job may or may not exist (looked up), is not final (leadership may be
 * lost before it is settled), so a leader reading the status back never takes it for decided. `jobs`:
 * the Jobs known to exist.
 */
export function firstOpenSlotMs(source: SlotSource, scj: SecondCronJob, jobs: readonly Job[], ledger: Pick<SlotLedger, 'decidedThroughMs' | 'create' | 'expected'>): number | null {
  let decided = ledger.create ? Math.min(ledger.decidedThroughMs, ledger.create.slotMs - 1) : ledger.decidedThroughMs;
  for (const e of ledger.expected.values()) {
    if (!e.confirmed) decided = Math.min(decided, jobSlotMs(e.job) - 1);
  }
  return source.next(lastDecidedMs(scj, jobs, decided));
}
