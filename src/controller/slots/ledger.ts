// What the leader knows about one schedule's slots, in one place, changed only through the named
// transitions below. No I/O and no clock: the reconcile reads it into a plan (plan.ts), the executor
// and the create answers move it on. Every field is per schedule; dropped with the schedule's record.
import type { Job } from '../api.js';
import { jobSlotMs } from '../job-state.js';
import type { Plan } from './plan.js';

/** The one create of this schedule that is queued, in flight or waiting to retry (at most one). */
export interface OutstandingCreate {
  readonly slotMs: number;
  /** The request is on the wire: its answer decides what happens next. */
  sent: boolean;
  /**
   * Proof that no Job was stored for the slot: never sent yet, or answered 429/503. Such a create is
   * superseded by a newer due slot (only the latest missed slot may run). After an unknown outcome
   * (timeout, reset, a 5xx that may have stored) it is retried for its own slot, never superseded:
   * the Job may exist.
   */
  nothingStored: boolean;
}

/** How a create ended, as far as the slot is concerned. */
export type CreateEnd =
  | 'created' //        the slot has its Job
  | 'already_exists' // the slot had its Job (a retry after an unknown outcome, or another leader)
  | 'failed' //         no Job and no more tries (4xx, or retries ran out before the deadline)
  | 'not_leader'; //    never sent, or not retried: fenced off; the slot is undecided again

export class SlotLedger {
  /** Every slot at or before this instant is decided: it got a Job, was counted as missed, or fell while suspended. */
  decidedThroughMs = Number.NEGATIVE_INFINITY;
  create: OutstandingCreate | undefined;
  /** Latest slot with a Job this leader created or found, before the Job cache shows it (for status). */
  lastScheduledMs: number | undefined;
  /**
   * Jobs created by this leader that the Job cache has not shown yet, so that Forbid/Replace and status
   * see them at once, with when the create was acknowledged (monotonic ms). Dropped when the cache
   * shows them, or when a relist requested after the acknowledgement does not.
   */
  readonly expected = new Map<string, { job: Job; ackMonoMs: number }>();
  /** When the schedule last changed or resumed: slots at or before it are never decided again. */
  private scheduleChangedMs = Number.NEGATIVE_INFINITY;
  /** Names of Jobs whose delete the API server accepted, until the watch shows them gone. */
  readonly deleting = new Set<string>();

  /**
   * A plan's decisions: the superseded create dropped, the slots through decidedThroughMs decided, and
   * the create queued, unless the running Jobs must be deleted first (then it is planned again once
   * their deletes were accepted).
   */
  decide(plan: Pick<Plan, 'supersede' | 'decidedThroughMs' | 'create' | 'replace'>): void {
    if (plan.supersede) {
      if (this.create && (this.create.sent || !this.create.nothingStored)) throw new Error('only a create with nothing stored can be superseded');
      this.create = undefined;
    }
    this.decideThrough(plan.decidedThroughMs);
    if (!plan.create || plan.replace.length > 0) return;
    if (this.create) throw new Error(`a create for slot ${this.create.slotMs} is still outstanding`);
    this.decideThrough(plan.create.slotMs);
    this.create = { slotMs: plan.create.slotMs, sent: false, nothingStored: true };
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

  /**
   * True when the caller must count the slot as missed now: a create fenced off (`not_leader`) for a
   * slot of a schedule that has changed since, which nobody can decide again.
   */
  createEnded(end: CreateEnd, slotMs: number): boolean {
    if (this.create?.slotMs !== slotMs) return false;
    this.create = undefined;
    if (end === 'created' || end === 'already_exists') {
      this.lastScheduledMs = Math.max(slotMs, this.lastScheduledMs ?? Number.NEGATIVE_INFINITY);
    } else if (end === 'not_leader') {
      if (slotMs <= this.scheduleChangedMs) return true;
      // Not sent, or not retried: whoever leads next decides this slot. Nothing after it was decided
      // while it was outstanding.
      this.decidedThroughMs = Math.min(this.decidedThroughMs, slotMs - 1);
    }
    return false;
  }

  /**
   * Leadership is gone: a create not on the wire is dropped and its slot undecided again. One whose
   * last answer left the outcome unknown may have stored its Job (`maybe`, the Job it would be): it
   * counts as created until the Job cache shows it or a later relist proves it absent, so that Forbid
   * does not start a second Job beside it when leadership returns before the watch caught up.
   */
  leadershipLost(maybe: { job: Job; ackMonoMs: number } | undefined): boolean {
    if (!this.create || this.create.sent) return false;
    if (!this.create.nothingStored && maybe) this.expected.set(maybe.job.metadata.name, maybe);
    return this.createEnded('not_leader', this.create.slotMs);
  }

  /**
   * The schedule changed (schedule, interval, time zone) or resumed, as seen at nowMs: slots of the
   * new schedule start after this moment, and slots that fell while suspended are neither run nor
   * counted. A slot of the old schedule whose create was not sent yet will not run now: it is
   * returned for the caller to cancel and count. A create on the wire, or retrying after an unknown
   * outcome, goes on: it may have landed already.
   */
  scheduleChanged(nowMs: number): number | undefined {
    const dropped = this.create && !this.create.sent && this.create.nothingStored ? this.create.slotMs : undefined;
    if (dropped !== undefined) this.create = undefined;
    this.decideThrough(nowMs);
    this.scheduleChangedMs = Math.max(this.scheduleChangedMs, nowMs);
    return dropped;
  }

  private decideThrough(throughMs: number): void {
    if (throughMs > this.decidedThroughMs) this.decidedThroughMs = throughMs;
  }

  /**
   * The Job cache shows a Job. True when it is the Job of the create waiting to retry after an unknown
   * outcome (it was stored after all): that create ends as already existing, and the caller cancels
   * its retry — a retry after the Job finished and was pruned would run the slot a second time.
   */
  jobObserved(job: Job): boolean {
    this.expected.delete(job.metadata.name);
    const c = this.create;
    if (!c || c.sent || jobSlotMs(job) !== c.slotMs) return false;
    this.createEnded('already_exists', c.slotMs);
    return true;
  }

  jobGone(job: Job): void {
    this.expected.delete(job.metadata.name);
    this.deleting.delete(job.metadata.name);
  }

  deleteAccepted(job: Job): void {
    this.deleting.add(job.metadata.name);
  }

  /**
   * After a relist that started at listStartedMonoMs, the API server's truth wins: created Jobs it did
   * not show are dropped, and so are deleted ones it does not hold any more (whose DELETED event the
   * watch never delivered). True when something was dropped.
   */
  relisted(listStartedMonoMs: number, listed: (name: string) => boolean): boolean {
    let dropped = false;
    for (const name of this.deleting) {
      if (!listed(name)) this.deleting.delete(name);
    }
    for (const [name, e] of this.expected) {
      if (e.ackMonoMs >= listStartedMonoMs) continue;
      this.expected.delete(name);
      dropped = true;
    }
    return dropped;
  }
}
