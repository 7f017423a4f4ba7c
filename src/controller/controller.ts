// The SecondCronJob controller. Every replica keeps its caches and scheduler warm; only the leader
// writes (Jobs, status, finalizers, Events). Slots fire from the scheduler's single timer straight
// into the JobCreator; everything else a resource needs (finalizer, template check, history, status)
// is one reconcile per key on a de-duplicating work queue, retried with per-key backoff.
import type { MonotonicClock, Timers, WallClock } from '../clock/clock.js';
import { isNotFound } from '../kube/api-error.js';
import type { ReflectorHandler } from '../kube/reflector.js';
import type { RestClient } from '../kube/rest.js';
import { objectKey } from '../kube/types.js';
import type { Logger } from '../log.js';
import type { Metrics, MissedReason } from '../metrics/metrics.js';
import { type Fire, Scheduler } from '../scheduler/index.js';
import type { Job, SecondCronJob, SecondCronJobStatus } from './api.js';
import { findMissedSlots } from './catch-up.js';
import type { EventSink } from './events.js';
import { addFinalizer, deleteJob, hasFinalizer, listOwnedJobs, removeFinalizer } from './finalizer.js';
import { jobsToPrune } from './history.js';
import { buildJob } from './job-builder.js';
import type { JobCreator } from './job-creator.js';
import { JobIndex } from './job-index.js';
import { isActive, isOwnedBy, jobOutcome, jobSlotMs } from './job-state.js';
import { createDeadlineMs, decideFire } from './policy.js';
import { type ScheduleRecord, newRecord } from './schedule-record.js';
import { slimJob } from './slim.js';
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
// The old StatusWriter (4) and housekeeping limit (8) together: bounded, so thousands of resources
// seen at once (a new leader, a restart) cannot flood the API server or starve Job creates.
const DEFAULT_WORKERS = 12;

export class Controller {
  readonly scheduler: Scheduler;
  private readonly jobs = new JobIndex();
  private readonly records = new Map<string, ScheduleRecord>();
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
  }

  // ---- cache events -------------------------------------------------------------------------

  readonly scjEvents: ReflectorHandler<SecondCronJob> = {
    added: (scj) => this.queue.add(objectKey(scj)),
    updated: (_old, scj) => this.queue.add(objectKey(scj)),
    deleted: (scj) => this.forget(objectKey(scj)),
  };

  readonly jobEvents: ReflectorHandler<Job> = {
    added: (job) => this.jobChanged(undefined, job),
    updated: (old, job) => this.jobChanged(old, job),
    deleted: (job) => {
      const key = this.jobs.remove(job);
      if (!key) return;
      this.records.get(key)?.deleting.delete(job.metadata.uid);
      this.queue.add(key);
    },
    relisted: (listStartedMonoMs) => {
      for (const [key, rec] of this.records) {
        let dropped = false;
        for (const [name, e] of rec.expected) {
          if (e.ackMonoMs >= listStartedMonoMs) continue;
          rec.expected.delete(name);
          dropped = true;
        }
        if (dropped) this.queue.add(key);
      }
    },
  };

  private jobChanged(old: Job | undefined, job: Job): void {
    const key = this.jobs.put(job);
    if (!key) return;
    const rec = this.records.get(key);
    rec?.expected.delete(job.metadata.name);
    if (old && jobOutcome(old) === jobOutcome(job)) return;
    if (rec && jobOutcome(job) !== undefined) rec.pruneDue = true;
    this.queue.add(key);
  }

  /** The one place a schedule's state is dropped. */
  private forget(key: string): void {
    this.scheduler.delete(key);
    this.records.delete(key);
    this.queue.forget(key);
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  /**
   * Leader-only work starts: every schedule runs the missed-slot rule and is reconciled. The rule
   * runs here, synchronously, for every schedule this replica already follows: a slot firing before
   * a queued catch-up ran would move "decided" past the gap, and the gap would never be counted.
   */
  startedLeading(): void {
    for (const scj of this.d.scjs.list()) {
      const key = objectKey(scj);
      const rec = this.records.get(key);
      if (rec && rec.generation === scj.metadata.generation && !scj.spec.suspend && !scj.metadata.deletionTimestamp) {
        rec.catchUpDue = false;
        this.catchUp(key, scj, rec);
      } else if (rec) {
        rec.catchUpDue = true;
      }
      this.queue.add(key);
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
      if (leader && hasFinalizer(scj)) await this.finalize(key, scj);
      return;
    }
    this.schedule(key, scj, rec, leader);
    if (!leader) return;
    // Each step runs even if an earlier one failed (a dry run that timed out must not hold back
    // history or status); the first failure is rethrown at the end, so the key is retried with backoff.
    const failures: unknown[] = [];
    const step = async (fn: () => Promise<unknown>): Promise<void> => {
      await fn().catch((err: unknown) => void failures.push(err));
    };
    if (!hasFinalizer(scj)) await step(() => this.housekeeping(() => addFinalizer(this.writes, scj)));
    if (rec.compiled.ok) await step(() => this.judgeTemplate(scj, rec));
    await step(() => this.deleteUnwanted(scj, rec));
    const result = await this.updateStatus(key, scj, rec);
    if (failures.length > 0) throw failures[0];
    return result;
  }

  private record(key: string, scj: SecondCronJob): ScheduleRecord {
    let rec = this.records.get(key);
    if (rec && rec.uid === scj.metadata.uid && rec.generation === scj.metadata.generation) return rec;
    const compiled = compileSecondCronJob(scj, this.d.wall.nowMs());
    if (!compiled.ok) {
      this.d.log.warn('invalid schedule', { key, reason: compiled.reason, message: compiled.message });
      if (this.d.leadership.isLeader()) this.d.events.record(scj, 'Warning', compiled.reason, compiled.message);
    }
    if (rec && rec.uid === scj.metadata.uid) {
      // A new generation: recompile and catch up, keep what was learned about slots and Jobs.
      rec.generation = scj.metadata.generation;
      rec.compiled = compiled;
      rec.catchUpDue = true;
      this.scheduler.delete(key);
    } else {
      if (rec) this.forget(key); // same name, new object
      rec = newRecord(scj, compiled);
      this.records.set(key, rec);
    }
    return rec;
  }

  /** Keeps the scheduler's entry in line with the spec; the leader runs the missed-slot rule. */
  private schedule(key: string, scj: SecondCronJob, rec: ScheduleRecord, leader: boolean): void {
    if (!rec.compiled.ok || scj.spec.suspend) {
      this.scheduler.delete(key);
      return;
    }
    if (!this.scheduler.has(key)) this.scheduler.set(key, rec.compiled.source);
    if (leader && rec.catchUpDue) {
      rec.catchUpDue = false;
      this.catchUp(key, scj, rec);
    }
  }

  /** Housekeeping writes wait for pending Job creates (WritePriority); undefined = fenced off. */
  private async housekeeping<T>(write: () => Promise<T>): Promise<T | undefined> {
    await this.d.priority.calm();
    try {
      return await write();
    } catch (err) {
      if (err instanceof NotLeaderError) return undefined; // a new leader reconciles everything again
      throw err;
    }
  }

  private async finalize(key: string, scj: SecondCronJob): Promise<void> {
    const jobs = await this.housekeeping(async () => {
      const owned = await listOwnedJobs(this.d.rest, scj);
      await Promise.all(owned.map((j) => deleteJob(this.writes, j)));
      await removeFinalizer(this.writes, scj);
      return owned;
    });
    if (jobs === undefined) return;
    if (jobs.length > 0) this.d.events.record(scj, 'Normal', 'SuccessfulDelete', `Deleted ${jobs.length} job(s) before removing the SecondCronJob`);
    this.d.log.info('finalized', { key, jobsDeleted: jobs.length });
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
    const verdict = await this.housekeeping(() => dryRunJob(this.writes, scj, this.d.wall.nowMs()));
    if (verdict === undefined) return;
    if (verdict.ok) {
      rec.template = { kind: 'valid' };
    } else {
      rec.template = { kind: 'invalid', message: verdict.message };
      this.d.events.record(scj, 'Warning', verdict.reason, verdict.message);
    }
    rec.templateGeneration = generation;
  }

  /** History limits and concurrencyPolicy Replace. */
  private async deleteUnwanted(scj: SecondCronJob, rec: ScheduleRecord): Promise<void> {
    const unwanted: { job: Job; why: string }[] = [...rec.replace.values()].map((job) => ({ job, why: 'concurrencyPolicy Replace' }));
    rec.replace.clear();
    if (rec.pruneDue) {
      rec.pruneDue = false;
      const owned = this.jobs.jobsOf(objectKey(scj)).filter((j) => isOwnedBy(j, scj) && !rec.deleting.has(j.metadata.uid));
      const prune = jobsToPrune(owned, scj.spec.successfulJobsHistoryLimit ?? 3, scj.spec.failedJobsHistoryLimit ?? 1);
      unwanted.push(...prune.map((job) => ({ job, why: 'history limit' })));
    }
    for (const { job, why } of unwanted) {
      if (rec.deleting.has(job.metadata.uid)) continue;
      rec.deleting.add(job.metadata.uid);
      try {
        await this.housekeeping(() => deleteJob(this.writes, job));
        this.d.events.record(scj, 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name} (${why})`);
      } catch (err) {
        rec.deleting.delete(job.metadata.uid);
        if (why !== 'history limit') rec.replace.set(job.metadata.uid, job);
        else rec.pruneDue = true;
        throw err;
      }
    }
  }

  private async updateStatus(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<ReconcileResult | void> {
    // Our own patch not in the cache yet: the cache still holds the version we computed it from. Once
    // the cache moved on, it is the truth, also when someone else (a previous leader, a human) wrote
    // status since: a leader elected again must repair it, not trust its memory.
    const written = rec.lastWrittenStatus;
    const unchanged = (want: SecondCronJobStatus): boolean =>
      statusEquals(scj.status, want) || (written !== undefined && written.from === scj.metadata.resourceVersion && statusEquals(written.status, want));
    const now = this.d.mono.nowMs();
    if (rec.statusDueMonoMs === undefined) {
      if (unchanged(this.desiredStatus(key, scj, rec))) return;
      const coalesce = now - rec.lastStatusWriteMonoMs < STATUS_COALESCE_MS && this.firesOften(rec) ? STATUS_COALESCE_MS : 0;
      rec.statusDueMonoMs = Math.max(rec.lastStatusWriteMonoMs + STATUS_MIN_INTERVAL_MS, now + coalesce);
    }
    // A change waits for its moment, and nothing is compared until then: a 1 s schedule is reconciled
    // on every Job event, and comparing its status each time was 5 % of the operator's CPU at 100 Jobs/s.
    if (rec.statusDueMonoMs > now) return { requeueAfterMs: rec.statusDueMonoMs - now };
    rec.statusDueMonoMs = undefined;
    await this.d.priority.calm();
    // What is true once the create burst has been acknowledged.
    const want = this.desiredStatus(key, scj, rec);
    if (unchanged(want)) return;
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

  /** The next two slots are at most FAST_SCHEDULE_MS apart. */
  private firesOften(rec: ScheduleRecord): boolean {
    if (!rec.compiled.ok) return false;
    const first = rec.compiled.source.next(this.d.wall.nowMs());
    const second = first === null ? null : rec.compiled.source.next(first);
    return first !== null && second !== null && second - first <= FAST_SCHEDULE_MS;
  }

  // ---- firing -------------------------------------------------------------------------------

  /**
   * Called by the scheduler on every replica; followers only keep their timers advancing. A leader
   * that is no longer fresh (frozen past its renew deadline) counts and creates nothing: the slots
   * it slept through are another leader's, or its own catch-up's once it leads again.
   */
  private onFire(fire: Fire): void {
    if (!(this.d.leadership.fenceRemainingMs() > 0)) return;
    this.d.metrics.timerLateness.observe(fire.latenessMs / 1000);
    const rec = this.records.get(fire.key);
    if (fire.skipped > 0) {
      this.d.metrics.triggersMissed.inc({ reason: 'late' }, fire.skipped);
      if (rec) this.decided(rec, fire.slotMs - 1);
    }
    void this.trigger(fire.key, fire.slotMs);
  }

  /**
   * Runs the latest slot that fell due while nobody was scheduling (failover, restart, new spec) and
   * counts the older ones as missed. Slots are known to be handled up to the newest of: a Job, the
   * status a leader wrote (nextScheduleTime is the first slot it had not decided), and what this
   * replica decided itself; slots still queued for a create are counted when they are decided.
   */
  private catchUp(key: string, scj: SecondCronJob, rec: ScheduleRecord): void {
    if (!rec.compiled.ok) return;
    const owned = this.ownedJobs(key, scj, rec);
    const lastKnown = Math.max(
      Date.parse(scj.metadata.creationTimestamp),
      Date.parse(scj.status?.lastScheduleTime ?? '') || 0,
      (Date.parse(scj.status?.nextScheduleTime ?? '') || 0) - 1,
      rec.lastScheduledMs ?? 0,
      rec.decidedThroughMs,
      ...owned.map(jobSlotMs).filter((ms) => !Number.isNaN(ms)),
    );
    const missed = findMissedSlots(rec.compiled.source, lastKnown, this.d.wall.nowMs());
    if (!missed) return;
    const queued = [...rec.pending].filter((s) => s > lastKnown && s < missed.latestMs).length;
    const older = missed.olderCount - queued;
    if (older > 0) {
      this.d.metrics.triggersMissed.inc({ reason: 'late' }, older);
      this.d.events.record(scj, 'Warning', 'MissedSchedule', `${older} slot(s) fell due while no leader was scheduling; only the latest may run`);
    }
    this.decided(rec, missed.latestMs - 1);
    if (rec.pending.has(missed.latestMs)) return; // already on its way
    this.d.log.info('catching up missed slot', { key, slot: rfc3339(missed.latestMs), older });
    void this.trigger(key, missed.latestMs);
  }

  private decided(rec: ScheduleRecord, slotMs: number): void {
    rec.decidedThroughMs = Math.max(rec.decidedThroughMs, slotMs);
  }

  private async trigger(key: string, slotMs: number): Promise<void> {
    const scj = this.d.scjs.get(key);
    const rec = this.records.get(key);
    if (!scj || !rec || scj.spec.suspend || scj.metadata.deletionTimestamp) return;
    if (rec.template.kind === 'invalid' && rec.templateGeneration === scj.metadata.generation) {
      this.d.metrics.triggersMissed.inc({ reason: 'error' }); // Ready=False InvalidJobTemplate says why
      return;
    }
    const active = this.ownedJobs(key, scj, rec).filter(isActive);
    const decision = decideFire(scj.spec, active, slotMs, this.d.wall.nowMs());
    if (decision.kind === 'skip') {
      this.missed(scj, decision.reason, slotMs);
      return;
    }
    if (decision.replace.length > 0) {
      for (const job of decision.replace) rec.replace.set(job.metadata.uid, job);
      this.queue.add(key);
    }
    const job = buildJob(scj, slotMs);
    // A slot already due is never dropped for being queued behind others: it runs late, until its
    // deadline, unless a newer slot of the same schedule is queued first.
    rec.pending.add(slotMs);
    const outcome = await this.d.creator.create(job, createDeadlineMs(scj.spec, slotMs));
    rec.pending.delete(slotMs);
    if (outcome.result !== 'not_leader') this.decided(rec, slotMs);
    switch (outcome.result) {
      case 'created':
        this.d.metrics.triggerLatency.observe((outcome.ackMs - slotMs) / 1000);
        this.noteScheduled(key, rec, slotMs);
        // Seen by Forbid/Replace before the watch event arrives.
        if (!this.jobs.has(key, outcome.job.metadata.name)) {
          rec.expected.set(outcome.job.metadata.name, { job: slimJob(outcome.job), ackMonoMs: this.d.mono.nowMs() });
        }
        this.d.events.record(scj, 'Normal', 'SuccessfulCreate', `Created job ${outcome.job.metadata.name}`);
        this.d.log.debug('job created', { key, job: outcome.job.metadata.name, latencyMs: outcome.ackMs - slotMs });
        break;
      case 'already_exists':
        this.noteScheduled(key, rec, slotMs);
        break;
      case 'error':
        this.d.log.warn('job create failed', { key, slot: rfc3339(slotMs), err: outcome.error });
        this.d.events.record(scj, 'Warning', 'FailedCreate', `Error creating job for slot ${rfc3339(slotMs)}: ${outcome.error.message}`);
        this.missed(scj, 'error', slotMs);
        break;
      case 'superseded': // a newer slot of this schedule runs instead: only the latest missed slot may run
        this.missed(scj, 'late', slotMs);
        break;
      case 'not_leader':
        // Not decided here: the next leader's catch-up (maybe ours) counts it if it got no Job.
        break;
      case 'deadline':
        this.missed(scj, 'deadline', slotMs);
    }
  }

  private missed(scj: SecondCronJob, reason: MissedReason, slotMs: number): void {
    this.d.metrics.triggersMissed.inc({ reason });
    this.queue.add(objectKey(scj)); // nextScheduleTime moved on
    if (reason === 'deadline') {
      this.d.events.record(scj, 'Warning', 'MissedSchedule', `Missed slot ${rfc3339(slotMs)}: not started within startingDeadlineSeconds`);
    } else if (reason === 'forbid') {
      this.d.events.record(scj, 'Normal', 'JobAlreadyActive', 'Not starting a Job: the previous one is still running (concurrencyPolicy Forbid)');
    }
  }

  private noteScheduled(key: string, rec: ScheduleRecord, slotMs: number): void {
    rec.lastScheduledMs = Math.max(slotMs, rec.lastScheduledMs ?? 0);
    this.queue.add(key);
  }

  /** The Jobs this resource controls: the cache, plus the ones just created that it has not shown yet. */
  private ownedJobs(key: string, scj: SecondCronJob, rec: ScheduleRecord): Job[] {
    const cached = this.jobs.jobsOf(key);
    const names = new Set(cached.map((j) => j.metadata.name));
    const expected = [...rec.expected.values()].map((e) => e.job).filter((j) => !names.has(j.metadata.name));
    return [...cached, ...expected].filter((j) => isOwnedBy(j, scj));
  }

  // ---- status -------------------------------------------------------------------------------

  private desiredStatus(key: string, scj: SecondCronJob, rec: ScheduleRecord): SecondCronJobStatus {
    return desiredStatus({
      scj,
      ownedJobs: this.ownedJobs(key, scj, rec),
      nextSlotMs: this.scheduler.nextSlot(key),
      resolvedSchedule: rec.compiled.ok ? rec.compiled.resolvedSchedule : undefined,
      lastScheduledMs: rec.lastScheduledMs,
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

  /** For the secondcron_schedules gauge. */
  counts(): { active: number; suspended: number; invalid: number } {
    const c = { active: 0, suspended: 0, invalid: 0 };
    for (const scj of this.d.scjs.list()) {
      const compiled = this.records.get(objectKey(scj))?.compiled;
      if (compiled && !compiled.ok) c.invalid++;
      else if (scj.spec.suspend) c.suspended++;
      else c.active++;
    }
    return c;
  }
}
