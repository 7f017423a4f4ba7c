// What the leader knows about one schedule's slots, in one place, changed only through the named
// transitions below. No I/O and no clock: the reconcile reads it into a plan (plan.ts); the executor
// (executor.ts) is the only caller of the transitions. Every field is per schedule; dropped with the
// schedule's record.
import type { MissedReason } from '../../metrics/metrics.js';
import type { Job } from '../../api/resources.js';
import { jobSlotMs } from '../job-state.js';

/** The one create of this schedule that is queued, in flight or waiting to retry (at most one). */
export interface OutstandingCreate {
  readonly slotMs: number;
  /** The request is on the wire: its answer decides what happens next. */
  sent: boolean;
  /**
   * Proof that no Job was stored for the slot: never sent yet, or answered 429/503/quota. Such a create
   * is superseded by a newer due slot (only the latest missed slot may run). After an unknown outcome
   * (timeout, reset, a 5xx that may have stored) it is retried for its own slot, never superseded:
   * the Job may exist.
   */
  nothingStored: boolean;
}

/**
 * A Job this leader created, or may have created, that the Job cache has not shown yet. Forbid, Replace
 * and status see it at once. Unless the cache shows it first, it is looked up with a GET once
 * `lookUpAtMonoMs` has passed (upstream's MissingJob): a create that stored nothing never blocks Forbid.
 */
export interface ExpectedJob {
  /** The Job as the create's answer or a GET returned it; or as it would be (`confirmed` false: no uid). */
  readonly job: Job;
  /** The API server answered with this Job (201, or a GET): it exists, or existed. */
  readonly confirmed: boolean;
  /** When to look it up if the cache still has not shown it (monotonic ms). */
  readonly lookUpAtMonoMs: number;
  /** When the lookup finds nothing, the slot is counted missed with this reason (an unknown outcome given up). */
  readonly missedIfAbsent?: MissedReason;
  /** An AlreadyExists answer: adopted only if the Job is controlled by this resource. */
  readonly adoptOnly?: boolean;
  /**
   * A slot due before this replica led, which a previous leader may have given a Job its cache has
   * not shown yet: Forbid, Enqueue and Replace decide nothing for the schedule until it is looked up.
   */
  readonly holdsDecisions?: boolean;
  /**
   * The create's last attempt went unanswered (a timeout, a reset, a 504): it may still be inside the
   * API server. A lookup that finds nothing is confirmed by a second one a few seconds later before the
   * slot is counted: at a kube-apiserver's thaw, such a create stored its Job after a GET had found none
   * (the integration test api-stall, 7 slots in one run).
   */
  readonly confirmAbsence?: boolean;
  /** Found absent once (confirmAbsence): the second lookup decides. Until then it may be a Job. */
  readonly absentOnce?: boolean;
}

const NO_EXPECTED_JOBS: ReadonlyMap<string, ExpectedJob> = new Map();
const NO_DELETING_JOBS: ReadonlySet<string> = new Set();

/** How a create ended, as far as the slot is concerned. */
export type CreateEnd =
  | 'created' //        the slot has its Job
  | 'already_exists' // the slot had its Job (a retry after an unknown outcome, or another leader)
  | 'failed' //         no Job and no more tries (4xx, or the starting deadline passed)
  | 'superseded' //     not sent again: a newer slot fell due while it stored nothing (the slot is late)
  | 'not_leader'; //    not sent, or not retried: fenced off or handing over; the slot is undecided again

export class SlotLedger {
  /** Every slot at or before this instant is decided: it got a Job, was counted as missed, or fell while suspended. */
  decidedThroughMs = Number.NEGATIVE_INFINITY;
  create: OutstandingCreate | undefined;
  /** Latest slot with a Job this leader created or found, before the Job cache shows it (for status). */
  lastScheduledMs: number | undefined;
  /** When the schedule last changed or resumed: slots at or before it are never decided again. */
  scheduleChangedMs = Number.NEGATIVE_INFINITY;
  /** Enqueue: the one slot waiting for a free place (decided as waiting, not yet created). */
  queuedSlotMs: number | undefined;
  /**
   * Made on first use and dropped when empty, like `deletingJobs`: an empty Map and Set are 320 bytes,
   * 3.2 MiB of a 10,000-schedule heap where almost every ledger holds neither (heap snapshot, issue 24).
   */
  private expectedJobs: Map<string, ExpectedJob> | undefined;
  /** Names of Jobs whose delete the API server accepted, until the watch shows them gone. */
  private deletingJobs: Set<string> | undefined;

  get expected(): ReadonlyMap<string, ExpectedJob> {
    return this.expectedJobs ?? NO_EXPECTED_JOBS;
  }

  get deleting(): ReadonlySet<string> {
    return this.deletingJobs ?? NO_DELETING_JOBS;
  }

  /** A Job this leader created (or may have), until the Job cache shows it or a lookup settles it. */
  expect(entry: ExpectedJob): void {
    (this.expectedJobs ??= new Map()).set(entry.job.metadata.name, entry);
  }

  /**
   * The expected Job of a create with an unknown outcome existed (a delete of it was accepted): its
   * slot had its Job, so a lookup that finds it gone no longer counts the slot missed.
   */
  expectedJobExisted(name: string): void {
    const e = this.expectedJobs?.get(name);
    if (e?.missedIfAbsent === undefined) return;
    this.jobFound(jobSlotMs(e.job));
    const { missedIfAbsent, confirmAbsence, absentOnce, ...existed } = e;
    this.expectedJobs?.set(name, existed);
  }

  /** The Job is known not to exist, or the cache shows it. */
  forgetExpected(name: string): void {
    if (this.expectedJobs?.delete(name) && this.expectedJobs.size === 0) this.expectedJobs = undefined;
  }

  private forgetDeleting(name: string): void {
    if (this.deletingJobs?.delete(name) && this.deletingJobs.size === 0) this.deletingJobs = undefined;
  }

  /** Slots through throughMs are decided (counted, skipped or running). */
  decideThrough(throughMs: number): void {
    if (throughMs > this.decidedThroughMs) this.decidedThroughMs = throughMs;
  }

  /** Enqueue: this slot waits for a free place from now on (undefined: none waits). */
  queue(slotMs: number | undefined): void {
    this.queuedSlotMs = slotMs;
  }

  /** The create of a slot was submitted to the creator: its slot is decided. */
  createQueued(slotMs: number): void {
    if (this.create) throw new Error(`a create for slot ${this.create.slotMs} is still outstanding`);
    this.decideThrough(slotMs);
    this.create = { slotMs, sent: false, nothingStored: true };
  }

  /** The outstanding create was dropped by the creator (it was not on the wire). */
  createDropped(): OutstandingCreate | undefined {
    const dropped = this.create;
    this.create = undefined;
    return dropped;
  }

  createSent(): void {
    if (this.create) this.create.sent = true;
  }

  /**
   * An answer that will be retried: with proof that this attempt stored nothing (429/503), or an unknown
   * outcome. An earlier unknown outcome is not undone by a later 429: that Job may exist all the same.
   */
  createRetrying(nothingStored: boolean): void {
    if (!this.create) return;
    this.create.sent = false;
    this.create.nothingStored &&= nothingStored;
  }

  /** The creator ended the create of slotMs; false when it is not the outstanding one (already settled). */
  createEnded(end: CreateEnd, slotMs: number): boolean {
    if (this.create?.slotMs !== slotMs) return false;
    this.create = undefined;
    if (end === 'created') {
      this.jobFound(slotMs);
    } else if (end === 'not_leader' && slotMs > this.scheduleChangedMs) {
      // Whoever leads next decides this slot (a slot of a schedule that has changed since is counted
      // by the caller instead). Nothing after it was decided while it was outstanding.
      this.decidedThroughMs = Math.min(this.decidedThroughMs, slotMs - 1);
    }
    return true;
  }

  /** The slot's Job exists (created, or found by a lookup after AlreadyExists or an unknown outcome). */
  jobFound(slotMs: number): void {
    this.lastScheduledMs = Math.max(slotMs, this.lastScheduledMs ?? Number.NEGATIVE_INFINITY);
  }

  /**
   * The schedule changed (schedule, interval, time zone) or resumed, as seen at nowMs: slots of the new
   * schedule start after this moment, and slots that fell while suspended are neither run nor counted.
   */
  scheduleChanged(nowMs: number): void {
    this.decideThrough(nowMs);
    this.scheduleChangedMs = Math.max(this.scheduleChangedMs, nowMs);
  }

  /**
   * The Job cache shows a Job. True when it is the Job of the outstanding create (stored by an attempt
   * whose answer was lost or has not come yet): the caller tells the creator, which never sends it
   * again — a retry after the Job finished and was deleted would run the slot a second time.
   */
  jobObserved(job: Job): boolean {
    this.forgetExpected(job.metadata.name);
    return this.create !== undefined && jobSlotMs(job) === this.create.slotMs;
  }

  jobGone(job: Job): void {
    this.forgetExpected(job.metadata.name);
    this.forgetDeleting(job.metadata.name);
  }

  deleteAccepted(job: Job): void {
    (this.deletingJobs ??= new Set()).add(job.metadata.name);
  }

  /** After a relist, deleted Jobs the API server does not hold any more are forgotten (their DELETED event was lost). */
  relisted(listed: (name: string) => boolean): void {
    for (const name of [...this.deleting]) {
      if (!listed(name)) this.forgetDeleting(name);
    }
  }
}
