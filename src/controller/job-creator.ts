// Job creation: a bounded number in flight, behind a client-side QPS/burst limit, retried on
// 429/5xx/network errors with backoff (Retry-After honoured) until the slot's deadline.
//
// The queue in front of the limit is our own, not p-limit's: an entry is judged when its turn comes,
// BEFORE it takes a token. One past its deadline, one superseded by a newer slot of the same schedule
// (only the latest missed slot may run, DESIGN §3) and one queued by a replica that is no longer
// leader leave without a token or a request. With p-limit every queued entry took a token first:
// after a 30 s API freeze the expired backlog drained at --qps, so fresh slots stayed late long after
// the API server answered again, and the queue grew with slot rate × stall length. Now the queue holds
// at most one waiting entry per schedule.
import type { TimerHandle, Timers, WallClock } from '../clock/clock.js';
import { ApiError, isAlreadyExists, isRetryable } from '../kube/api-error.js';
import { retryDelayMs } from '../kube/backoff.js';
import type { RestClient } from '../kube/rest.js';
import type { TokenBucket } from '../kube/token-bucket.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Job, type JobManifest, LABEL_OWNER, jobsPath } from './api.js';
import { jobSlotMs } from './job-state.js';
import type { WritePriority } from './write-priority.js';

export type CreateOutcome =
  | { result: 'created'; job: Job; ackMs: number }
  | { result: 'already_exists'; ackMs: number }
  | { result: 'not_leader' }
  | { result: 'deadline' }
  /** A newer slot of the same schedule was queued before this one was sent. */
  | { result: 'superseded' }
  | { result: 'error'; error: Error };

export interface JobCreatorOptions {
  rest: RestClient;
  maxConcurrent: number;
  bucket: TokenBucket;
  wall: WallClock;
  timers: Timers;
  random: () => number;
  metrics: Metrics;
  /** Milliseconds this replica may still act as leader (before its renew deadline); <= 0 = not leader. */
  fenceRemainingMs: () => number;
  /** Other writers yield to creates while any is pending. */
  priority: WritePriority;
  requestTimeoutMs?: number;
}

const RETRY = { initialMs: 100, maxMs: 5_000 };

interface Entry {
  readonly job: JobManifest;
  readonly schedule: string;
  readonly slotMs: number;
  readonly deadlineMs: number;
  attempt: number;
  /** Set while sleeping before a retry. */
  retry?: TimerHandle;
  inFlight: boolean;
  settled: boolean;
  readonly done: (outcome: CreateOutcome) => void;
}

export class JobCreator {
  /** Waiting for a concurrency slot and a token, oldest first (a Set keeps insertion order). */
  private readonly queue = new Set<Entry>();
  /** Every unsettled entry per schedule: queued, sleeping before a retry, or in flight. */
  private readonly bySchedule = new Map<string, Set<Entry>>();
  private inFlight = 0;
  private tokenTimer: TimerHandle | undefined;
  private readonly drained = new Set<() => void>();

  constructor(private readonly opts: JobCreatorOptions) {}

  /** Creates and waits; never throws. deadlineMs is wall time after which the slot is abandoned. */
  create(job: JobManifest, deadlineMs: number): Promise<CreateOutcome> {
    this.opts.priority.begin();
    return new Promise((resolve) => {
      const schedule = `${job.metadata.namespace ?? ''}/${job.metadata.labels?.[LABEL_OWNER] ?? job.metadata.name}`;
      const entry: Entry = {
        job,
        schedule,
        slotMs: jobSlotMs(job),
        deadlineMs,
        attempt: 0,
        inFlight: false,
        settled: false,
        done: (outcome) => {
          if (entry.settled) return;
          entry.settled = true;
          this.settle(entry);
          resolve(outcome);
        },
      };
      // Only entries never sent: one that was sent may have landed (a timeout is no proof it did
      // not), so it keeps retrying into AlreadyExists rather than be counted as missed.
      for (const older of this.bySchedule.get(schedule) ?? []) {
        if (!older.inFlight && older.attempt === 0 && older.slotMs < entry.slotMs) older.done({ result: 'superseded' });
      }
      let entries = this.bySchedule.get(schedule);
      if (!entries) this.bySchedule.set(schedule, (entries = new Set()));
      entries.add(entry);
      this.enqueue(entry);
    });
  }

  /**
   * Resolves when every create has settled (graceful shutdown; the scheduler has stopped, so no new
   * ones come). Waiting creates are not hurried: a token wait cut short would send them past the QPS
   * limit, a retry wait cut short would ignore the server's Retry-After. The caller bounds the wait.
   */
  drain(): Promise<void> {
    if (this.bySchedule.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.add(resolve));
  }

  private enqueue(entry: Entry): void {
    this.queue.add(entry);
    this.opts.metrics.queueDepth.set(this.queue.size);
    this.pump();
  }

  /** Sends what may be sent now; entries that may not run at all leave without a token. */
  private pump(): void {
    for (const entry of this.queue) {
      if (this.inFlight >= this.opts.maxConcurrent) break;
      if (this.opts.wall.nowMs() > entry.deadlineMs) {
        entry.done({ result: 'deadline' });
        continue;
      }
      if (!(this.opts.fenceRemainingMs() > 0)) {
        entry.done({ result: 'not_leader' });
        continue;
      }
      if (!this.opts.bucket.tryTake()) {
        this.wakeForToken();
        break;
      }
      this.queue.delete(entry);
      void this.send(entry);
    }
    this.opts.metrics.queueDepth.set(this.queue.size);
  }

  private wakeForToken(): void {
    if (this.tokenTimer !== undefined) return;
    this.tokenTimer = this.opts.timers.set(this.opts.bucket.msUntilToken(), () => {
      this.tokenTimer = undefined;
      this.pump();
    });
  }

  private async send(entry: Entry): Promise<void> {
    const { metrics } = this.opts;
    // The answer must come before the renew deadline: a create still in flight then could land
    // after another replica took over.
    const timeoutMs = Math.min(this.opts.requestTimeoutMs ?? 10_000, this.opts.fenceRemainingMs());
    entry.inFlight = true;
    this.inFlight++;
    metrics.inflight.inc();
    let outcome: CreateOutcome | { retryable: Error; retryAfterMs?: number };
    try {
      const created = await this.opts.rest.request<Pick<Job, 'metadata'>>({
        verb: 'create',
        path: jobsPath(entry.job.metadata.namespace),
        body: entry.job,
        timeoutMs,
        metadataOnly: true, // the server fills in metadata only; spec is ours and status is empty
        purpose: 'job_create',
      });
      metrics.jobsCreated.inc({ result: 'created' });
      outcome = { result: 'created', job: { ...entry.job, metadata: created.metadata, status: {} }, ackMs: this.opts.wall.nowMs() };
    } catch (err) {
      outcome = this.failure(err);
    } finally {
      entry.inFlight = false;
      this.inFlight--;
      metrics.inflight.dec();
    }
    if ('result' in outcome) entry.done(outcome);
    else this.retryLater(entry, outcome.retryable, outcome.retryAfterMs);
    this.pump();
  }

  private failure(err: unknown): CreateOutcome | { retryable: Error; retryAfterMs?: number } {
    if (isAlreadyExists(err)) {
      this.opts.metrics.jobsCreated.inc({ result: 'already_exists' });
      return { result: 'already_exists', ackMs: this.opts.wall.nowMs() };
    }
    const error = err instanceof Error ? err : new Error(String(err));
    if (isRetryable(err)) return { retryable: error, retryAfterMs: err instanceof ApiError ? err.retryAfterMs : undefined };
    this.opts.metrics.jobsCreated.inc({ result: 'error' });
    return { result: 'error', error };
  }

  private retryLater(entry: Entry, error: Error, retryAfterMs: number | undefined): void {
    const delay = retryDelayMs(RETRY, entry.attempt++, this.opts.random, retryAfterMs);
    if (this.opts.wall.nowMs() + delay >= entry.deadlineMs) {
      this.opts.metrics.jobsCreated.inc({ result: 'error' });
      entry.done({ result: 'error', error });
      return;
    }
    entry.retry = this.opts.timers.set(delay, () => {
      entry.retry = undefined;
      this.enqueue(entry);
    });
  }

  /** The one place an entry leaves: queue, retry timer, per-schedule index, write priority. */
  private settle(entry: Entry): void {
    this.queue.delete(entry);
    if (entry.retry !== undefined) this.opts.timers.clear(entry.retry);
    entry.retry = undefined;
    const entries = this.bySchedule.get(entry.schedule);
    entries?.delete(entry);
    if (entries?.size === 0) this.bySchedule.delete(entry.schedule);
    this.opts.priority.end();
    if (this.bySchedule.size > 0) return;
    const waiting = [...this.drained];
    this.drained.clear();
    for (const resolve of waiting) resolve();
  }
}
