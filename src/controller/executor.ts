// The executor: the one module that changes both a schedule's slot ledger and the Job creator (DESIGN
// §3 "One decision path"). The reconcile of a key asks it to plan and carry the plan out; the creator
// reports each step of a create to it (sent, retrying, ended), the Job cache reports Jobs seen and
// gone. A report only moves the ledger on and queues the key: no decision is ever taken inside the
// creator's or the queue's call. Every count of a slot (created, skipped, missed) is made here.
//
// The ledger always says what the creator does: a create is dropped from the ledger only when the
// creator confirms that it dropped it (it was not on the wire), and the ledger records a create only
// once the creator took it.
import type { MonotonicClock, Timers, WallClock } from '../clock/clock.js';
import { isNotFound, mayStillBeInServer } from '../kube/api-error.js';
import type { RestClient } from '../kube/rest.js';
import { objectKey } from '../kube/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { SlotSource } from '../schedule/index.js';
import { type Job, type SecondCronJob, jobsPath } from '../api/resources.js';
import type { Cache } from './cache.js';
import type { EventSink } from './events.js';
import { deleteJob } from './finalizer.js';
import { buildJob, jobName } from './job-builder.js';
import type { CreateAnswer, CreateListener, JobCreator } from './job-creator.js';
import type { JobIndex } from './job-index.js';
import { isOwnedBy, jobSlotMs } from './job-state.js';
import type { ScheduleRecord } from './schedule-records.js';
import { slimJob } from './slim.js';
import { dueSlots } from './slots/due-slots.js';
import type { ExpectedJob, SlotLedger } from './slots/ledger.js';
import { type Missed, historyToPrune, lastDecidedMs, plan, queuedByAnotherLeader } from './slots/plan.js';
import { hashOfScheduleSpec } from './slots/schedule-hash.js';
import { rfc3339 } from './status.js';

export interface ExecutorDeps {
  creator: JobCreator;
  /** Reads (lookups of missing Jobs); a follower may read. */
  rest: RestClient;
  /** Fenced writes (deletes). */
  writes: RestClient;
  jobs: JobIndex;
  scjs: Cache<SecondCronJob>;
  records: { get(key: string): ScheduleRecord | undefined };
  events: EventSink;
  metrics: Metrics;
  wall: WallClock;
  mono: MonotonicClock;
  timers: Timers;
  log: Logger;
  /** Queues the key for a reconcile; never runs it here. */
  requeue: (key: string) => void;
  /** This replica leads and its renew deadline has not passed: it may decide (and count) slots. */
  fresh: () => boolean;
}

// A Job the create's answer named that the cache has not shown after this long is looked up with a
// GET (upstream's MissingJob): the watch normally shows it within tens of milliseconds.
export const MISSING_JOB_LOOKUP_MS = 3_000;

export class Executor {
  /** Lookups on the wire, by "<key>/<job name>". */
  private readonly lookingUp = new Set<string>();
  /** When this replica's current (or last) term as leader began (wall ms); before any, none. */
  private leadingSinceMs = Number.NEGATIVE_INFINITY;
  /** Schedules whose previous leader's slot was looked up in this term: one slot each (previousLeadersSlot). */
  private lookedUpThisTerm = new WeakSet<SlotLedger>();

  constructor(private readonly d: ExecutorDeps) {}

  // ---- deciding -----------------------------------------------------------------------------

  /**
   * Plans the schedule's slots and carries the plan out: the outstanding create superseded or settled,
   * what is missed counted, and the create queued — for Replace once the running Jobs' deletes were
   * accepted (a failed delete throws: no create, the key is retried with backoff). `current` is checked
   * before every plan: a deposed leader, a new spec or a new object stop it. The oldest due slot of a
   * previous leader's is looked up first (previousLeadersSlot).
   */
  async decide(key: string, scj: SecondCronJob, rec: ScheduleRecord, templateInvalid: boolean, current: () => boolean): Promise<void> {
    const ledger = rec.ledger;
    for (;;) {
      if (!current()) return;
      if (waitsForLookup(scj, rec)) return; // the lookup queues the key
      const jobs = this.ownedJobs(key, scj, rec);
      const unseen = this.previousLeadersSlot(scj, rec, jobs);
      if (unseen !== undefined) {
        // Decided by the lookup (counted late if the Job is not there), not by this plan. A slot the
        // previous leader left waiting (Enqueue) is older: it keeps waiting, now in this ledger.
        ledger.queue(ledger.queuedSlotMs ?? queuedByAnotherLeader(scj, jobs, ledger.decidedThroughMs));
        ledger.decideThrough(unseen);
        this.lookedUpThisTerm.add(ledger);
        this.expect(rec, scj, unseen, { missedIfAbsent: 'late', holdsDecisions: true });
        continue;
      }
      const p = plan({ scj, source: rec.compiled.ok ? rec.compiled.source : undefined, templateInvalid, jobs, ledger, nowMs: this.d.wall.nowMs() });
      if (p.outstanding !== 'keep') {
        // Read from the ledger a moment ago, with no await since: the creator holds it off the wire.
        if (!this.d.creator.cancel(key)) throw new Error(`${key}: the creator did not drop the create the ledger holds`);
        const dropped = ledger.createDropped();
        if (dropped && p.outstanding === 'settle') this.expect(rec, scj, dropped.slotMs, { missedIfAbsent: 'late' });
      }
      ledger.decideThrough(p.decidedThroughMs);
      if (p.queued !== ledger.queuedSlotMs && p.queued !== undefined) {
        this.d.events.record(scj, 'Normal', 'Queued', `Slot ${rfc3339(p.queued)} waits for a running Job to finish (concurrencyPolicy Enqueue, maxConcurrency ${scj.spec.maxConcurrency ?? 1})`);
      }
      ledger.queue(p.queued);
      for (const m of p.missed) this.missed(scj, m);
      if (!p.create) return;
      const late = p.missed.reduce((n, m) => n + (m.reason === 'late' ? m.count : 0), 0);
      if (late > 0) this.d.log.info('catching up missed slot', { key, slot: rfc3339(p.create.slotMs), older: late });
      if (p.replace.length > 0) {
        await this.deleteJobs(scj, rec, p.replace, 'concurrencyPolicy Replace');
        continue;
      }
      const { slotMs, deadlineMs, supersededAtMs } = p.create;
      // In the ledger first: the creator may end it inside submit (past its deadline, superseded,
      // fenced), and that report must find it there.
      ledger.createQueued(slotMs);
      try {
        // Built when sent: a retry after a template edit sends the edited template.
        this.d.creator.submit(key, { build: () => buildJob(this.d.scjs.get(key) ?? scj, slotMs), slotMs, deadlineMs, supersededAtMs });
      } catch (err) {
        ledger.createDropped();
        throw err;
      }
      return;
    }
  }

  /**
   * The oldest due slot, when it fell due before this replica began leading and a plan would count it
   * missed (a newer slot is due too) with no Job known for it. The previous leader may have stored its
   * Job — its last create, on the wire when it stopped — without this replica's watch showing it yet:
   * after a kube-apiserver freeze, the freeze's watch events and the Lease come back together (the
   * property test's API server reproduces it: a slot counted missed beside its Job). It is looked up
   * instead, as upstream's MissingJob. Slots due later are this leader's own: it created them or not.
   */
  private previousLeadersSlot(scj: SecondCronJob, rec: ScheduleRecord, jobs: readonly Job[]): number | undefined {
    if (!rec.compiled.ok || scj.spec.suspend || rec.ledger.create || this.lookedUpThisTerm.has(rec.ledger)) return undefined;
    const due = dueSlots(rec.compiled.source, lastDecidedMs(scj, jobs, rec.ledger.decidedThroughMs), this.d.wall.nowMs());
    return due && due.olderCount > 0 && due.firstMs < this.leadingSinceMs ? due.firstMs : undefined;
  }

  /** This replica leads from now on: slots due before now may have Jobs of a previous leader's. */
  startedLeading(): void {
    this.leadingSinceMs = this.d.wall.nowMs();
    this.lookedUpThisTerm = new WeakSet();
  }

  /** The finished Jobs the history limits want gone now (slots/plan.ts, historyToPrune). */
  historyToPrune(key: string, scj: SecondCronJob, rec: ScheduleRecord): Job[] {
    return historyToPrune({ scj, jobs: this.ownedJobs(key, scj, rec), ledger: rec.ledger });
  }

  /**
   * The schedule changed (or resumed after a suspension folded into one update), seen at nowMs. Every
   * slot of the old schedule that was due and not decided yet is counted now (I7), up to `countUntilMs`
   * (a suspension: the slots after it are neither run nor counted, I6); no slot of it fires afterwards.
   */
  scheduleChanged(scj: SecondCronJob, rec: ScheduleRecord, old: { source: SlotSource; spec: string } | undefined, countUntilMs: number, nowMs: number): void {
    const ledger = rec.ledger;
    if (ledger.queuedSlotMs !== undefined) {
      // The waiting slot was the old schedule's: it does not run now.
      this.missed(scj, { reason: 'late', count: 1, slotMs: ledger.queuedSlotMs });
      ledger.queue(undefined);
    }
    if (old) {
      // Decided before: by this replica, or by a leader before it for the old schedule (its status).
      const decided = lastDecidedMs(scj, this.ownedJobs(objectKey(scj), scj, rec), ledger.decidedThroughMs, hashOfScheduleSpec(old.spec));
      const from = Math.max(decided, ledger.create?.slotMs ?? Number.NEGATIVE_INFINITY);
      const due = dueSlots(old.source, from, Math.min(countUntilMs, nowMs));
      if (due) this.missed(scj, { reason: 'late', count: due.olderCount + 1, slotMs: due.firstMs });
    }
    ledger.scheduleChanged(nowMs);
  }

  // ---- reports ------------------------------------------------------------------------------

  /** What the creator reports; each moves the ledger on and queues the key, nothing more. */
  readonly answers: CreateListener = {
    sent: (key, slotMs) => {
      const ledger = this.d.records.get(key)?.ledger;
      if (ledger?.create?.slotMs === slotMs) ledger.createSent();
    },
    retrying: (key, slotMs, nothingStored, error) => {
      const ledger = this.d.records.get(key)?.ledger;
      if (ledger?.create?.slotMs !== slotMs) return;
      ledger.createRetrying(nothingStored);
      this.d.log.debug('job create will be retried', { key, slot: rfc3339(slotMs), nothingStored, err: error });
      // A newer due slot supersedes it, a suspension or an edit drops it: the reconcile decides.
      this.d.requeue(key);
    },
    ended: (key, slotMs, answer) => this.ended(key, slotMs, answer),
  };

  private ended(key: string, slotMs: number, answer: CreateAnswer): void {
    const rec = this.d.records.get(key);
    const scj = this.d.scjs.get(key);
    if (!rec || !rec.ledger.createEnded(answer.kind, slotMs)) return;
    const name = scj ? jobName(scj.metadata.name, slotMs) : undefined;
    switch (answer.kind) {
      case 'created': {
        this.d.metrics.triggerLatency.observe((answer.ackMs - slotMs) / 1000);
        const jobName = answer.job.metadata.name;
        // Seen by Forbid/Replace and status before the watch event arrives.
        if (!this.d.jobs.has(key, jobName)) {
          this.expectUntil(key, rec, { job: slimJob(answer.job), confirmed: true }, MISSING_JOB_LOOKUP_MS);
        }
        if (scj) this.d.events.record(scj, 'Normal', 'SuccessfulCreate', `Created job ${jobName}`);
        this.d.log.debug('job created', { key, job: jobName, latencyMs: answer.ackMs - slotMs });
        break;
      }
      case 'already_exists':
        // Ours only if we control it (a retry after an unknown outcome, or another leader's create):
        // looked up at once, unless the cache holds it already.
        if (scj && name && rec.ledger.lastScheduledMs === slotMs) break; // the cache showed it, ours
        if (scj && name && !this.d.jobs.has(key, name)) this.expect(rec, scj, slotMs, { adoptOnly: true });
        else if (scj && name) this.adoptOrRefuse(scj, rec, slotMs, this.d.jobs.jobsOf(key).find((j) => j.metadata.name === name));
        break;
      case 'failed':
        if (!scj) break;
        if (answer.maybeStored) this.expect(rec, scj, slotMs, { missedIfAbsent: answer.reason, confirmAbsence: mayStillBeInServer(answer.error) });
        else this.createFailed(scj, slotMs, answer.reason, answer.error);
        break;
      case 'superseded':
        if (scj) this.missed(scj, { reason: 'late', count: 1, slotMs });
        break;
      case 'not_leader':
        if (!scj) break;
        if (slotMs <= rec.ledger.scheduleChangedMs || slotMs <= lastDecidedMs(scj, [], Number.NEGATIVE_INFINITY)) {
          // A slot of a schedule that has changed since, or one the written status already claims as
          // decided (a next leader reads it back so): nobody decides it again, it is counted here.
          if (answer.maybeStored) this.expect(rec, scj, slotMs, { missedIfAbsent: 'late' });
          else this.missed(scj, { reason: 'late', count: 1, slotMs });
        } else if (answer.maybeStored) {
          // Whoever leads next decides the slot; the Job it may have stored blocks Forbid until looked up.
          this.expect(rec, scj, slotMs, {});
        }
    }
    // A Job created with nothing due behind it needs no decision: its watch event brings the key back
    // for status (one reconcile per Job fewer).
    if (answer.kind !== 'created' || this.slotDue(rec)) this.d.requeue(key);
  }

  /** A slot after the decided ones has fallen due (its fire may have come while the create was on the wire). */
  private slotDue(rec: ScheduleRecord): boolean {
    if (!rec.compiled.ok) return false;
    const next = rec.compiled.source.next(rec.ledger.decidedThroughMs);
    return next !== null && next <= this.d.wall.nowMs();
  }

  /** The Job cache shows a Job of this schedule. */
  jobObserved(key: string, job: Job): void {
    const rec = this.d.records.get(key);
    if (!rec || !rec.ledger.jobObserved(job)) return;
    // The outstanding create's Job was stored after all (an answer lost or not come yet): the slot has
    // its Job (status says so even if a TTL deletes it before the answer comes), and it is never sent
    // again. One waiting to retry ends now; one on the wire ends with its answer.
    const scj = this.d.scjs.get(key);
    if (scj && isOwnedBy(job, scj)) rec.ledger.jobFound(jobSlotMs(job));
    if (this.d.creator.jobExists(key)) this.ended(key, jobSlotMs(job), { kind: 'already_exists', ackMs: this.d.wall.nowMs() });
  }

  jobGone(key: string, job: Job): void {
    this.d.records.get(key)?.ledger.jobGone(job);
  }

  /** After a relist of Jobs: deletes the server no longer holds are forgotten, Jobs expected but not listed looked up now. */
  relisted(key: string, rec: ScheduleRecord): boolean {
    rec.ledger.relisted((name) => this.d.jobs.has(key, name));
    let lookUp = false;
    for (const e of rec.ledger.expected.values()) {
      // One found absent once waits for its second lookup: the list may predate a late write.
      if (this.d.jobs.has(key, e.job.metadata.name) || e.absentOnce) continue;
      this.expectUntil(key, rec, e, 0);
      lookUp = true;
    }
    return lookUp;
  }

  /** Leadership is gone: creates not on the wire are dropped; their slots are undecided again. */
  leadershipLost(key: string, rec: ScheduleRecord): void {
    const create = rec.ledger.create;
    if (!create || create.sent || !this.d.creator.cancel(key)) return;
    this.ended(key, create.slotMs, { kind: 'not_leader', maybeStored: !create.nothingStored });
  }

  /** The schedule is gone, or being deleted: its create is not sent (again). */
  forget(key: string): void {
    this.d.creator.cancel(key);
  }

  // ---- Jobs expected but not seen (MissingJob) ----------------------------------------------

  /**
   * The Jobs this resource controls: the cache, plus those created that it has not shown yet, and —
   * unless `confirmedOnly` (status: what a new leader reads back must be known) — those maybe created.
   */
  ownedJobs(key: string, scj: SecondCronJob, rec: ScheduleRecord, confirmedOnly = false): Job[] {
    const owned = this.d.jobs.jobsOf(key).filter((j) => isOwnedBy(j, scj));
    for (const [name, e] of rec.ledger.expected) {
      if ((e.confirmed || !confirmedOnly) && !this.d.jobs.has(key, name) && isOwnedBy(e.job, scj)) owned.push(e.job);
    }
    return owned;
  }

  /**
   * Looks up the expected Jobs whose time has come; settles each: still there (kept), ours after an
   * AlreadyExists (adopted) or someone else's (an error), gone (forgotten; the slot counted when its
   * create had given up — once a second lookup agrees, when the create may still be inside the API
   * server). A lookup not due yet has a timer that queues the key (expectUntil).
   */
  async lookUpMissing(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<void> {
    if (!this.d.fresh()) return; // it settles (counts) a slot: a decision, this term's or the next leader's
    const now = this.d.mono.nowMs();
    const due = [...rec.ledger.expected.values()].filter((e) => e.lookUpAtMonoMs <= now && !this.lookingUp.has(`${key}/${e.job.metadata.name}`));
    await Promise.all(due.map((e) => this.lookUp(key, scj, rec, e)));
  }

  private async lookUp(key: string, scj: SecondCronJob, rec: ScheduleRecord, e: ExpectedJob): Promise<void> {
    const name = e.job.metadata.name;
    const id = `${key}/${name}`;
    this.lookingUp.add(id);
    let found: Job | undefined;
    try {
      found = await this.d.rest.request<Job>({ verb: 'get', path: `${jobsPath(scj.metadata.namespace)}/${name}`, timeoutMs: 10_000, purpose: 'job_create' });
    } catch (err) {
      if (!isNotFound(err)) {
        // No verdict: the Job may exist. Looked up again later; nothing is counted meanwhile.
        this.d.log.warn('could not look up a Job the cache has not shown; trying again', { key, job: name, err });
        if (rec.ledger.expected.get(name) === e) this.expectUntil(key, rec, e, MISSING_JOB_LOOKUP_MS);
        return;
      }
    } finally {
      this.lookingUp.delete(id);
    }
    if (rec.ledger.expected.get(name) !== e) return; // the cache showed it meanwhile, or it was settled
    if (!this.d.fresh()) return; // fenced while the GET was on the wire: looked up again if it leads again
    const slotMs = jobSlotMs(e.job);
    if (found) {
      if (e.adoptOnly || !e.confirmed) this.adoptOrRefuse(scj, rec, slotMs, slimJob(found));
      else this.expectUntil(key, rec, { ...e, job: slimJob(found) }, MISSING_JOB_LOOKUP_MS);
    } else if (e.missedIfAbsent && e.confirmAbsence && !e.absentOnce) {
      this.expectUntil(key, rec, { ...e, absentOnce: true }, MISSING_JOB_LOOKUP_MS);
    } else {
      rec.ledger.forgetExpected(name);
      if (e.missedIfAbsent) this.createFailed(scj, slotMs, e.missedIfAbsent, undefined);
      this.d.log.info('a Job expected for a slot does not exist', { key, job: name, slot: rfc3339(slotMs), counted: e.missedIfAbsent ?? 'no' });
    }
    this.d.requeue(key);
  }

  /**
   * Handing over, before the statuses are written. The lookups that are due are made now: a slot this
   * leader decided but counts only after a lookup (a create with an unknown outcome, for a slot the
   * status already claims) is decided again by no next leader (the property test: an Enqueue slot that
   * waited, then went unanswered during a handover, counted by no one). A second lookup still to come
   * is not waited for: the slot is counted on the first one's 404, so the status has it decided — left
   * open, the next leader would decide it and every slot after it again (9 slots counted twice).
   */
  async settleForHandover(key: string, rec: ScheduleRecord): Promise<void> {
    const scj = this.d.scjs.get(key);
    if (!scj || rec.ledger.expected.size === 0) return;
    await this.lookUpMissing(key, scj, rec);
    for (const e of [...rec.ledger.expected.values()]) {
      if (!e.absentOnce) continue;
      rec.ledger.forgetExpected(e.job.metadata.name);
      this.createFailed(scj, jobSlotMs(e.job), e.missedIfAbsent ?? 'late', undefined);
    }
  }

  /** A Job of the slot's name exists: adopted when this resource controls it, else an error naming it. */
  private adoptOrRefuse(scj: SecondCronJob, rec: ScheduleRecord, slotMs: number, job: Job | undefined): void {
    if (!job) return;
    const name = job.metadata.name;
    if (isOwnedBy(job, scj)) {
      rec.ledger.jobFound(slotMs);
      if (this.d.jobs.has(objectKey(scj), name)) rec.ledger.forgetExpected(name);
      else this.expectUntil(objectKey(scj), rec, { job, confirmed: true }, MISSING_JOB_LOOKUP_MS);
      return;
    }
    rec.ledger.forgetExpected(name);
    this.d.events.record(scj, 'Warning', 'FailedCreate', `Job ${name} already exists and is not controlled by this SecondCronJob; slot ${rfc3339(slotMs)} has no Job`);
    this.missed(scj, { reason: 'error', count: 1, slotMs });
  }

  /** The Job of a slot whose create was given up on with an unknown outcome (or dropped), looked up now. */
  private expect(rec: ScheduleRecord, scj: SecondCronJob, slotMs: number, opts: Pick<ExpectedJob, 'missedIfAbsent' | 'adoptOnly' | 'holdsDecisions' | 'confirmAbsence'>): void {
    this.expectUntil(objectKey(scj), rec, { job: assumedJob(scj, slotMs), confirmed: false, ...opts }, 0);
  }

  /**
   * Expects the Job, to be looked up in `inMs` unless the cache shows it first. The key is queued then
   * only if it is still expected: the watch shows almost every created Job within milliseconds, and a
   * reconcile 3 s after each of them would be one more per Job for nothing.
   */
  private expectUntil(key: string, rec: ScheduleRecord, entry: Omit<ExpectedJob, 'lookUpAtMonoMs'>, inMs: number): void {
    const expected: ExpectedJob = { ...entry, lookUpAtMonoMs: this.d.mono.nowMs() + inMs };
    rec.ledger.expect(expected);
    if (inMs <= 0) return; // the caller queues the key
    this.d.timers.set(inMs, () => {
      if (rec.ledger.expected.get(expected.job.metadata.name) === expected) this.d.requeue(key);
    });
  }

  // ---- deletes and counts -------------------------------------------------------------------

  /** Deletes every Job (accepted deletes are remembered); throws the first failure after all were tried. */
  async deleteJobs(scj: SecondCronJob, rec: ScheduleRecord, jobs: readonly Job[], why: string): Promise<void> {
    const key = objectKey(scj);
    const results = await Promise.allSettled(
      jobs
        .filter((job) => !rec.ledger.deleting.has(job.metadata.name))
        .map(async (job) => {
          const outcome = await deleteJob(this.d.writes, job);
          // The watch often shows the Job gone before the answer comes (or it was gone already: a 404
          // counts as done). Remembered then, its name would never leave the set: `make soak` saw it
          // grow by ~10 names a second at 100 Jobs/s.
          const name = job.metadata.name;
          if (this.d.jobs.has(key, name) || rec.ledger.expected.has(name)) rec.ledger.deleteAccepted(job);
          // An expected Job (a create with an unknown outcome, not looked up yet) that the server had
          // to delete existed: its slot has had its Job, and the lookup that finds it gone counts nothing.
          if (outcome === 'deleted') rec.ledger.expectedJobExisted(name);
          this.d.events.record(scj, 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name} (${why})`);
        }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private createFailed(scj: SecondCronJob, slotMs: number, reason: Missed['reason'], error: Error | undefined): void {
    if (reason === 'error') {
      this.d.log.warn('job create failed', { key: objectKey(scj), slot: rfc3339(slotMs), err: error });
      this.d.events.record(scj, 'Warning', 'FailedCreate', `Error creating job for slot ${rfc3339(slotMs)}: ${error?.message ?? 'unknown error'}`);
    }
    this.missed(scj, { reason, count: 1, slotMs });
  }

  /** The one place a slot without a Job is counted. */
  missed(scj: SecondCronJob, m: Missed): void {
    this.d.metrics.triggersMissed.inc({ reason: m.reason }, m.count);
    this.d.metrics.scheduleMissed?.inc({ namespace: scj.metadata.namespace ?? '', name: scj.metadata.name }, m.count);
    if (m.reason === 'late') {
      this.d.events.record(scj, 'Warning', 'MissedSchedule', `${m.count} slot(s) from ${rfc3339(m.slotMs)} were not started in time; only the latest due slot runs`);
    } else if (m.reason === 'deadline') {
      this.d.events.record(scj, 'Warning', 'MissedSchedule', `Missed slot ${rfc3339(m.slotMs)}: not started within its starting deadline`);
    } else if (m.reason === 'forbid') {
      this.d.events.record(scj, 'Normal', 'JobAlreadyActive', 'Not starting a Job: the previous one is still running or being created (concurrencyPolicy Forbid)');
    }
  }
}

/** Forbid, Enqueue and Replace decide nothing while a previous leader's slot is looked up (holdsDecisions). */
function waitsForLookup(scj: SecondCronJob, rec: ScheduleRecord): boolean {
  if ((scj.spec.concurrencyPolicy ?? 'Allow') === 'Allow') return false;
  for (const e of rec.ledger.expected.values()) if (e.holdsDecisions) return true;
  return false;
}

/** The Job a slot's create would have stored, as far as we can know it without reading it back (no uid). */
function assumedJob(scj: SecondCronJob, slotMs: number): Job {
  const { metadata, ...rest } = buildJob(scj, slotMs);
  return slimJob({ ...rest, metadata: { ...metadata, uid: '', resourceVersion: '', creationTimestamp: new Date(slotMs).toISOString() } });
}
