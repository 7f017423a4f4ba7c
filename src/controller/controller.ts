// The SecondCronJob controller. Every replica keeps its caches and scheduler warm; only the leader
// writes (Jobs, status, finalizers, Events). Slots fire from the scheduler's single timer; catch-up
// after a failover or restart follows the missed-slot rule.
import pLimit from 'p-limit';

import type { MonotonicClock, Timers, WallClock } from '../clock/clock.js';
import type { Logger } from '../log.js';
import type { KubeRest } from '../kube/rest.js';
import { objectKey } from '../kube/types.js';
import type { Metrics, MissedReason } from '../metrics/metrics.js';
import type { CompileResult } from '../schedule/index.js';
import type { Fire, Scheduler } from '../scheduler/index.js';
import type { Job, SecondCronJob, SecondCronJobStatus } from './api.js';
import { findMissedSlots } from './catch-up.js';
import type { EventSink } from './events.js';
import { addFinalizer, deleteJob, hasFinalizer, listOwnedJobs, removeFinalizer } from './finalizer.js';
import { jobsToPrune } from './history.js';
import { buildJob } from './job-builder.js';
import type { JobCreator } from './job-creator.js';
import { JobIndex } from './job-index.js';
import { isActive, isOwnedBy, jobOutcome, jobSlotMs } from './job-state.js';
import { slimJob } from './slim.js';
import { createDeadlineMs, decideFire } from './policy.js';
import { type ReadyState, desiredStatus, rfc3339 } from './status.js';
import { compileSecondCronJob, dryRunJob } from './verdict.js';
import type { StatusWriter } from './status-writer.js';
import type { WritePriority } from './write-priority.js';

export interface Leadership {
  isLeader(): boolean;
  /** Fencing: leader AND last renew younger than the renew deadline. */
  isLeaderFresh(): boolean;
}

/** The read side of the caches; the composition root wires reflectors into it. */
export interface Cache<T> {
  get(key: string): T | undefined;
  list(): Iterable<T>;
}

export interface ControllerDeps {
  rest: KubeRest;
  scheduler: Scheduler;
  creator: JobCreator;
  events: EventSink;
  metrics: Metrics;
  leadership: Leadership;
  priority: WritePriority;
  wall: WallClock;
  mono: MonotonicClock;
  timers: Timers;
  log: Logger;
}

interface Compiled {
  uid: string;
  generation: number | undefined;
  result: CompileResult;
}

export class Controller {
  private scjs: Cache<SecondCronJob> = { get: () => undefined, list: () => [] };
  private statusWriter: StatusWriter | undefined;
  readonly jobs = new JobIndex();
  private readonly compiled = new Map<string, Compiled>();
  private readonly badTemplate = new Map<string, { generation: number | undefined; message: string }>();
  private readonly templateChecked = new Map<string, number | undefined>();
  private readonly templateJudged = new Map<string, number | undefined>(); // generation with a dry-run verdict
  private readonly lastScheduled = new Map<string, number>();
  private readonly busy = new Set<string>(); // finalizing or adding a finalizer
  private readonly deleting = new Set<string>(); // job uids being deleted
  // Finalizers, dry runs and deletions: bounded, so thousands of resources seen at once (a new
  // leader, a restart) cannot flood the API server or starve Job creation of connections.
  private readonly housekeeping = pLimit(8);

  /** Housekeeping writes: bounded, and after any pending Job creates (WritePriority). */
  private background<T>(fn: () => Promise<T>): Promise<T> {
    return this.housekeeping(async () => {
      await this.d.priority.calm();
      return fn();
    });
  }

  constructor(private readonly d: ControllerDeps) {}

  attach(scjs: Cache<SecondCronJob>, statusWriter: StatusWriter): void {
    this.scjs = scjs;
    this.statusWriter = statusWriter;
  }

  // ---- cache events -------------------------------------------------------------------------

  scjChanged(scj: SecondCronJob): void {
    this.reconcile(objectKey(scj));
  }

  scjDeleted(scj: SecondCronJob): void {
    const key = objectKey(scj);
    this.d.scheduler.delete(key);
    this.compiled.delete(key);
    this.badTemplate.delete(key);
    this.templateChecked.delete(key);
    this.templateJudged.delete(key);
    this.lastScheduled.delete(key);
    this.statusWriter?.forget(key);
  }

  jobChanged(old: Job | undefined, job: Job): void {
    const key = this.jobs.put(job);
    if (!key || !this.d.leadership.isLeader()) return;
    if (old && jobOutcome(old) === jobOutcome(job)) return;
    if (jobOutcome(job) !== undefined) this.pruneHistory(key);
    this.statusWriter?.markDirty(key);
  }

  jobDeleted(job: Job): void {
    const key = this.jobs.remove(job);
    this.deleting.delete(job.metadata.uid);
    if (key && this.d.leadership.isLeader()) this.statusWriter?.markDirty(key);
  }

  // ---- leadership ---------------------------------------------------------------------------

  startedLeading(): void {
    for (const scj of this.scjs.list()) {
      const key = objectKey(scj);
      this.reconcile(key);
      this.catchUp(key);
    }
  }

  /** Periodic safety net: re-derive everything from the caches (cheap: no-op writes are skipped). */
  resync(): void {
    for (const scj of this.scjs.list()) this.reconcile(objectKey(scj));
  }

  // ---- reconcile ----------------------------------------------------------------------------

  reconcile(key: string): void {
    const scj = this.scjs.get(key);
    if (!scj) return;
    const leader = this.d.leadership.isLeader();
    if (scj.metadata.deletionTimestamp) {
      this.d.scheduler.delete(key);
      if (leader && hasFinalizer(scj)) void this.finalize(key, scj);
      return;
    }
    if (leader && !hasFinalizer(scj)) void this.ensureFinalizer(key, scj);

    const compiled = this.compile(key, scj);
    if (!compiled.ok) {
      this.d.scheduler.delete(key);
      if (leader) this.statusWriter?.markDirty(key);
      return;
    }
    if (scj.spec.suspend) {
      this.d.scheduler.delete(key);
    } else if (!this.d.scheduler.has(key) || compiled.fresh) {
      this.d.scheduler.set(key, compiled.source);
      if (leader && compiled.fresh) this.catchUp(key);
    }
    if (leader) {
      this.checkTemplate(key, scj);
      this.statusWriter?.markDirty(key);
    }
  }

  private compile(key: string, scj: SecondCronJob): (CompileResult & { fresh: boolean }) {
    const cached = this.compiled.get(key);
    if (cached && cached.uid === scj.metadata.uid && cached.generation === scj.metadata.generation) {
      return { ...cached.result, fresh: false };
    }
    const result = compileSecondCronJob(scj, this.d.wall.nowMs());
    this.compiled.set(key, { uid: scj.metadata.uid, generation: scj.metadata.generation, result });
    if (!result.ok) {
      this.d.log.warn('invalid schedule', { key, reason: result.reason, message: result.message });
      if (this.d.leadership.isLeader()) this.d.events.record(scj, 'Warning', result.reason, result.message);
    }
    return { ...result, fresh: true };
  }

  // ---- firing -------------------------------------------------------------------------------

  /** Called by the scheduler on every replica; followers only keep their timers advancing. */
  onFire(fire: Fire): void {
    if (!this.d.leadership.isLeader()) return;
    this.d.metrics.timerLateness.observe(fire.latenessMs / 1000);
    if (fire.skipped > 0) this.d.metrics.triggersMissed.inc({ reason: 'late' }, fire.skipped);
    void this.trigger(fire.key, fire.slotMs);
  }

  /** Runs the latest slot that fell due while nobody was scheduling (failover, restart, new spec). */
  private catchUp(key: string): void {
    const scj = this.scjs.get(key);
    const compiled = this.compiled.get(key);
    if (!scj || !compiled?.result.ok || scj.spec.suspend || scj.metadata.deletionTimestamp) return;
    const owned = this.jobs.jobsOf(key).filter((j) => isOwnedBy(j, scj));
    const lastKnown = Math.max(
      Date.parse(scj.metadata.creationTimestamp),
      Date.parse(scj.status?.lastScheduleTime ?? '') || 0,
      this.lastScheduled.get(key) ?? 0,
      ...owned.map(jobSlotMs).filter((ms) => !Number.isNaN(ms)),
    );
    const missed = findMissedSlots(compiled.result.source, lastKnown, this.d.wall.nowMs());
    if (!missed) return;
    if (missed.olderCount > 0) {
      this.d.metrics.triggersMissed.inc({ reason: 'late' }, missed.olderCount);
      this.d.events.record(scj, 'Warning', 'MissedSchedule', `${missed.olderCount} slot(s) fell due while no leader was scheduling; only the latest may run`);
    }
    this.d.log.info('catching up missed slot', { key, slot: rfc3339(missed.latestMs), older: missed.olderCount });
    void this.trigger(key, missed.latestMs);
  }

  private async trigger(key: string, slotMs: number): Promise<void> {
    const scj = this.scjs.get(key);
    if (!scj || scj.spec.suspend || scj.metadata.deletionTimestamp) return;
    const bad = this.badTemplate.get(key);
    if (bad && bad.generation === scj.metadata.generation) {
      this.d.metrics.triggersMissed.inc({ reason: 'error' }); // Ready=False InvalidJobTemplate says why
      return;
    }
    const active = this.jobs.jobsOf(key).filter((j) => isOwnedBy(j, scj) && isActive(j));
    const decision = decideFire(scj.spec, active, slotMs, this.d.wall.nowMs());
    if (decision.kind === 'skip') {
      this.missed(scj, decision.reason, slotMs);
      return;
    }
    for (const job of decision.replace) void this.removeJob(scj, job, 'concurrencyPolicy Replace');
    const job = buildJob(scj, slotMs);
    // A slot already due is never dropped for being queued behind others: it runs late, until its deadline.
    const outcome = await this.d.creator.create(job, createDeadlineMs(scj.spec, slotMs));
    switch (outcome.result) {
      case 'created':
        this.d.metrics.triggerLatency.observe((outcome.ackMs - slotMs) / 1000);
        this.noteScheduled(key, slotMs);
        // Seen by Forbid/Replace before the watch event arrives.
        if (!this.jobs.jobsOf(key).some((j) => j.metadata.name === outcome.job.metadata.name)) this.jobs.put(slimJob(outcome.job));
        this.d.events.record(scj, 'Normal', 'SuccessfulCreate', `Created job ${outcome.job.metadata.name}`);
        this.d.log.debug('job created', { key, job: outcome.job.metadata.name, latencyMs: outcome.ackMs - slotMs });
        break;
      case 'already_exists':
        this.noteScheduled(key, slotMs);
        break;
      case 'error':
        this.d.log.warn('job create failed', { key, slot: rfc3339(slotMs), err: outcome.error });
        this.d.events.record(scj, 'Warning', 'FailedCreate', `Error creating job for slot ${rfc3339(slotMs)}: ${outcome.error.message}`);
        this.missed(scj, 'error', slotMs);
        break;
      default:
        this.missed(scj, outcome.result, slotMs);
    }
  }

  private missed(scj: SecondCronJob, reason: MissedReason, slotMs: number): void {
    this.d.metrics.triggersMissed.inc({ reason });
    this.statusWriter?.markDirty(objectKey(scj)); // nextScheduleTime moved on
    if (reason === 'deadline') {
      this.d.events.record(scj, 'Warning', 'MissedSchedule', `Missed slot ${rfc3339(slotMs)}: not started within startingDeadlineSeconds`);
    } else if (reason === 'forbid') {
      this.d.events.record(scj, 'Normal', 'JobAlreadyActive', 'Not starting a Job: the previous one is still running (concurrencyPolicy Forbid)');
    }
  }

  private noteScheduled(key: string, slotMs: number): void {
    this.lastScheduled.set(key, Math.max(slotMs, this.lastScheduled.get(key) ?? 0));
    this.statusWriter?.markDirty(key);
  }

  // ---- jobs ---------------------------------------------------------------------------------

  private pruneHistory(key: string): void {
    const scj = this.scjs.get(key);
    if (!scj) return;
    const owned = this.jobs.jobsOf(key).filter((j) => isOwnedBy(j, scj) && !this.deleting.has(j.metadata.uid));
    const prune = jobsToPrune(owned, scj.spec.successfulJobsHistoryLimit ?? 3, scj.spec.failedJobsHistoryLimit ?? 1);
    for (const job of prune) void this.removeJob(scj, job, 'history limit');
  }

  private async removeJob(scj: SecondCronJob, job: Job, why: string): Promise<void> {
    if (this.deleting.has(job.metadata.uid)) return;
    this.deleting.add(job.metadata.uid);
    try {
      await this.background(() => deleteJob(this.d.rest, job));
      this.d.events.record(scj, 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name} (${why})`);
    } catch (err) {
      this.deleting.delete(job.metadata.uid);
      this.d.log.warn('job delete failed', { job: job.metadata.name, err });
    }
  }

  /** Server-side dry run of the Job template once per generation: catches what the CRD schema cannot. */
  private checkTemplate(key: string, scj: SecondCronJob): void {
    if (this.templateChecked.has(key) && this.templateChecked.get(key) === scj.metadata.generation) return;
    this.templateChecked.set(key, scj.metadata.generation);
    // A previous leader already judged this generation: its Ready condition is the verdict. This keeps
    // a failover (or a restart with thousands of resources) from re-running every dry run.
    const ready = scj.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.observedGeneration !== undefined && ready.observedGeneration === scj.metadata.generation) {
      this.templateJudged.set(key, scj.metadata.generation);
      if (ready.reason === 'InvalidJobTemplate') this.badTemplate.set(key, { generation: scj.metadata.generation, message: ready.message });
      return;
    }
    // The manifest is built when its turn comes: thousands queued at start-up would otherwise all be in memory.
    this.background(() => dryRunJob(this.d.rest, scj, this.d.wall.nowMs()))
      .then((verdict) => {
        this.templateJudged.set(key, scj.metadata.generation);
        if (verdict.ok) {
          this.badTemplate.delete(key);
        } else {
          this.badTemplate.set(key, { generation: scj.metadata.generation, message: verdict.message });
          this.d.events.record(scj, 'Warning', verdict.reason, verdict.message);
        }
        this.statusWriter?.markDirty(key);
      })
      .catch(() => {
        this.templateChecked.delete(key); // not a verdict on the template (timeout, 5xx): ask again soon
        this.d.timers.set(5_000, () => this.reconcile(key));
      });
  }

  private async ensureFinalizer(key: string, scj: SecondCronJob): Promise<void> {
    if (this.busy.has(key)) return;
    this.busy.add(key);
    try {
      await this.background(() => addFinalizer(this.d.rest, scj));
    } catch (err) {
      // Usually a 422 from the patch's test: the cached finalizer list was stale. The watch event that
      // refreshes it may already have come while this attempt was busy, so retry shortly.
      this.d.log.debug('finalizer not added yet; retrying', { key, err });
      this.d.timers.set(1000, () => this.reconcile(key));
    } finally {
      this.busy.delete(key);
    }
  }

  private async finalize(key: string, scj: SecondCronJob): Promise<void> {
    if (this.busy.has(key)) return;
    this.busy.add(key);
    try {
      const jobs = await this.background(async () => {
        const owned = await listOwnedJobs(this.d.rest, scj);
        await Promise.all(owned.map((j) => deleteJob(this.d.rest, j)));
        await removeFinalizer(this.d.rest, scj);
        return owned;
      });
      if (jobs.length > 0) this.d.events.record(scj, 'Normal', 'SuccessfulDelete', `Deleted ${jobs.length} job(s) before removing the SecondCronJob`);
      this.d.log.info('finalized', { key, jobsDeleted: jobs.length });
    } catch (err) {
      this.d.log.warn('finalize failed; will retry', { key, err });
      this.d.timers.set(1000, () => this.reconcile(key));
    } finally {
      this.busy.delete(key);
    }
  }

  // ---- status -------------------------------------------------------------------------------

  desired(key: string): { scj: SecondCronJob; status: SecondCronJobStatus } | undefined {
    if (!this.d.leadership.isLeader()) return undefined;
    const scj = this.scjs.get(key);
    if (!scj || scj.metadata.deletionTimestamp) return undefined;
    const ownedJobs = this.jobs.jobsOf(key).filter((j) => isOwnedBy(j, scj));
    return {
      scj,
      status: desiredStatus({
        scj,
        ownedJobs,
        nextSlotMs: this.d.scheduler.nextSlot(key),
        lastScheduledMs: this.lastScheduled.get(key),
        ready: this.readyState(key, scj),
        readyGeneration: this.readyGeneration(key, scj),
        nowMs: this.d.wall.nowMs(),
      }),
    };
  }

  /** An invalid schedule is a complete verdict; a valid one needs the Job template judged too. */
  private readyGeneration(key: string, scj: SecondCronJob): number | undefined {
    const generation = scj.metadata.generation;
    const compiled = this.compiled.get(key)?.result;
    if ((compiled && !compiled.ok) || this.templateJudged.get(key) === generation) return generation;
    return scj.status?.conditions?.find((c) => c.type === 'Ready')?.observedGeneration;
  }

  private readyState(key: string, scj: SecondCronJob): ReadyState {
    const compiled = this.compiled.get(key)?.result;
    if (compiled && !compiled.ok) return { status: 'False', reason: compiled.reason, message: compiled.message };
    const bad = this.badTemplate.get(key);
    if (bad && bad.generation === scj.metadata.generation) return { status: 'False', reason: 'InvalidJobTemplate', message: bad.message };
    if (scj.spec.suspend) return { status: 'True', reason: 'Suspended', message: 'Suspended: no new Jobs are started' };
    return { status: 'True', reason: 'Scheduled', message: compiled?.ok ? `Scheduled: ${compiled.describe}` : 'Scheduled' };
  }

  /** For the secondcron_schedules gauge. */
  counts(): { active: number; suspended: number; invalid: number } {
    const c = { active: 0, suspended: 0, invalid: 0 };
    for (const scj of this.scjs.list()) {
      const compiled = this.compiled.get(objectKey(scj))?.result;
      if (compiled && !compiled.ok) c.invalid++;
      else if (scj.spec.suspend) c.suspended++;
      else c.active++;
    }
    return c;
  }
}

