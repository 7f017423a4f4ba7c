// Job creation: a bounded number in flight, behind a client-side QPS/burst limit, retried on
// 429/5xx/network errors and a full quota with backoff (Retry-After honoured) until the slot's
// deadline, when it has one.
//
// The creator decides nothing about slots: the executor submits at most one create per schedule, hears
// every step of it (sent, retrying, ended) through `CreateListener`, and cancels a create that a newer
// slot supersedes. A create waiting for a token or a retry can be cancelled (`cancel` says whether it
// was dropped); one on the wire cannot (it may land), its answer always comes. The listener is called
// only once the creator's own state is settled (an entry answered 429 is already sleeping before its
// retry, not in flight), so the executor can cancel it from there — and the executor never decides
// inside the call: it notes the answer and queues the schedule's key.
//
// The queue in front of the limit is our own, not p-limit's: an entry is judged when its turn comes,
// BEFORE it takes a token. One past its deadline, or queued by a replica that is no longer leader,
// leaves without a token or a request. With p-limit every queued entry took a token first: after a
// 30 s API freeze the expired backlog drained at --qps, so fresh slots stayed late long after the API
// server answered again.
//
// The manifest is built when the create is sent, not when it is queued: a retry after a template edit
// sends the edited template.
import type { TimerHandle, Timers, WallClock } from '../clock/clock.js';
import { ApiError, isAlreadyExists, isRetryable, provesNothingStored } from '../kube/api-error.js';
import { retryDelayMs } from '../kube/backoff.js';
import type { RestClient } from '../kube/rest.js';
import type { TokenBucket } from '../kube/token-bucket.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Job, type JobManifest, jobsPath } from '../api/resources.js';
import type { WritePriority } from './write-priority.js';

export type CreateAnswer =
  | { kind: 'created'; job: Job; ackMs: number }
  | { kind: 'already_exists'; ackMs: number }
  /**
   * No more tries: a 4xx (`error`), or the deadline passed (`error` when a try failed). maybeStored: an
   * earlier answer left the outcome unknown (timeout, 500), so the Job may exist after all.
   */
  | { kind: 'failed'; reason: 'deadline' | 'error'; error?: Error; maybeStored: boolean }
  /**
   * Not sent, or not retried: this replica may no longer write, or it is handing over (a retryable
   * answer during the drain ends the create; the next leader decides the slot). maybeStored as above.
   */
  | { kind: 'not_leader'; maybeStored: boolean }
  /** Not sent (again): it stored nothing so far, and the next slot is due, which supersedes it (DESIGN I4). */
  | { kind: 'superseded' };

/** One slot's create as the executor submits it. */
export interface CreateRequest {
  /** The Job to create, built from the resource as it is when the request goes out. */
  readonly build: () => JobManifest;
  readonly slotMs: number;
  /** Infinity when the schedule has no starting deadline: retried until answered or superseded. */
  readonly deadlineMs: number;
  /** The next slot: from then on a create that stored nothing is not sent again. */
  readonly supersededAtMs: number;
}

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

/** An answer after which the entry sleeps before its next try. */
interface RetryLater {
  readonly kind: 'retry';
  readonly nothingStored: boolean;
  readonly error: Error;
}

interface Entry extends CreateRequest {
  readonly key: string;
  attempt: number;
  lastError: Error | undefined;
  /** An answer left the outcome unknown: the Job may have been stored. */
  maybeStored: boolean;
  /** Set while sleeping before a retry. */
  retry?: TimerHandle;
  inFlight: boolean;
  /** The cache showed the slot's Job while this create was on the wire: its answer is final. */
  exists: boolean;
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
  /** Handing over: nothing new is sent, a retryable answer ends its create. */
  private draining = false;

  constructor(private readonly opts: JobCreatorOptions) {}

  listen(listener: CreateListener): void {
    this.listener = listener;
  }

  /** True when the schedule (key) has no create outstanding, so one may be submitted. */
  idle(key: string): boolean {
    return !this.byKey.has(key);
  }

  /** Queues the create of one slot's Job; the schedule (key) must have no other create outstanding. */
  submit(key: string, req: CreateRequest): void {
    if (this.byKey.has(key)) throw new Error(`${key}: a create is already outstanding`);
    if (this.draining) throw new Error(`${key}: the creator is draining`);
    const entry: Entry = { ...req, key, attempt: 0, lastError: undefined, maybeStored: false, inFlight: false, exists: false };
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

  /**
   * The Job cache shows the Job of the schedule's outstanding create (stored by an attempt whose answer
   * was lost or has not come): it is never sent again — once the Job finished and was deleted (history
   * limit 0, a TTL of 0) another attempt would store a second Job for the slot. True when the create was
   * dropped now; one on the wire ends with its answer, a failed one as already existing.
   */
  jobExists(key: string): boolean {
    const entry = this.byKey.get(key);
    if (!entry) return false;
    if (entry.inFlight) {
      entry.exists = true;
      return false;
    }
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
    this.draining = true;
    for (const entry of [...this.byKey.values()]) {
      if (!entry.inFlight) this.end(entry, { kind: 'not_leader', maybeStored: entry.maybeStored });
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
      const nowMs = this.opts.wall.nowMs();
      if (nowMs > entry.deadlineMs) {
        this.giveUp(entry);
        continue;
      }
      if (!entry.maybeStored && nowMs >= entry.supersededAtMs) {
        this.end(entry, { kind: 'superseded' });
        continue;
      }
      if (this.draining || !(this.opts.fenceRemainingMs() > 0)) {
        this.end(entry, { kind: 'not_leader', maybeStored: entry.maybeStored });
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
    const job = entry.build();
    let answer: CreateAnswer | RetryLater;
    try {
      const created = await this.opts.rest.request<Pick<Job, 'metadata'>>({
        verb: 'create',
        path: jobsPath(job.metadata.namespace),
        body: job,
        timeoutMs,
        metadataOnly: true, // the server fills in metadata only; spec is ours and status is empty
        purpose: 'job_create',
      });
      metrics.jobsCreated.inc({ result: 'created' });
      answer = { kind: 'created', job: { ...job, metadata: created.metadata, status: {} }, ackMs: this.opts.wall.nowMs() };
    } catch (err) {
      answer = this.failure(entry, err);
    } finally {
      entry.inFlight = false;
      this.inFlight--;
      metrics.inflight.dec();
    }
    // Reported only now that the entry is out of flight (ended, or sleeping before its retry).
    if (answer.kind === 'retry') this.listener?.retrying(entry.key, entry.slotMs, answer.nothingStored, answer.error);
    else this.end(entry, answer);
    this.pump();
  }

  /** A final answer, or a retry (the entry already sleeps before it). */
  private failure(entry: Entry, err: unknown): CreateAnswer | RetryLater {
    if (isAlreadyExists(err) || entry.exists) {
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
    // Handing over: the next leader decides the slot (a Job that may exist is looked up by it).
    if (this.draining) return { kind: 'not_leader', maybeStored: entry.maybeStored };
    const delay = retryDelayMs(RETRY, entry.attempt++, this.opts.random, err instanceof ApiError ? err.retryAfterMs : undefined);
    if (this.opts.wall.nowMs() + delay >= entry.deadlineMs) {
      this.opts.metrics.jobsCreated.inc({ result: 'error' });
      return { kind: 'failed', reason: 'error', error, maybeStored: entry.maybeStored };
    }
    entry.retry = this.opts.timers.set(delay, () => {
      entry.retry = undefined;
      this.enqueue(entry);
    });
    return { kind: 'retry', nothingStored, error };
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
