// The SecondCronJob controller. Every replica keeps its caches and scheduler warm; only the leader
// writes (Jobs, status, finalizers, Events). Everything about a schedule is decided by the reconcile of
// its key on a de-duplicating work queue (one reconcile per key at a time, retried with per-key
// backoff), as upstream's CronJob controller does: the scheduler's timer only marks a key due, and a
// create's answer only moves the slot ledger on and queues the key again. The reconcile plans the
// slots (slots/plan.ts, pure), carries the plan out, then does the housekeeping: finalizer, template
// check, history, status.
import type { MonotonicClock, Timers, WallClock } from '../clock/clock.js';
import { isNotFound } from '../kube/api-error.js';
import type { ReflectorHandler } from '../kube/reflector.js';
import type { RestClient } from '../kube/rest.js';
import { objectKey } from '../kube/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Fire, Scheduler } from '../scheduler/index.js';
import { type Job, type SecondCronJob, type SecondCronJobStatus, jobsPath } from './api.js';
import type { EventSink } from './events.js';
import { addFinalizer, deleteJob, hasFinalizer, listOwnedJobs, removeFinalizer } from './finalizer.js';
import { buildJob, jobName } from './job-builder.js';
import type { CreateListener, JobCreator } from './job-creator.js';
import { JobIndex } from './job-index.js';
import { isOwnedBy, jobOutcome } from './job-state.js';
import { type ScheduleRecord, newRecord, scheduleSpecOf } from './schedule-record.js';
import { slimJob } from './slim.js';
import { type Missed, firstOpenSlotMs, plan } from './slots/plan.js';
import { type ReadyState, desiredStatus, rfc3339, statusEquals } from './status.js';
import { writeStatus } from './status-writer.js';
import { FencedRest, NotLeaderError } from './fenced-rest.js';
import { compileSecondCronJob, dryRunJob } from './verdict.js';
import { type ReconcileResult, WorkQueue } from './work-queue.js';
import type { WritePriority } from './write-priority.js';

export interface Leadership {
  isLeader(): boolean;
  /** Fencing: how much longer this replica may write as leader (before its renew deadline); <= 0 = not. */
  fenceRemainingMs(): number;
}

/** secondcron_schedules by state. A type, not an interface: the gauge reads it as a Record. */
export type ScheduleCounts = { active: number; suspended: number; invalid: number };

/** The read side of a cache. */
export interface Cache<T> {
  get(key: string): T | undefined;
  list(): Iterable<T>;
}

export interface ControllerDeps {
  rest: RestClient;
  /** SecondCronJobs as cached by the reflectors. */
  scjs: Cache<SecondCronJob>;
  creator: JobCreator;
  events: EventSink;
  metrics: Metrics;
  leadership: Leadership;
  priority: WritePriority;
  wall: WallClock;
  mono: MonotonicClock;
  timers: Timers;
  random: () => number;
  log: Logger;
  /** Reconciles running at once (finalizers, dry runs, deletions, status patches). */
  workers?: number;
  /** Longest the scheduler sleeps between wake-ups (re-checks the wall clock). */
  schedulerMaxSleepMs?: number;
}

// Status is written at most once a second per resource. For a schedule that fires at least every
// FAST_SCHEDULE_MS, a change that follows a write by less than STATUS_COALESCE_MS waits
// STATUS_COALESCE_MS, so the changes of a 1 s schedule (a Job created, then finished, every second)
// go out together: one patch per ~4–5 s instead of one or two per Job (DESIGN §2: for such schedules
// lastScheduleTime/active may trail by up to 5 s). Other schedules, and a change after a quiet
// spell, are written at once.
const STATUS_MIN_INTERVAL_MS = 1_000;
const STATUS_COALESCE_MS = 4_000;
const FAST_SCHEDULE_MS = 5_000;
// Bounded, so thousands of resources seen at once (a new leader, a restart) cannot flood the API
// server. A slot's decision never waits for one: it runs before any I/O of its reconcile, and keys
// made due by a slot or a create's answer are taken before housekeeping ones.
const DEFAULT_WORKERS = 12;

export class Controller {
  readonly scheduler: Scheduler;
  private readonly jobs = new JobIndex();
  private readonly records = new Map<string, ScheduleRecord>();
  /** The last counts(), until something they are counted from changes. */
  private scheduleCounts: ScheduleCounts | undefined;
  private readonly queue: WorkQueue;
  /** Every write goes through the fence when it is sent. */
  private readonly writes: FencedRest;

  constructor(private readonly d: ControllerDeps) {
    this.writes = new FencedRest(d.rest, () => d.leadership.fenceRemainingMs());
    this.scheduler = new Scheduler({
      mono: d.mono,
      wall: d.wall,
      timers: d.timers,
      maxSleepMs: d.schedulerMaxSleepMs,
      onFire: (fire) => this.onFire(fire),
      onClockStep: (deltaMs) => {
        d.metrics.clockSteps.inc();
        d.log.warn('wall clock stepped; slots recomputed', { deltaMs: Math.round(deltaMs) });
      },
      onError: (err, key) => d.log.error('scheduler callback failed', { key, err: err instanceof Error ? err : String(err) }),
    });
    this.queue = new WorkQueue({
      reconcile: (key) => this.reconcile(key),
      workers: d.workers ?? DEFAULT_WORKERS,
      mono: d.mono,
      timers: d.timers,
      random: d.random,
      onError: (key, err, retryInMs) => d.log.warn('reconcile failed; retrying', { key, err, retryInMs: Math.round(retryInMs) }),
    });
    d.creator.listen(this.createAnswers);
  }

  // ---- cache events -------------------------------------------------------------------------

  readonly scjEvents: ReflectorHandler<SecondCronJob> = {
    added: (scj) => {
      this.scheduleCounts = undefined;
      this.queue.add(objectKey(scj));
    },
    updated: (_old, scj) => {
      this.scheduleCounts = undefined;
      this.queue.add(objectKey(scj));
    },
    deleted: (scj) => this.forget(objectKey(scj)),
  };

  /** The handler for the Job reflector of one namespace ('' or undefined: all namespaces). */
  jobEvents(namespace?: string): ReflectorHandler<Job> {
    return {
      added: (job) => this.jobChanged(undefined, job),
      updated: (old, job) => this.jobChanged(old, job),
      deleted: (job) => {
        const key = this.jobs.remove(job);
        if (!key) return;
        this.records.get(key)?.ledger.jobGone(job);
        this.queue.add(key);
      },
      relisted: (listStartedMonoMs) => {
        for (const [key, rec] of this.records) {
          if (namespace && !key.startsWith(`${namespace}/`)) continue;
          if (rec.ledger.relisted(listStartedMonoMs, (name) => this.jobs.has(key, name))) this.queue.add(key);
        }
      },
    };
  }

  private jobChanged(old: Job | undefined, job: Job): void {
    const { key, previousKey } = this.jobs.put(job);
    if (previousKey) this.queue.add(previousKey); // relabelled: no longer that schedule's Job
    if (!key) return;
    if (this.records.get(key)?.ledger.jobObserved(job)) this.d.creator.cancel(key);
    if (old && jobOutcome(old) === jobOutcome(job) && !previousKey) return;
    this.queue.add(key);
  }

  /** The one place a schedule's state is dropped. */
  private forget(key: string): void {
    this.scheduleCounts = undefined;
    this.scheduler.delete(key);
    this.d.creator.cancel(key);
    this.records.delete(key);
    this.queue.forget(key);
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  /** Leader-only work starts: every schedule is reconciled, its due slots first. */
  startedLeading(): void {
    for (const scj of this.d.scjs.list()) this.queue.addFirst(objectKey(scj));
  }

  /** Creates not on the wire are dropped; their slots are undecided again (the next leader decides them). */
  stoppedLeading(): void {
    for (const [key, rec] of this.records) {
      const create = rec.ledger.create;
      if (!create || create.sent) continue;
      this.d.creator.cancel(key);
      const scj = this.d.scjs.get(key);
      const count = rec.ledger.leadershipLost(scj ? { job: assumedJob(scj, create.slotMs), ackMonoMs: this.d.mono.nowMs() } : undefined);
      if (count && scj) this.missed(scj, { reason: 'late', count: 1, slotMs: create.slotMs });
    }
  }

  /** Periodic safety net: re-derive everything from the caches (cheap: no-op writes are skipped). */
  resync(): void {
    for (const scj of this.d.scjs.list()) this.queue.add(objectKey(scj));
  }

  /** Stops reconciling and waits for running reconciles. */
  async shutDown(): Promise<void> {
    await this.queue.shutDown();
  }

  // ---- firing -------------------------------------------------------------------------------

  /**
   * Called by the scheduler on every replica; followers only keep their timers advancing. A leader
   * that is no longer fresh (frozen past its renew deadline) does nothing: the slots it slept through
   * are another leader's, or its own once it leads again. The fire decides nothing: the key's
   * reconcile does, from the slots themselves (the fire's own count of skipped slots is not needed).
   */
  private onFire(fire: Fire): void {
    if (!(this.d.leadership.fenceRemainingMs() > 0)) return;
    this.d.metrics.timerLateness.observe(fire.latenessMs / 1000);
    this.queue.addFirst(fire.key);
  }

  // ---- reconcile ----------------------------------------------------------------------------

  private async reconcile(key: string): Promise<ReconcileResult | void> {
    const scj = this.d.scjs.get(key);
    if (!scj) {
      this.forget(key);
      return;
    }
    const rec = this.record(key, scj);
    const leader = this.d.leadership.isLeader();
    if (scj.metadata.deletionTimestamp) {
      this.scheduler.delete(key);
      this.d.creator.cancel(key);
      if (leader && hasFinalizer(scj) && !rec.finalized) await this.finalize(key, scj, rec);
      return;
    }
    this.keepTimer(key, scj, rec);
    if (!leader) return;
    // Each step runs even if an earlier one failed (a dry run that timed out must not hold back
    // history or status); the first failure is rethrown at the end, so the key is retried with backoff.
    const failures: unknown[] = [];
    const step = async (fn: () => Promise<unknown>): Promise<void> => {
      await fn().catch((err: unknown) => {
        if (!(err instanceof NotLeaderError)) failures.push(err); // a new leader reconciles everything again
      });
    };
    let prune: readonly Job[] = [];
    await step(async () => (prune = await this.decide(key, scj, rec)));
    // The rest yields to Job creates waiting for a token, without holding a worker.
    const yieldMs = this.d.priority.yieldMs();
    if (yieldMs > 0 && failures.length === 0) return { requeueAfterMs: yieldMs };
    if (!hasFinalizer(scj)) await step(() => addFinalizer(this.writes, scj));
    if (rec.compiled.ok) await step(() => this.judgeTemplate(scj, rec));
    if (prune.length > 0) await step(() => this.deleteJobs(scj, rec, prune, 'history limit'));
    const result = await this.updateStatus(key, scj, rec);
    if (failures.length > 0) throw failures[0];
    return result;
  }

  private record(key: string, scj: SecondCronJob): ScheduleRecord {
    let rec = this.records.get(key);
    if (rec && rec.uid === scj.metadata.uid && rec.generation === scj.metadata.generation) return rec;
    const compiled = compileSecondCronJob(scj, this.d.wall.nowMs());
    this.scheduleCounts = undefined;
    if (!compiled.ok) {
      this.d.log.warn('invalid schedule', { key, reason: compiled.reason, message: compiled.message });
      if (this.d.leadership.isLeader()) this.d.events.record(scj, 'Warning', compiled.reason, compiled.message);
    }
    const scheduleSpec = scheduleSpecOf(scj);
    const suspended = scj.spec.suspend === true;
    if (rec && rec.uid === scj.metadata.uid) {
      // A new generation. An edit of what the slots are computed from, or a resume, starts the
      // schedule anew from the moment it is seen: no slot of the old schedule fires after it (I7), and
      // the slots that fell while suspended are neither run nor counted (I6).
      if (rec.scheduleSpec !== scheduleSpec || (rec.suspended && !suspended)) {
        const dropped = rec.ledger.scheduleChanged(this.d.wall.nowMs());
        if (dropped !== undefined) {
          this.d.creator.cancel(key);
          this.missed(scj, { reason: 'late', count: 1, slotMs: dropped });
        }
        this.scheduler.delete(key);
      }
      rec.generation = scj.metadata.generation;
      rec.compiled = compiled;
      rec.scheduleSpec = scheduleSpec;
      rec.suspended = suspended;
    } else {
      if (rec) this.forget(key); // same name, new object
      rec = newRecord(scj, compiled);
      // Resumed while no leader was looking: the last status was written while it was suspended.
      const ready = scj.status?.conditions?.find((c) => c.type === 'Ready');
      if (!suspended && ready?.reason === 'Suspended') rec.ledger.scheduleChanged(this.d.wall.nowMs());
      this.records.set(key, rec);
    }
    return rec;
  }

  /** Keeps the scheduler's entry in line with the spec, on every replica (followers stay warm). */
  private keepTimer(key: string, scj: SecondCronJob, rec: ScheduleRecord): void {
    if (!rec.compiled.ok || scj.spec.suspend) this.scheduler.delete(key);
    else if (!this.scheduler.has(key)) this.scheduler.set(key, rec.compiled.source);
  }

  /**
   * Plans the schedule's slots and carries the plan out: counts what is missed, supersedes or queues
   * the create, and for Replace deletes the running Jobs first and plans again once the deletes were
   * accepted (a failed delete throws: no create, the key is retried with backoff until the slot's
   * deadline). Returns the Jobs the history limits want gone.
   */
  private async decide(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<readonly Job[]> {
    for (;;) {
      // Checked again after every await: a deposed leader, a new spec or a new object stop the plan.
      if (!(this.d.leadership.fenceRemainingMs() > 0) || this.records.get(key) !== rec || this.d.scjs.get(key) !== scj) return [];
      const p = plan({
        scj,
        source: rec.compiled.ok ? rec.compiled.source : undefined,
        templateInvalid: rec.template.kind === 'invalid' && rec.templateGeneration === scj.metadata.generation,
        jobs: this.ownedJobs(key, scj, rec),
        ledger: rec.ledger,
        nowMs: this.d.wall.nowMs(),
      });
      if (p.supersede) this.d.creator.cancel(key);
      rec.ledger.decide(p);
      for (const m of p.missed) this.missed(scj, m);
      const late = p.missed.reduce((n, m) => n + (m.reason === 'late' ? m.count : 0), 0);
      if (p.create && late > 0) this.d.log.info('catching up missed slot', { key, slot: rfc3339(p.create.slotMs), older: late });
      if (!p.create) return p.prune;
      if (p.replace.length > 0) {
        await this.deleteJobs(scj, rec, p.replace, 'concurrencyPolicy Replace');
        continue;
      }
      this.d.creator.submit(key, buildJob(scj, p.create.slotMs), p.create.slotMs, p.create.deadlineMs);
      return p.prune;
    }
  }

  /** Deletes every Job (accepted deletes are remembered); throws the first failure after all were tried. */
  private async deleteJobs(scj: SecondCronJob, rec: ScheduleRecord, jobs: readonly Job[], why: string): Promise<void> {
    const key = objectKey(scj);
    const results = await Promise.allSettled(
      jobs
        .filter((job) => !rec.ledger.deleting.has(job.metadata.name))
        .map(async (job) => {
          await deleteJob(this.writes, job);
          // The watch often shows the Job gone before the answer comes (or it was gone already: a 404
          // counts as done). Remembered then, its name would never leave the set: `make soak` saw it
          // grow by ~10 names a second at 100 Jobs/s.
          const name = job.metadata.name;
          if (this.jobs.has(key, name) || rec.ledger.expected.has(name)) rec.ledger.deleteAccepted(job);
          this.d.events.record(scj, 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name} (${why})`);
        }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** What a create's steps mean for its schedule's slots; the key is reconciled again after each. */
  private readonly createAnswers: CreateListener = {
    sent: (key, slotMs) => {
      const ledger = this.records.get(key)?.ledger;
      if (ledger?.create?.slotMs === slotMs) ledger.createSent();
    },
    retrying: (key, slotMs, nothingStored, error) => {
      const ledger = this.records.get(key)?.ledger;
      if (ledger?.create?.slotMs !== slotMs) return;
      ledger.createRetrying(nothingStored);
      this.d.log.debug('job create will be retried', { key, slot: rfc3339(slotMs), nothingStored, err: error });
      if (nothingStored) this.queue.addFirst(key); // a newer due slot supersedes it now
    },
    ended: (key, slotMs, answer) => {
      const rec = this.records.get(key);
      const scj = this.d.scjs.get(key);
      if (!rec || rec.ledger.create?.slotMs !== slotMs) return;
      switch (answer.kind) {
        case 'created': {
          rec.ledger.createEnded('created', slotMs);
          this.d.metrics.triggerLatency.observe((answer.ackMs - slotMs) / 1000);
          // Seen by Forbid/Replace and status before the watch event arrives.
          const name = answer.job.metadata.name;
          if (!this.jobs.has(key, name)) rec.ledger.expect(name, { job: slimJob(answer.job), ackMonoMs: this.d.mono.nowMs() });
          if (scj) this.d.events.record(scj, 'Normal', 'SuccessfulCreate', `Created job ${name}`);
          this.d.log.debug('job created', { key, job: name, latencyMs: answer.ackMs - slotMs });
          break;
        }
        case 'already_exists':
          rec.ledger.createEnded('already_exists', slotMs);
          // The Job exists (a retry after an unknown outcome, or another leader's): Forbid and Replace
          // must see it before the watch shows it.
          if (scj && !this.jobs.has(key, jobName(scj.metadata.name, slotMs))) {
            rec.ledger.expect(jobName(scj.metadata.name, slotMs), { job: assumedJob(scj, slotMs), ackMonoMs: this.d.mono.nowMs() });
          }
          break;
        case 'failed':
          rec.ledger.createEnded('failed', slotMs);
          if (!scj) break;
          if (answer.maybeStored) void this.settleUnknownOutcome(key, scj, rec, slotMs, answer.reason, answer.error);
          else this.createFailed(scj, slotMs, answer.reason, answer.error);
          break;
        case 'not_leader':
          if (rec.ledger.createEnded('not_leader', slotMs) && scj) this.missed(scj, { reason: 'late', count: 1, slotMs });
      }
      // A Job created with nothing waiting behind it needs no decision: its watch event brings the
      // key back for status (one reconcile per Job fewer).
      const created = answer.kind === 'created' || answer.kind === 'already_exists';
      if (!created || this.slotDue(rec)) this.queue.addFirst(key);
    },
  };

  /** A slot after the decided ones has fallen due (its fire may have come while a create was on the wire). */
  private slotDue(rec: ScheduleRecord): boolean {
    if (!rec.compiled.ok) return false;
    const next = rec.compiled.source.next(rec.ledger.decidedThroughMs);
    return next !== null && next <= this.d.wall.nowMs();
  }

  private createFailed(scj: SecondCronJob, slotMs: number, reason: 'deadline' | 'error', error: Error | undefined): void {
    if (reason === 'error') {
      this.d.log.warn('job create failed', { key: objectKey(scj), slot: rfc3339(slotMs), err: error });
      this.d.events.record(scj, 'Warning', 'FailedCreate', `Error creating job for slot ${rfc3339(slotMs)}: ${error?.message ?? 'unknown error'}`);
    }
    this.missed(scj, { reason, count: 1, slotMs });
  }

  /**
   * A create given up after an answer that left its outcome unknown (a timeout, a 500): the Job may
   * exist. Like upstream's live GET for a missing Job, one read settles it: the slot is counted as
   * missed only when the Job is not there. Until then the Job counts as created (Forbid, Replace).
   */
  private async settleUnknownOutcome(key: string, scj: SecondCronJob, rec: ScheduleRecord, slotMs: number, reason: 'deadline' | 'error', error: Error | undefined): Promise<void> {
    const name = jobName(scj.metadata.name, slotMs);
    if (!this.jobs.has(key, name)) rec.ledger.expect(name, { job: assumedJob(scj, slotMs), ackMonoMs: this.d.mono.nowMs() });
    let exists: boolean;
    try {
      await this.d.rest.request({ verb: 'get', path: `${jobsPath(scj.metadata.namespace)}/${name}`, timeoutMs: 10_000, metadataOnly: true, purpose: 'job_create' });
      exists = true;
    } catch (err) {
      exists = false;
      if (!isNotFound(err)) this.d.log.warn('could not tell whether a Job exists; counting its slot as missed', { key, job: name, err });
    }
    if (exists) {
      this.d.log.info('job create timed out, yet the Job exists', { key, job: name });
    } else {
      rec.ledger.forgetExpected(name);
      this.createFailed(scj, slotMs, reason, error);
    }
    this.queue.addFirst(key);
  }

  private missed(scj: SecondCronJob, m: Missed): void {
    this.d.metrics.triggersMissed.inc({ reason: m.reason }, m.count);
    if (m.reason === 'late') {
      this.d.events.record(scj, 'Warning', 'MissedSchedule', `${m.count} slot(s) from ${rfc3339(m.slotMs)} were not started in time; only the latest due slot runs`);
    } else if (m.reason === 'deadline') {
      this.d.events.record(scj, 'Warning', 'MissedSchedule', `Missed slot ${rfc3339(m.slotMs)}: not started within its starting deadline`);
    } else if (m.reason === 'forbid') {
      this.d.events.record(scj, 'Normal', 'JobAlreadyActive', 'Not starting a Job: the previous one is still running or being created (concurrencyPolicy Forbid)');
    }
  }

  /** The Jobs this resource controls: the cache, plus the ones just created that it has not shown yet. */
  private ownedJobs(key: string, scj: SecondCronJob, rec: ScheduleRecord): Job[] {
    const owned = this.jobs.jobsOf(key).filter((j) => isOwnedBy(j, scj));
    for (const [name, e] of rec.ledger.expected) {
      if (!this.jobs.has(key, name) && isOwnedBy(e.job, scj)) owned.push(e.job);
    }
    return owned;
  }

  // ---- housekeeping -------------------------------------------------------------------------

  private async finalize(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<void> {
    const owned = await listOwnedJobs(this.d.rest, scj);
    await Promise.all(owned.map((j) => deleteJob(this.writes, j)));
    try {
      await removeFinalizer(this.writes, scj);
    } catch (err) {
      if (!isNotFound(err)) throw err; // gone already: someone else finished it
    }
    // The Job deletions above queue this key again before the cache shows the resource gone: it must
    // not be finalized twice (a JSON patch test against a finalizer list that is no longer there).
    rec.finalized = true;
    if (owned.length > 0) this.d.events.record(scj, 'Normal', 'SuccessfulDelete', `Deleted ${owned.length} job(s) before removing the SecondCronJob`);
    this.d.log.info('finalized', { key, jobsDeleted: owned.length });
  }

  /** Server-side dry run of the Job template once per generation: catches what the CRD schema cannot. */
  private async judgeTemplate(scj: SecondCronJob, rec: ScheduleRecord): Promise<void> {
    const generation = scj.metadata.generation;
    if (rec.templateGeneration === generation) return;
    // A previous leader already judged this generation: its Ready condition is the verdict. This keeps
    // a failover (or a restart with thousands of resources) from re-running every dry run.
    const ready = scj.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.observedGeneration !== undefined && ready.observedGeneration === generation) {
      rec.templateGeneration = generation;
      rec.template = ready.reason === 'InvalidJobTemplate' ? { kind: 'invalid', message: ready.message } : { kind: 'valid' };
      return;
    }
    // The manifest is built when its turn comes: thousands queued at start-up would otherwise all be in
    // memory. A timeout or 5xx is no verdict on the template: it throws, and the queue retries with backoff.
    const verdict = await dryRunJob(this.writes, scj, this.d.wall.nowMs());
    if (verdict.ok) {
      rec.template = { kind: 'valid' };
    } else {
      rec.template = { kind: 'invalid', message: verdict.message };
      this.d.events.record(scj, 'Warning', verdict.reason, verdict.message);
    }
    rec.templateGeneration = generation;
  }

  private async updateStatus(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<ReconcileResult | void> {
    const now = this.d.mono.nowMs();
    if (rec.statusDueMonoMs === undefined) {
      if (this.statusUnchanged(scj, rec, this.desiredStatus(key, scj, rec))) return;
      const coalesce = now - rec.lastStatusWriteMonoMs < STATUS_COALESCE_MS && this.firesOften(rec) ? STATUS_COALESCE_MS : 0;
      rec.statusDueMonoMs = Math.max(rec.lastStatusWriteMonoMs + STATUS_MIN_INTERVAL_MS, now + coalesce);
    }
    // A change waits for its moment, and nothing is compared until then: a 1 s schedule is reconciled
    // on every Job event, and comparing its status each time was 5 % of the operator's CPU at 100 Jobs/s.
    if (rec.statusDueMonoMs > now) return { requeueAfterMs: rec.statusDueMonoMs - now };
    rec.statusDueMonoMs = undefined;
    const want = this.desiredStatus(key, scj, rec);
    if (this.statusUnchanged(scj, rec, want)) return;
    try {
      await writeStatus(this.writes, scj, want);
    } catch (err) {
      if (isNotFound(err) || err instanceof NotLeaderError) return;
      throw err;
    } finally {
      rec.lastStatusWriteMonoMs = this.d.mono.nowMs();
    }
    rec.lastWrittenStatus = { status: want, from: scj.metadata.resourceVersion };
  }

  /**
   * Our own patch not in the cache yet: the cache still holds the version we computed it from. Once
   * the cache moved on, it is the truth, also when someone else (a previous leader, a human) wrote
   * status since: a leader elected again must repair it, not trust its memory.
   */
  private statusUnchanged(scj: SecondCronJob, rec: ScheduleRecord, want: SecondCronJobStatus): boolean {
    const written = rec.lastWrittenStatus;
    if (written !== undefined && written.from !== scj.metadata.resourceVersion) {
      // The cache moved on: it is the truth from now on, and the copy would only hold memory (a
      // status per schedule, 8 MiB of a 10,000-schedule heap when kept; heap snapshot, issue 24).
      rec.lastWrittenStatus = undefined;
      return statusEquals(scj.status, want);
    }
    return statusEquals(scj.status, want) || (written !== undefined && statusEquals(written.status, want));
  }

  /** The next two slots are at most FAST_SCHEDULE_MS apart. */
  private firesOften(rec: ScheduleRecord): boolean {
    if (!rec.compiled.ok) return false;
    const first = rec.compiled.source.next(this.d.wall.nowMs());
    const second = first === null ? null : rec.compiled.source.next(first);
    return first !== null && second !== null && second - first <= FAST_SCHEDULE_MS;
  }

  private desiredStatus(key: string, scj: SecondCronJob, rec: ScheduleRecord): SecondCronJobStatus {
    const ownedJobs = this.ownedJobs(key, scj, rec);
    // What a new leader reads back as "decided before this".
    const nextSlotMs = rec.compiled.ok && !scj.spec.suspend ? firstOpenSlotMs(rec.compiled.source, scj, ownedJobs, rec.ledger) : null;
    return desiredStatus({
      scj,
      ownedJobs,
      nextSlotMs,
      resolvedSchedule: rec.compiled.ok ? rec.compiled.resolvedSchedule : undefined,
      lastScheduledMs: rec.ledger.lastScheduledMs,
      ready: this.readyState(scj, rec),
      readyGeneration: this.readyGeneration(scj, rec),
      nowMs: this.d.wall.nowMs(),
    });
  }

  /** An invalid schedule is a complete verdict; a valid one needs the Job template judged too. */
  private readyGeneration(scj: SecondCronJob, rec: ScheduleRecord): number | undefined {
    const generation = scj.metadata.generation;
    if (!rec.compiled.ok || rec.templateGeneration === generation) return generation;
    return scj.status?.conditions?.find((c) => c.type === 'Ready')?.observedGeneration;
  }

  private readyState(scj: SecondCronJob, rec: ScheduleRecord): ReadyState {
    const compiled = rec.compiled;
    if (!compiled.ok) return { status: 'False', reason: compiled.reason, message: compiled.message };
    if (rec.template.kind === 'invalid' && rec.templateGeneration === scj.metadata.generation) {
      return { status: 'False', reason: 'InvalidJobTemplate', message: rec.template.message };
    }
    if (scj.spec.suspend) return { status: 'True', reason: 'Suspended', message: 'Suspended: no new Jobs are started' };
    return { status: 'True', reason: 'Scheduled', message: `Scheduled: ${compiled.describe}` };
  }

  /**
   * Entries in what this replica keeps per schedule and per Job, read-only (secondcron_controller_entries):
   * with a constant set of schedules each comes back to its level, so a steady climb is a leak.
   */
  mapSizes(): Record<string, number> {
    let expected = 0;
    let deleting = 0;
    let written = 0;
    for (const rec of this.records.values()) {
      expected += rec.ledger.expected.size;
      deleting += rec.ledger.deleting.size;
      if (rec.lastWrittenStatus) written++;
    }
    return {
      records: this.records.size,
      jobs: this.jobs.size,
      scheduler_entries: this.scheduler.size,
      creates_outstanding: this.d.creator.size,
      reconciles_waiting: this.queue.length,
      expected_jobs: expected,
      deleting_jobs: deleting,
      written_statuses: written,
    };
  }

  /**
   * For the secondcron_schedules gauge: counted again only after a SecondCronJob or a compiled schedule
   * changed. Counting 10,000 on every scrape was ~20 ms each (a key string per schedule), most of an
   * idle operator's scrape.
   */
  counts(): ScheduleCounts {
    if (this.scheduleCounts) return { ...this.scheduleCounts };
    const c = { active: 0, suspended: 0, invalid: 0 };
    for (const scj of this.d.scjs.list()) {
      const compiled = this.records.get(objectKey(scj))?.compiled;
      if (compiled && !compiled.ok) c.invalid++;
      else if (scj.spec.suspend) c.suspended++;
      else c.active++;
    }
    this.scheduleCounts = c;
    return { ...c };
  }
}

/** The Job a slot's create would have stored, as far as we can know it without reading it back (no uid). */
function assumedJob(scj: SecondCronJob, slotMs: number): Job {
  const { metadata, ...rest } = buildJob(scj, slotMs);
  return slimJob({ ...rest, metadata: { ...metadata, uid: '', resourceVersion: '', creationTimestamp: new Date(slotMs).toISOString() } });
}
