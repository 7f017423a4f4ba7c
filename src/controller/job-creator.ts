// Job creation: a bounded number in flight, behind a client-side QPS/burst limit, retried on
// 429/5xx/network errors with backoff (Retry-After honoured) until the slot's deadline.
//
// The creator decides nothing about slots: the reconcile of a schedule submits at most one create for
// it, hears every step of it (sent, retrying, ended) through `CreateListener`, and cancels a create that
// a newer slot supersedes. A create waiting for a token or a retry can be cancelled; one on the wire
// cannot (it may land), its answer always comes.
//
// The queue in front of the limit is our own, not p-limit's: an entry is judged when its turn comes,
// BEFORE it takes a token. One past its deadline, or queued by a replica that is no longer leader,
// leaves without a token or a request. With p-limit every queued entry took a token first: after a
// 30 s API freeze the expired backlog drained at --qps, so fresh slots stayed late long after the API
// server answered again.
import type { TimerHandle, Timers, WallClock } from '../clock/clock.js';
import { ApiError, isAlreadyExists, isRetryable, provesNothingStored } from '../kube/api-error.js';
import { retryDelayMs } from '../kube/backoff.js';
import type { RestClient } from '../kube/rest.js';
import type { TokenBucket } from '../kube/token-bucket.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Job, type JobManifest, jobsPath } from './api.js';
import type { WritePriority } from './write-priority.js';

export type CreateAnswer =
  | { kind: 'created'; job: Job; ackMs: number }
  | { kind: 'already_exists'; ackMs: number }
  /**
   * No more tries: a 4xx (`error`), or the deadline passed (`error` when a try failed). maybeStored: an
   * earlier answer left the outcome unknown (timeout, 500), so the Job may exist after all.
   */
  | { kind: 'failed'; reason: 'deadline' | 'error'; error?: Error; maybeStored: boolean }
  /** Not sent (or not retried): this replica may no longer write. */
  | { kind: 'not_leader' };

/** What the controller hears about the create it submitted for a schedule. */
export interface CreateListener {
  sent(key: string, slotMs: number): void;
  /** Answered, and retried later; nothingStored = the answer proves no Job was stored (429/503). */
  retrying(key: string, slotMs: number, nothingStored: boolean, error: Error): void;
  ended(key: string, slotMs: number, answer: CreateAnswer): void;
}

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
  /** Other writers yield while creates wait to be sent. */
  priority: WritePriority;
  requestTimeoutMs?: number;
}

const RETRY = { initialMs: 100, maxMs: 5_000 };

interface Entry {
  readonly key: string;
  readonly job: JobManifest;
  readonly slotMs: number;
  readonly deadlineMs: number;
  attempt: number;
  lastError: Error | undefined;
  /** An answer left the outcome unknown: the Job may have been stored. */
  maybeStored: boolean;
  /** Set while sleeping before a retry. */
  retry?: TimerHandle;
  inFlight: boolean;
}

export class JobCreator {
  /** Waiting for a concurrency slot and a token, oldest first (a Set keeps insertion order). */
  private readonly queue = new Set<Entry>();
  /** The one unsettled create per schedule: queued, sleeping before a retry, or in flight. */
  private readonly byKey = new Map<string, Entry>();
  private inFlight = 0;
  private tokenTimer: TimerHandle | undefined;
  private readonly drained = new Set<() => void>();
  private listener: CreateListener | undefined;

  constructor(private readonly opts: JobCreatorOptions) {}

  listen(listener: CreateListener): void {
    this.listener = listener;
  }

  /** Queues the create of one slot's Job; the schedule (key) must have no other create outstanding. */
  submit(key: string, job: JobManifest, slotMs: number, deadlineMs: number): void {
    if (this.byKey.has(key)) throw new Error(`${key}: a create is already outstanding`);
    const entry: Entry = { key, job, slotMs, deadlineMs, attempt: 0, lastError: undefined, maybeStored: false, inFlight: false };
    this.byKey.set(key, entry);
    this.enqueue(entry);
  }

  /** Drops the schedule's create if it is not on the wire (queued or waiting to retry); true if dropped. */
  cancel(key: string): boolean {
    const entry = this.byKey.get(key);
    if (!entry || entry.inFlight) return false;
    this.settle(entry);
    return true;
  }

  /** Creates outstanding (queued, waiting to retry or in flight). */
  get size(): number {
    return this.byKey.size;
  }

  /**
   * Graceful shutdown, after the scheduler and the reconciles stopped: creates not on the wire are
   * dropped (reported not_leader: the next leader decides their slots), and the promise resolves once
   * the ones in flight are answered (their timeouts end before the renew deadline).
   */
  drain(): Promise<void> {
    for (const entry of [...this.byKey.values()]) {
      if (!entry.inFlight) this.end(entry, { kind: 'not_leader' });
    }
    if (this.byKey.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.add(resolve));
  }

  private enqueue(entry: Entry): void {
    this.queue.add(entry);
    this.opts.priority.begin();
    this.opts.metrics.queueDepth.set(this.queue.size);
    this.pump();
  }

  private dequeue(entry: Entry): void {
    if (!this.queue.delete(entry)) return;
    this.opts.priority.end();
    this.opts.metrics.queueDepth.set(this.queue.size);
  }

  /** Sends what may be sent now; entries that may not run at all leave without a token. */
  private pump(): void {
    for (const entry of this.queue) {
      if (this.inFlight >= this.opts.maxConcurrent) break;
      if (this.opts.wall.nowMs() > entry.deadlineMs) {
        this.giveUp(entry);
        continue;
      }
      if (!(this.opts.fenceRemainingMs() > 0)) {
        this.end(entry, { kind: 'not_leader' });
        continue;
      }
      if (!this.opts.bucket.tryTake()) {
        this.wakeForToken();
        break;
      }
      this.dequeue(entry);
      void this.send(entry);
    }
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
    this.listener?.sent(entry.key, entry.slotMs);
    let answer: CreateAnswer | undefined;
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
      answer = { kind: 'created', job: { ...entry.job, metadata: created.metadata, status: {} }, ackMs: this.opts.wall.nowMs() };
    } catch (err) {
      answer = this.failure(entry, err);
    } finally {
      entry.inFlight = false;
      this.inFlight--;
      metrics.inflight.dec();
    }
    if (answer) this.end(entry, answer);
    this.pump();
  }

  /** A final answer, or undefined when the entry sleeps before a retry. */
  private failure(entry: Entry, err: unknown): CreateAnswer | undefined {
    if (isAlreadyExists(err)) {
      this.opts.metrics.jobsCreated.inc({ result: 'already_exists' });
      return { kind: 'already_exists', ackMs: this.opts.wall.nowMs() };
    }
    const error = err instanceof Error ? err : new Error(String(err));
    entry.lastError = error;
    if (!isRetryable(err)) {
      this.opts.metrics.jobsCreated.inc({ result: 'error' });
      return { kind: 'failed', reason: 'error', error, maybeStored: entry.maybeStored };
    }
    const nothingStored = provesNothingStored(err);
    if (!nothingStored) entry.maybeStored = true;
    const delay = retryDelayMs(RETRY, entry.attempt++, this.opts.random, err instanceof ApiError ? err.retryAfterMs : undefined);
    if (this.opts.wall.nowMs() + delay >= entry.deadlineMs) {
      this.opts.metrics.jobsCreated.inc({ result: 'error' });
      return { kind: 'failed', reason: 'error', error, maybeStored: entry.maybeStored };
    }
    this.listener?.retrying(entry.key, entry.slotMs, nothingStored, error);
    entry.retry = this.opts.timers.set(delay, () => {
      entry.retry = undefined;
      this.enqueue(entry);
    });
    return undefined;
  }

  private giveUp(entry: Entry): void {
    if (entry.lastError) this.opts.metrics.jobsCreated.inc({ result: 'error' });
    this.end(entry, { kind: 'failed', reason: entry.lastError ? 'error' : 'deadline', maybeStored: entry.maybeStored, ...(entry.lastError ? { error: entry.lastError } : {}) });
  }

  private end(entry: Entry, answer: CreateAnswer): void {
    if (this.byKey.get(entry.key) !== entry) return;
    this.settle(entry);
    this.listener?.ended(entry.key, entry.slotMs, answer);
  }

  /** The one place an entry leaves: queue, retry timer, per-schedule index. */
  private settle(entry: Entry): void {
    this.dequeue(entry);
    if (entry.retry !== undefined) this.opts.timers.clear(entry.retry);
    entry.retry = undefined;
    if (this.byKey.get(entry.key) === entry) this.byKey.delete(entry.key);
    if (this.byKey.size > 0) return;
    const waiting = [...this.drained];
    this.drained.clear();
    for (const resolve of waiting) resolve();
  }
}
