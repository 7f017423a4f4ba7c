// Job creation: a bounded number in flight (p-limit), behind a client-side QPS/burst limit, retried
// on 429/5xx/network errors with backoff (Retry-After honoured) until the slot's deadline.
// Fencing is checked right before each attempt so a deposed leader stops at once.
import pLimit, { type LimitFunction } from 'p-limit';

import type { Timers, WallClock } from '../clock/clock.js';
import { isAlreadyExists, isRetryable } from '../kube/api-error.js';
import { retryDelayMs } from '../kube/backoff.js';
import type { KubeRest } from '../kube/rest.js';
import type { TokenBucket } from '../kube/token-bucket.js';
import type { Metrics } from '../metrics/metrics.js';
import { type Job, type JobManifest, jobsPath } from './api.js';
import type { WritePriority } from './write-priority.js';

export type CreateOutcome =
  | { result: 'created'; job: Job; ackMs: number }
  | { result: 'already_exists'; ackMs: number }
  | { result: 'not_leader' }
  | { result: 'deadline' }
  | { result: 'error'; error: Error };

export interface JobCreatorOptions {
  rest: KubeRest;
  maxConcurrent: number;
  bucket: TokenBucket;
  wall: WallClock;
  timers: Timers;
  random: () => number;
  metrics: Metrics;
  /** True while this replica may act as leader (its last renew is younger than the renew deadline). */
  fence: () => boolean;
  /** Other writers yield to creates while any is pending. */
  priority: WritePriority;
  requestTimeoutMs?: number;
}

const RETRY = { initialMs: 100, maxMs: 5_000 };

export class JobCreator {
  private readonly limit: LimitFunction;
  private readonly pending = new Set<Promise<CreateOutcome>>();

  constructor(private readonly opts: JobCreatorOptions) {
    this.limit = pLimit(opts.maxConcurrent);
  }

  /** Creates and waits; never throws. deadlineMs is wall time after which the slot is abandoned. */
  async create(job: JobManifest, deadlineMs: number): Promise<CreateOutcome> {
    this.opts.priority.begin();
    const outcome = this.createWithRetries(job, deadlineMs);
    this.pending.add(outcome);
    try {
      return await outcome;
    } finally {
      this.pending.delete(outcome);
      this.opts.priority.end();
    }
  }

  private async createWithRetries(job: JobManifest, deadlineMs: number): Promise<CreateOutcome> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(job, deadlineMs);
      if (!('retryable' in outcome)) return outcome;
      const delay = retryDelayMs(RETRY, attempt, this.opts.random, outcome.retryAfterMs);
      if (this.opts.wall.nowMs() + delay >= deadlineMs) {
        this.opts.metrics.jobsCreated.inc({ result: 'error' });
        return { result: 'error', error: outcome.error };
      }
      await this.sleep(delay);
    }
  }

  /**
   * Resolves when every create has settled (graceful shutdown; the scheduler has stopped, so no new
   * ones come). Sleeping creates are not woken: a rate-limit wait cut short would send them past the
   * QPS limit, a retry wait cut short would ignore the server's Retry-After. The caller bounds the wait.
   */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private attempt(job: JobManifest, deadlineMs: number): Promise<CreateOutcome | { retryable: true; error: Error; retryAfterMs?: number }> {
    const { metrics } = this.opts;
    metrics.queueDepth.inc();
    return this.limit(async () => {
      metrics.queueDepth.dec();
      const wait = this.opts.bucket.reserve();
      if (wait > 0) await this.sleep(wait);
      if (this.opts.wall.nowMs() > deadlineMs) return { result: 'deadline' as const };
      if (!this.opts.fence()) return { result: 'not_leader' as const };
      metrics.inflight.inc();
      try {
        const created = await this.opts.rest.request<Pick<Job, 'metadata'>>({
          verb: 'create',
          path: jobsPath(job.metadata.namespace),
          body: job,
          timeoutMs: this.opts.requestTimeoutMs ?? 10_000,
          metadataOnly: true, // the server fills in metadata only; spec is ours and status is empty
        });
        metrics.jobsCreated.inc({ result: 'created' });
        const ackMs = this.opts.wall.nowMs();
        return { result: 'created' as const, job: { ...job, metadata: created.metadata, status: {} }, ackMs };
      } catch (err) {
        if (isAlreadyExists(err)) {
          metrics.jobsCreated.inc({ result: 'already_exists' });
          return { result: 'already_exists' as const, ackMs: this.opts.wall.nowMs() };
        }
        const error = err instanceof Error ? err : new Error(String(err));
        if (isRetryable(err)) return { retryable: true as const, error, retryAfterMs: (err as { retryAfterMs?: number }).retryAfterMs };
        metrics.jobsCreated.inc({ result: 'error' });
        return { result: 'error' as const, error };
      } finally {
        metrics.inflight.dec();
      }
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.opts.timers.set(ms, resolve));
  }
}
