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
// - Forbid: a Job active or being created means no Job for the slot. Replace: the active Jobs are
//   deleted first (the deletes accepted), then the create. Suspended: slots are decided, not counted.
import type { MissedReason } from '../../metrics/metrics.js';
import type { SlotSource } from '../../schedule/index.js';
import type { Job, SecondCronJob } from '../api.js';
import { dueSlots } from './due-slots.js';
import { jobsToPrune } from '../history.js';
import { isActive, jobSlotMs } from '../job-state.js';
import type { SlotLedger } from './ledger.js';

export interface PlanInput {
  readonly scj: SecondCronJob;
  /** The compiled schedule; undefined when it is invalid (no slots at all). */
  readonly source: SlotSource | undefined;
  /** The Job template was judged invalid for this generation: due slots are counted as errors. */
  readonly templateInvalid: boolean;
  /** The Jobs this SecondCronJob controls: the cache, plus the ones created that it has not shown yet. */
  readonly jobs: readonly Job[];
  readonly ledger: Readonly<Pick<SlotLedger, 'decidedThroughMs' | 'create' | 'deleting'>>;
  readonly nowMs: number;
}

export interface Missed {
  readonly reason: MissedReason;
  readonly count: number;
  /** The (oldest) slot concerned, for the Event. */
  readonly slotMs: number;
}

export interface Plan {
  /** Slots through this instant are decided by this plan (the create's own slot once it is queued). */
  readonly decidedThroughMs: number;
  /** Cancel the outstanding create: a newer slot runs instead (it is counted in `missed`). */
  readonly supersede: boolean;
  readonly missed: readonly Missed[];
  /** The latest due slot gets a Job, once every Job in `replace` is deleted (the deletes accepted). */
  readonly create: { readonly slotMs: number; readonly deadlineMs: number } | undefined;
  readonly replace: readonly Job[];
  /** Finished Jobs beyond the history limits. */
  readonly prune: readonly Job[];
}

/** Without startingDeadlineSeconds a create is abandoned a minute after its slot (bounds the retries). */
const DEFAULT_CREATE_DEADLINE_S = 60;

export function plan(inp: PlanInput): Plan {
  const { scj, ledger, nowMs } = inp;
  const spec = scj.spec;
  const live = inp.jobs.filter((j) => !ledger.deleting.has(j.metadata.name));
  let out: Plan = {
    decidedThroughMs: ledger.decidedThroughMs,
    supersede: false,
    missed: [],
    create: undefined,
    replace: [],
    prune: jobsToPrune(live, spec.successfulJobsHistoryLimit ?? 3, spec.failedJobsHistoryLimit ?? 1),
  };
  if (!inp.source || scj.metadata.deletionTimestamp) return out;
  if (spec.suspend) return { ...out, decidedThroughMs: Math.max(ledger.decidedThroughMs, nowMs) };

  const due = dueSlots(inp.source, lastDecidedMs(scj, inp.jobs, ledger.decidedThroughMs), nowMs);
  if (!due) return out;
  const outstanding = ledger.create;
  const missed: Missed[] = [];
  if (outstanding) {
    if (outstanding.sent || !outstanding.nothingStored) return out; // its answer first
    missed.push({ reason: 'late', count: 1, slotMs: outstanding.slotMs });
  }
  if (due.olderCount > 0) missed.push({ reason: 'late', count: due.olderCount, slotMs: due.firstMs });
  out = { ...out, supersede: outstanding !== undefined, missed, decidedThroughMs: due.latestMs - 1 };

  const slotMs = due.latestMs;
  const miss = (reason: MissedReason): Plan => ({ ...out, missed: [...missed, { reason, count: 1, slotMs }], decidedThroughMs: slotMs });
  if (inp.templateInvalid) return miss('error'); // Ready=False InvalidJobTemplate says why
  if (spec.startingDeadlineSeconds !== undefined && nowMs - slotMs > spec.startingDeadlineSeconds * 1000) return miss('deadline');
  const active = live.filter(isActive);
  const policy = spec.concurrencyPolicy ?? 'Allow';
  if (active.length > 0 && policy === 'Forbid') return miss('forbid');
  const deadlineMs = slotMs + (spec.startingDeadlineSeconds ?? DEFAULT_CREATE_DEADLINE_S) * 1000;
  return { ...out, create: { slotMs, deadlineMs }, replace: policy === 'Replace' ? active : [] };
}

/**
 * The latest instant through which every slot is known to be decided: by this replica (its ledger), or
 * by any leader before it, as its status and Jobs show. nextScheduleTime is written as the first slot a
 * leader had not decided; it speaks for the schedule of the generation the status was written for.
 */
function lastDecidedMs(scj: SecondCronJob, jobs: readonly Job[], ledgerDecidedMs: number): number {
  let known = Math.max(Date.parse(scj.metadata.creationTimestamp), ledgerDecidedMs);
  const lastSchedule = Date.parse(scj.status?.lastScheduleTime ?? '');
  if (lastSchedule > known) known = lastSchedule;
  const next = scj.status?.observedGeneration === scj.metadata.generation ? Date.parse(scj.status?.nextScheduleTime ?? '') - 1 : Number.NaN;
  if (next > known) known = next;
  for (const j of jobs) {
    const slot = jobSlotMs(j);
    if (slot > known) known = slot;
  }
  return known;
}

/**
 * What status.nextScheduleTime says: the first slot whose outcome is not final. A slot whose create is
 * still outstanding is not final (leadership may be lost before it is sent), so a leader reading the
 * status back never takes it for decided.
 */
export function firstOpenSlotMs(source: SlotSource, scj: SecondCronJob, jobs: readonly Job[], ledger: Pick<SlotLedger, 'decidedThroughMs' | 'create'>): number | null {
  const decided = ledger.create ? Math.min(ledger.decidedThroughMs, ledger.create.slotMs - 1) : ledger.decidedThroughMs;
  return source.next(lastDecidedMs(scj, jobs, decided));
}
