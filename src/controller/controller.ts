// The SecondCronJob controller. Every replica keeps its caches and scheduler warm; only the leader
// writes (Jobs, status, finalizers, Events). Everything about a schedule is decided by the reconcile of
// its key on a de-duplicating work queue (one reconcile per key at a time, retried with per-key
// backoff), as upstream's CronJob controller does: the scheduler's timer only marks a key due, and a
// create's answer or a Job event only reaches the executor, which notes it and queues the key again.
// The reconcile has the executor plan the slots and carry the plan out (executor.ts) and queues the
// key's upkeep: the finalizer, the template's dry run, history (housekeeping.ts) and status
// (status-sync.ts), on a second queue with its own workers. A decision never waits for a worker that
// awaits a write: with both on one queue of 12 workers, 100 one-second schedules whose history deletes
// took 100–400 ms after an API freeze held every worker, and up to 73 % of a slot's creates were
// decided too late, for most of the minute after the freeze (bench/README.md, "Freeze").
//
// Parts: schedule-records.ts (what is remembered per resource), executor.ts (the only code that moves
// both the slot ledger and the Job creator), housekeeping.ts, status-sync.ts; this file wires them to
// the caches, the scheduler and the queue.
import type { MonotonicClock, Timers, WallClock } from '../clock/clock.js';
import type { ReflectorHandler } from '../kube/reflector.js';
import type { RestClient } from '../kube/rest.js';
import { objectKey } from '../kube/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Fire, Scheduler } from '../scheduler/index.js';
import type { Job, SecondCronJob } from '../api/resources.js';
import type { Cache } from './cache.js';
import type { EventSink } from './events.js';
import { Executor } from './executor.js';
import { FencedRest, NotLeaderError } from './fenced-rest.js';
import { hasFinalizer } from './finalizer.js';
import { Housekeeping } from './housekeeping.js';
import type { JobCreator } from './job-creator.js';
import { JobIndex } from './job-index.js';
import { jobOutcome } from './job-state.js';
import { type ScheduleRecord, ScheduleRecords } from './schedule-records.js';
import { StatusSync } from './status-sync.js';
import { type ReconcileResult, WorkQueue } from './work-queue.js';
import { windowState } from '../schedule/index.js';
import type { WritePriority } from './write-priority.js';

export interface Leadership {
  isLeader(): boolean;
  /** Fencing: how much longer this replica may write as leader (before its renew deadline); <= 0 = not. */
  fenceRemainingMs(): number;
}

/**
 * secondcron_schedules by state. A type, not an interface: the gauge reads it as a Record. `active`:
 * compiled for the cached generation and its timer armed; `pending`: in the cache, not compiled for
 * that generation yet (or compiled and not yet armed); `ended`: compiled, its window over (nothing to arm).
 */
export type ScheduleCounts = { active: number; pending: number; suspended: number; invalid: number; ended: number };

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
  /** Upkeeps running at once (finalizers, dry runs, history deletions, status patches). */
  workers?: number;
  /** Longest the scheduler sleeps between wake-ups (re-checks the wall clock). */
  schedulerMaxSleepMs?: number;
}

// Bounded, so thousands of resources seen at once (a new leader, a restart) cannot flood the API
// server with upkeep writes.
const DEFAULT_WORKERS = 12;
// A decision awaits I/O only to delete the running Jobs of a Replace schedule: a few workers suffice,
// and keys made due by a slot or a create's answer are taken first.
const DECISION_WORKERS = 8;

export class Controller {
  readonly scheduler: Scheduler;
  private readonly jobs = new JobIndex();
  private readonly records: ScheduleRecords;
  private readonly executor: Executor;
  private readonly housekeeping: Housekeeping;
  private readonly statuses: StatusSync;
  /** The last counts(), until something they are counted from changes. */
  private scheduleCounts: ScheduleCounts | undefined;
  /** Decisions: plan the slots, queue the create. */
  private readonly queue: WorkQueue;
  /** Upkeep: every write of a key but its Job creates. */
  private readonly upkeepQueue: WorkQueue;

  constructor(private readonly d: ControllerDeps) {
    // Every write goes through the fence when it is sent.
    const writes = new FencedRest(d.rest, () => d.leadership.fenceRemainingMs());
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
    const queue = (what: string, workers: number, reconcile: (key: string) => Promise<ReconcileResult | void>): WorkQueue =>
      new WorkQueue({
        reconcile,
        workers,
        mono: d.mono,
        timers: d.timers,
        random: d.random,
        onError: (key, err, retryInMs) => d.log.warn(`${what} failed; retrying`, { key, err, retryInMs: Math.round(retryInMs) }),
      });
    this.queue = queue('reconcile', DECISION_WORKERS, (key) => this.reconcile(key));
    this.upkeepQueue = queue('upkeep', d.workers ?? DEFAULT_WORKERS, (key) => this.upkeep(key));
    // The executor needs the records and the records the executor: the records are read through a getter.
    const records: { get(key: string): ScheduleRecord | undefined } = { get: (key) => this.records.get(key) };
    this.executor = new Executor({ ...d, writes, jobs: this.jobs, records, requeue: (key) => this.queue.addFirst(key), fresh: () => d.leadership.fenceRemainingMs() > 0 });
    this.records = new ScheduleRecords({
      executor: this.executor,
      events: d.events,
      wall: d.wall,
      log: d.log,
      isLeader: () => d.leadership.isLeader(),
      onChange: () => (this.scheduleCounts = undefined),
    });
    this.housekeeping = new Housekeeping({ rest: d.rest, writes, executor: this.executor, events: d.events, wall: d.wall, log: d.log });
    this.statuses = new StatusSync({ writes, scjs: d.scjs, records: this.records, executor: this.executor, wall: d.wall, mono: d.mono });
    d.creator.listen(this.executor.answers);
  }

  // ---- cache events -------------------------------------------------------------------------

  readonly scjEvents: ReflectorHandler<SecondCronJob> = {
    added: (scj) => {
      this.scheduleCounts = undefined;
      this.queue.add(objectKey(scj));
    },
    updated: (old, scj) => {
      this.scheduleCounts = undefined;
      const key = objectKey(scj);
      this.records.updated(key, old, scj);
      this.queue.add(key);
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
        this.executor.jobGone(key, job);
        this.queue.add(key);
      },
      relisted: () => {
        for (const [key, rec] of this.records.entries()) {
          if (namespace && !key.startsWith(`${namespace}/`)) continue;
          if (this.executor.relisted(key, rec)) this.queue.add(key);
        }
      },
    };
  }

  private jobChanged(old: Job | undefined, job: Job): void {
    const { key, previousKey } = this.jobs.put(job);
    if (previousKey) this.queue.add(previousKey); // relabelled: no longer that schedule's Job
    if (!key) return;
    this.executor.jobObserved(key, job);
    if (old && jobOutcome(old) === jobOutcome(job) && !previousKey && !job.metadata.deletionTimestamp === !old.metadata.deletionTimestamp) return;
    this.queue.add(key);
  }

  /** The one place a schedule's state is dropped. */
  private forget(key: string): void {
    this.scheduleCounts = undefined;
    const [namespace = '', name = ''] = key.split('/');
    this.d.metrics.scheduleMissed?.remove({ namespace, name });
    this.scheduler.delete(key);
    this.executor.forget(key);
    this.records.delete(key);
    this.queue.forget(key);
    this.upkeepQueue.forget(key);
  }

  // ---- lifecycle ----------------------------------------------------------------------------

  /**
   * Leader-only work starts: every schedule is reconciled, in the ordinary tier, so that a slot falling
   * due meanwhile (its timer's addFirst) is decided before them; in the first tier a due key waited
   * for all the others. The timer itself fires only because the queue yields to the event loop
   * between slices: at 100,000 schedules these reconciles, back to back on microtasks, held it ~3 s
   * (bench/README, "Failover at 100,000").
   */
  startedLeading(): void {
    this.executor.startedLeading();
    for (const scj of this.d.scjs.list()) this.queue.add(objectKey(scj));
  }

  /** Creates not on the wire are dropped; their slots are undecided again (the next leader decides them). */
  stoppedLeading(): void {
    for (const [key, rec] of this.records.entries()) this.executor.leadershipLost(key, rec);
  }

  /** Periodic safety net: re-derive everything from the caches (cheap: no-op writes are skipped). */
  resync(): void {
    for (const scj of this.d.scjs.list()) this.queue.add(objectKey(scj));
  }

  /** Stops deciding: no reconcile or upkeep starts, running ones finish. */
  async shutDown(): Promise<void> {
    await Promise.all([this.queue.shutDown(), this.upkeepQueue.shutDown()]);
  }

  /**
   * Handing over, after the reconciles stopped and the creates on the wire were answered: the slots
   * still waiting for a lookup are settled, then every status that waits is written, so the next
   * leader reads every decided slot back (I11).
   */
  async writeStatuses(): Promise<void> {
    if (!(this.d.leadership.fenceRemainingMs() > 0)) return;
    await Promise.all([...this.records.entries()].map(([key, rec]) => this.executor.settleForHandover(key, rec)));
    await this.statuses.writeAll();
  }

  // ---- firing -------------------------------------------------------------------------------

  /**
   * Called by the scheduler on every replica; followers only keep their timers advancing. A leader
   * that is no longer fresh (frozen past its renew deadline) does nothing: the slots it slept through
   * are another leader's, or its own once it leads again. The fire decides nothing: the key's
   * reconcile does, from the slots themselves.
   */
  private onFire(fire: Fire): void {
    if (!(this.d.leadership.fenceRemainingMs() > 0)) return;
    this.d.metrics.timerLateness.observe(fire.latenessMs / 1000);
    this.queue.addFirst(fire.key);
  }

  // ---- reconcile ----------------------------------------------------------------------------

  private async reconcile(key: string): Promise<void> {
    const scj = this.d.scjs.get(key);
    if (!scj) {
      this.forget(key);
      return;
    }
    const compiledBefore = this.records.get(key)?.compiled;
    const rec = this.records.record(key, scj);
    if (rec.compiled !== compiledBefore) this.scheduler.delete(key); // re-armed below from the new schedule
    if (scj.metadata.deletionTimestamp) {
      this.scheduler.delete(key);
      this.executor.forget(key);
      this.upkeepQueue.add(key); // the finalizer
      return;
    }
    this.keepTimer(key, scj, rec);
    if (!this.d.leadership.isLeader()) return;
    const current = (): boolean => this.d.leadership.fenceRemainingMs() > 0 && this.records.get(key) === rec && this.d.scjs.get(key) === scj;
    const templateInvalid = rec.template.kind === 'invalid' && rec.templateGeneration === scj.metadata.generation;
    try {
      await this.executor.decide(key, scj, rec, templateInvalid, current);
    } catch (err) {
      if (!(err instanceof NotLeaderError)) throw err; // a new leader reconciles everything again
    } finally {
      // Also after a failed decision: a Replace delete that failed must not hold back history or status.
      this.upkeepQueue.add(key);
    }
  }

  /** Every write of a leader's key but its creates, in its own queue: a decision never waits for it. */
  private async upkeep(key: string): Promise<ReconcileResult | void> {
    const scj = this.d.scjs.get(key);
    const rec = this.records.get(key);
    if (!scj || !rec || rec.uid !== scj.metadata.uid || !this.d.leadership.isLeader()) return;
    if (scj.metadata.deletionTimestamp) {
      if (hasFinalizer(scj) && !rec.finalized) await this.housekeeping.finalize(key, scj, rec);
      return;
    }
    // Each step runs even if an earlier one failed (a dry run that timed out must not hold back
    // history or status); the first failure is rethrown at the end, so the key is retried with backoff.
    const failures: unknown[] = [];
    const step = async <T>(fn: () => Promise<T>): Promise<T | undefined> =>
      fn().catch((err: unknown) => {
        if (!(err instanceof NotLeaderError)) failures.push(err); // a new leader reconciles everything again
        return undefined;
      });
    // Yields to Job creates waiting for a token, without holding a worker.
    const yieldMs = this.d.priority.yieldMs();
    if (yieldMs > 0) return { requeueAfterMs: yieldMs };
    await step(() => this.housekeeping.ensureFinalizer(scj));
    if (rec.compiled.ok) await step(() => this.housekeeping.judgeTemplate(scj, rec));
    await step(() => this.housekeeping.prune(key, scj, rec));
    await step(() => this.executor.lookUpMissing(key, scj, rec));
    const statusInMs = await step(() => this.statuses.update(key, scj, rec));
    if (failures.length > 0) throw failures[0];
    return statusInMs !== undefined ? { requeueAfterMs: statusInMs } : undefined;
  }

  /** Keeps the scheduler's entry in line with the spec, on every replica (followers stay warm). */
  private keepTimer(key: string, scj: SecondCronJob, rec: ScheduleRecord): void {
    const armed = this.scheduler.has(key);
    if (!rec.compiled.ok || scj.spec.suspend) this.scheduler.delete(key);
    else if (!armed) this.scheduler.set(key, rec.compiled.source);
    if (this.scheduler.has(key) !== armed || !armed) this.scheduleCounts = undefined; // counted by whether it is armed
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
      upkeeps_waiting: this.upkeepQueue.length,
      expected_jobs: expected,
      deleting_jobs: deleting,
      written_statuses: written,
    };
  }

  /**
   * For the secondcron_schedules gauge: counted again only after a SecondCronJob, a compiled schedule or
   * a timer changed. Counting 10,000 on every scrape was ~20 ms each (a key string per schedule), most of
   * an idle operator's scrape. A resource counts as active only once its current generation is compiled
   * and its timer armed: a cached resource not reconciled yet is pending, not "scheduled".
   */
  counts(): ScheduleCounts {
    if (this.scheduleCounts) return { ...this.scheduleCounts };
    const c: ScheduleCounts = { active: 0, pending: 0, suspended: 0, invalid: 0, ended: 0 };
    const nowMs = this.d.wall.nowMs();
    for (const scj of this.d.scjs.list()) {
      const key = objectKey(scj);
      const rec = this.records.get(key);
      const compiled = rec && rec.uid === scj.metadata.uid && rec.generation === scj.metadata.generation ? rec.compiled : undefined;
      if (compiled && !compiled.ok) c.invalid++;
      else if (scj.spec.suspend) c.suspended++;
      else if (!compiled) c.pending++;
      else if (this.scheduler.has(key)) c.active++;
      else if (windowState(compiled.window, nowMs) === 'WindowEnded') c.ended++;
      else c.pending++;
    }
    this.scheduleCounts = c;
    return { ...c };
  }
}
