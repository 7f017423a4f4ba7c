// A keyed work queue in the shape of client-go's rate-limited, delaying workqueue driving a
// controller-runtime reconcile loop: a key is queued at most once however often it is added, one
// worker at a time handles a key (an add while it runs queues it again for after), a bounded number
// of workers run in all, a failed reconcile is retried with per-key exponential backoff, and a
// reconcile may ask to run again after a delay (requeueAfter). Keys added with addFirst (a slot fell
// due, a create was answered) are taken before the others, like controller-runtime's priority queue,
// so a slot's decision never waits behind housekeeping. A reconcile never starts inside an add*: the
// queue starts its workers on the next microtask, so a creator callback or an event handler that adds
// a key has returned before any decision runs (DESIGN §3: nothing runs re-entrantly). A run of
// reconciles that await no I/O would go on microtasks to its end, holding every timer, socket read and
// Lease renewal until then: the queue hands the event loop a turn after each slice of SLICE_MS. Pure:
// clocks and timers are injected; the turn is setImmediate, which lets the loop poll I/O and fire
// timers before the pump goes on.
import type { MonotonicClock, TimerHandle, Timers } from '../clock/clock.js';
import { type BackoffPolicy, backoffDelayMs } from '../kube/backoff.js';

export interface ReconcileResult {
  /** Run this key again after this long (e.g. a coalesced status write that is not due yet). */
  requeueAfterMs?: number;
}

export type Reconcile = (key: string) => Promise<ReconcileResult | void>;

export interface WorkQueueOptions {
  reconcile: Reconcile;
  /** Reconciles running at the same time, over all keys. */
  workers: number;
  mono: MonotonicClock;
  timers: Timers;
  random: () => number;
  /** Per-key backoff after failures; reset by the next success. */
  backoff?: BackoffPolicy;
  /** A reconcile threw; it runs again after retryInMs unless the key is added sooner. */
  onError?: (key: string, error: unknown, retryInMs: number) => void;
}

// A failed finalizer or status patch is usually a stale cache that the next watch event refreshes;
// the backoff only has to keep an API server that keeps failing from being hammered.
const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 30_000 };

// A takeover at 100,000 schedules queues every key, and planning one that is not due takes no I/O:
// the ~3 s run held the first due slot's timer to its end (the failover bench's canary Job 3.2 s after
// its slot). A slice bounds what a timer that falls due meanwhile waits for: the slice and the
// reconcile running at its end.
const SLICE_MS = 5;
// A slice lasts as long as the loop's other work took between the last two slices, from SLICE_MS up
// to MAX_SLICE_MS: on a busy loop the reconciles keep about half of it. With 5 ms alone, the takeover
// at 100,000 schedules, whose turns were mostly watch events and write answers, armed the last
// schedule ~60 s after leading (scale bench, 2026-12-07; 4.1 s after the caches synced before slices).
const MAX_SLICE_MS = 50;

interface Delayed {
  handle: TimerHandle;
  atMonoMs: number;
}

export class WorkQueue {
  /** Keys waiting for a worker, in the order they were added (a Set keeps insertion order). */
  private readonly queued = new Set<string>();
  /** Keys waiting for a worker that go before `queued` ones. A key is in at most one of the two. */
  private readonly first = new Set<string>();
  private readonly processing = new Set<string>();
  /** Added while being processed: queued again when that run ends (dirtyFirst: with addFirst). */
  private readonly dirty = new Set<string>();
  private readonly dirtyFirst = new Set<string>();
  private readonly delayed = new Map<string, Delayed>();
  private readonly failures = new Map<string, number>();
  private readonly idle = new Set<() => void>();
  private stopped = false;
  private pumpQueued = false;
  /** When the reconciles started since the event loop's last turn began; undefined: none yet. */
  private sliceStartMs: number | undefined;
  /** The slice is spent: the pump goes on in the next turn. */
  private waitingForTurn = false;
  /** When the last slice was spent; the loop's other work runs from then to the next slice. */
  private spentAtMs = 0;
  private sliceMs = SLICE_MS;

  constructor(private readonly opts: WorkQueueOptions) {
    if (!(opts.workers >= 1)) throw new RangeError(`work queue: workers must be >= 1, got ${opts.workers}`);
  }

  /** Keys waiting for a worker (not counting those running or delayed). */
  get length(): number {
    return this.queued.size + this.first.size;
  }

  add(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (!this.first.has(key)) this.queued.add(key);
    this.schedulePump();
  }

  /** Like add, but the key goes before every key added with add(). */
  addFirst(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      this.dirtyFirst.add(key);
      return;
    }
    this.queued.delete(key);
    this.first.add(key);
    this.schedulePump();
  }

  /** Adds the key after delayMs; of several pending delays for one key the earliest wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const atMonoMs = this.opts.mono.nowMs() + delayMs;
    const pending = this.delayed.get(key);
    if (pending && pending.atMonoMs <= atMonoMs) return;
    if (pending) this.opts.timers.clear(pending.handle);
    const handle = this.opts.timers.set(delayMs, () => {
      this.delayed.delete(key);
      this.add(key);
    });
    this.delayed.set(key, { handle, atMonoMs });
  }

  /** The key's object is gone: drop its backoff and delayed adds (a queued run finds nothing to do). */
  forget(key: string): void {
    this.failures.delete(key);
    const pending = this.delayed.get(key);
    if (pending) this.opts.timers.clear(pending.handle);
    this.delayed.delete(key);
  }

  /** Stops taking work and resolves once the running reconciles have finished. */
  async shutDown(): Promise<void> {
    this.stopped = true;
    this.queued.clear();
    this.first.clear();
    this.dirty.clear();
    this.dirtyFirst.clear();
    for (const d of this.delayed.values()) this.opts.timers.clear(d.handle);
    this.delayed.clear();
    await this.whenIdle();
  }

  /** Resolves when no key is queued or running (delayed adds do not count). */
  whenIdle(): Promise<void> {
    if (this.processing.size === 0 && this.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.add(resolve));
  }

  private schedulePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private pump(): void {
    while (!this.stopped && this.processing.size < this.opts.workers && this.length > 0) {
      if (this.sliceSpent()) return;
      const from = this.first.size > 0 ? this.first : this.queued;
      const key = from.values().next().value as string;
      from.delete(key);
      this.processing.add(key);
      void this.run(key);
    }
  }

  /**
   * Starts a slice at the first reconcile after a turn of the event loop, and says when it has run
   * its length. The turn that ends a slice is queued when the slice starts: a slice whose reconciles
   * await I/O ends by itself, and the turn only starts a new one.
   */
  private sliceSpent(): boolean {
    const now = this.opts.mono.nowMs();
    if (this.sliceStartMs === undefined) {
      this.sliceStartMs = now;
      setImmediate(() => {
        this.sliceStartMs = undefined;
        if (!this.waitingForTurn) {
          // The run ended within its slice: the next one starts short, whatever this one grew to.
          this.sliceMs = SLICE_MS;
          return;
        }
        this.waitingForTurn = false;
        this.sliceMs = Math.min(MAX_SLICE_MS, Math.max(SLICE_MS, this.opts.mono.nowMs() - this.spentAtMs));
        this.pump();
      });
      return false;
    }
    if (now - this.sliceStartMs < this.sliceMs) return false;
    this.waitingForTurn = true;
    this.spentAtMs = now;
    return true;
  }

  private async run(key: string): Promise<void> {
    let again: number | undefined;
    try {
      const result = await this.opts.reconcile(key);
      this.failures.delete(key);
      again = result?.requeueAfterMs;
    } catch (error) {
      const attempt = this.failures.get(key) ?? 0;
      this.failures.set(key, attempt + 1);
      again = backoffDelayMs(this.opts.backoff ?? DEFAULT_BACKOFF, attempt, this.opts.random);
      this.opts.onError?.(key, error, again);
    } finally {
      this.processing.delete(key);
    }
    if (this.dirty.delete(key)) (this.dirtyFirst.delete(key) ? this.first : this.queued).add(key);
    if (again !== undefined) this.addAfter(key, again);
    this.pump();
    if (this.processing.size === 0 && this.length === 0) {
      const waiting = [...this.idle];
      this.idle.clear();
      for (const resolve of waiting) resolve();
    }
  }
}
