// List-then-watch cache of one resource, kept alive for the life of the process.
//
// client-node 2.0.1's informer stops for good on any error it does not know and waits up to 30 s
// between re-watches after clean closes; a scheduler cannot afford either. This reflector re-watches
// at once after a normal close (the server's timeout), relists on 410 Gone, backs off on errors, on
// 410 and on watches that close at once with nothing in them (as client-go's reflector does), waits
// at least as long as a Retry-After says, and a watchdog restarts it if nothing at all has happened
// for too long.

import type { MonotonicClock, TimerHandle, Timers } from '../clock/clock.js';
import type { Logger } from '../log.js';
import { ApiError } from './api-error.js';
import { retryDelayMs } from './backoff.js';
import type { RestClient } from './rest.js';
import { type KubeObject, type ListResponse, type WatchStatus, objectKey } from './types.js';

export interface ReflectorHandler<T> {
  added(obj: T): void;
  updated(old: T, obj: T): void;
  deleted(obj: T): void;
  /**
   * A relist replaced the cache (after the events above): anything that existed when the list was
   * requested (monotonic ms) and is not in the cache now is gone.
   */
  relisted?(listStartedMonoMs: number): void;
}

export interface ReflectorOptions<T extends KubeObject> {
  name: string;
  rest: RestClient;
  /** Collection path, e.g. /apis/batch/v1/jobs or /apis/batch/v1/namespaces/ns/jobs. */
  path: string;
  labelSelector?: string;
  /** e.g. metadata.name=x: one object, which RBAC can grant by its name (resourceNames) for list and watch. */
  fieldSelector?: string;
  log: Logger;
  mono: MonotonicClock;
  timers: Timers;
  random: () => number;
  /** Restart everything if neither events, bookmarks nor reconnects happened for this long. */
  watchdogMs?: number;
  pageSize?: number;
  /** Called each time list/watch fails and the reflector backs off (for metrics). */
  onFailure?: () => void;
  /**
   * Applied to every object before it is cached: drop what the controller never reads (memory).
   * `cached` is the version the cache holds for the same key, if any, so unchanged parts can be shared.
   */
  transform?: (obj: T, cached: T | undefined) => T;
}

const ERROR_BACKOFF = { initialMs: 500, maxMs: 30_000 };
/** client-go's reflector: a watch closed sooner than this without events counts as a failure. */
const SHORT_WATCH_MS = 1_000;

class ShortWatch extends Error {
  constructor() {
    super(`watch closed within ${SHORT_WATCH_MS} ms without any event`);
    this.name = 'ShortWatch';
  }
}

class ExpiredContinue extends Error {
  constructor() {
    super('continue token expired');
    this.name = 'ExpiredContinue';
  }
}

export class Reflector<T extends KubeObject> {
  private readonly store = new Map<string, T>();
  private readonly handlers: ReflectorHandler<T>[] = [];
  private resourceVersion = '';
  private synced = false;
  private stopped = true;
  private lastActivityMono = 0;
  private abortWatch: (() => void) | undefined;
  private watchdog: TimerHandle | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly opts: ReflectorOptions<T>) {}

  /** Like an informer's AddEventHandler: called for every change from then on (register before start). */
  addEventHandler(handler: ReflectorHandler<T>): void {
    this.handlers.push(handler);
  }

  get name(): string {
    return this.opts.name;
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): IterableIterator<T> {
    return this.store.values();
  }

  get size(): number {
    return this.store.size;
  }

  /** Monotonic ms since the last sign of life (event, bookmark, list, reconnect). */
  idleMs(): number {
    return this.opts.mono.nowMs() - this.lastActivityMono;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.touch();
    this.armWatchdog();
    void this.run();
  }

  stop(): void {
    this.stopped = true;
    this.abortWatch?.();
    this.wake?.();
    if (this.watchdog) this.opts.timers.clear(this.watchdog);
  }

  private touch(): void {
    this.lastActivityMono = this.opts.mono.nowMs();
  }

  private armWatchdog(): void {
    const limit = this.opts.watchdogMs ?? 120_000;
    this.watchdog = this.opts.timers.set(Math.min(limit, 30_000), () => {
      if (this.stopped) return;
      if (this.idleMs() > limit) {
        this.opts.log.warn('watch silent for too long; restarting', { reflector: this.opts.name, idleMs: Math.round(this.idleMs()) });
        this.resourceVersion = ''; // relist: we cannot trust what we missed
        this.abortWatch?.();
        this.touch();
      }
      this.armWatchdog();
    });
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        if (!this.resourceVersion) await this.relist();
        const startedMono = this.opts.mono.nowMs();
        const sawEvents = await this.watchOnce();
        if (this.stopped) break;
        // client-go's "very short watch": closed within a second with nothing delivered is a failure
        // (a proxy or an overloaded server closing at once), not a reason to re-watch in a loop.
        if (!sawEvents && this.opts.mono.nowMs() - startedMono < SHORT_WATCH_MS) throw new ShortWatch();
        failures = 0;
      } catch (err) {
        if (this.stopped) break;
        const expired = err instanceof ApiError && err.status === 410;
        if (expired) this.resourceVersion = ''; // relist, after the backoff: a relist storm is worse than a short pause
        else this.opts.onFailure?.();
        const retryAfterMs = err instanceof ApiError ? err.retryAfterMs : undefined;
        const delay = retryDelayMs(ERROR_BACKOFF, failures++, this.opts.random, retryAfterMs);
        const level = expired ? 'info' : 'warn';
        this.opts.log[level](expired ? 'watch expired; relisting' : 'list/watch failed; retrying', { reflector: this.opts.name, err, retryInMs: Math.round(delay) });
        await this.sleep(delay);
      }
    }
  }

  private async relist(): Promise<void> {
    const startedMonoMs = this.opts.mono.nowMs();
    let fresh: Map<string, T>;
    let rv: string;
    try {
      ({ items: fresh, resourceVersion: rv } = await this.listPages(this.opts.pageSize ?? 500));
    } catch (err) {
      // client-go's ListPager (FullListIfExpired): the continue token expired between two pages (410
      // Expired, the data compacted away); one unpaged list from the current state instead.
      if (!(err instanceof ExpiredContinue)) throw err;
      this.opts.log.info('paged list expired between pages; listing everything at once', { reflector: this.opts.name });
      ({ items: fresh, resourceVersion: rv } = await this.listPages(undefined));
    }
    this.touch();
    // Replace the store and tell the handler only what changed, so a relist is not a thundering herd.
    for (const [key, old] of this.store) {
      if (!fresh.has(key)) {
        this.store.delete(key);
        for (const h of this.handlers) h.deleted(old);
      }
    }
    for (const [key, obj] of fresh) {
      const old = this.store.get(key);
      this.store.set(key, obj);
      this.notify(old, obj);
    }
    this.resourceVersion = rv;
    for (const h of this.handlers) h.relisted?.(startedMonoMs);
    if (!this.synced) this.opts.log.info('cache synced', { reflector: this.opts.name, objects: this.store.size });
    this.synced = true;
  }

  /** Every page of the collection (one request when `limit` is undefined). */
  private async listPages(limit: number | undefined): Promise<{ items: Map<string, T>; resourceVersion: string }> {
    const items = new Map<string, T>();
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      let page: ListResponse<T>;
      try {
        page = await this.opts.rest.request<ListResponse<T>>({
          verb: 'list',
          path: this.opts.path,
          query: { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector, limit, continue: continueToken },
          timeoutMs: 60_000,
        });
      } catch (err) {
        if (continueToken !== undefined && err instanceof ApiError && err.status === 410) throw new ExpiredContinue();
        throw err;
      }
      for (const item of page.items) {
        const key = objectKey(item);
        items.set(key, this.opts.transform ? this.opts.transform(item, this.store.get(key)) : item);
      }
      continueToken = page.metadata.continue || undefined;
      resourceVersion = page.metadata.resourceVersion;
    } while (continueToken);
    return { items, resourceVersion };
  }

  /** One watch request; resolves true if it delivered anything, rejects on errors (410 as ApiError). */
  private async watchOnce(): Promise<boolean> {
    let sawEvents = false;
    let expired: ApiError | undefined;
    const controller = new AbortController();
    this.abortWatch = () => controller.abort();
    if (this.stopped) controller.abort();
    const query = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      labelSelector: this.opts.labelSelector,
      fieldSelector: this.opts.fieldSelector,
      // The server ends the watch itself after this; jitter spreads replicas' reconnects.
      timeoutSeconds: Math.floor(240 + this.opts.random() * 120),
    };
    const onEvent = (type: string, obj: unknown): void => {
      this.touch();
      sawEvents = true;
      if (type === 'ERROR') {
        const status = obj as WatchStatus;
        expired = new ApiError(status.code ?? 500, status.reason ?? 'Unknown', status.message ?? 'watch error');
        controller.abort();
        return;
      }
      const item = obj as T;
      if (item?.metadata?.resourceVersion) this.resourceVersion = item.metadata.resourceVersion;
      if (type === 'BOOKMARK') return;
      this.apply(type, this.opts.transform ? this.opts.transform(item, this.store.get(objectKey(item))) : item);
    };
    this.touch();
    try {
      await this.opts.rest.watch(this.opts.path, query, onEvent, controller.signal);
    } catch (err) {
      if (expired) throw expired;
      // Aborted by stop() or the watchdog: not a failure, the loop decides what comes next.
      if (!controller.signal.aborted) throw err;
    } finally {
      this.abortWatch = undefined;
    }
    if (expired) throw expired;
    return sawEvents;
  }

  private apply(type: string, obj: T): void {
    const key = objectKey(obj);
    const old = this.store.get(key);
    if (type === 'DELETED') {
      this.store.delete(key);
      for (const h of this.handlers) h.deleted(old ?? obj);
      return;
    }
    this.store.set(key, obj);
    this.notify(old, obj);
  }

  private notify(old: T | undefined, obj: T): void {
    if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) return;
    for (const h of this.handlers) {
      if (old) h.updated(old, obj);
      else h.added(obj);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const handle = this.opts.timers.set(ms, () => {
        this.wake = undefined;
        resolve();
      });
      this.wake = () => {
        this.opts.timers.clear(handle);
        this.wake = undefined;
        resolve();
      };
    });
  }
}
