// Kubernetes Events about SecondCronJobs. Best effort and never on the hot path: a small queue that
// yields to Job creates, and when the API is slow Events are dropped rather than delaying Jobs.
//
// Repeats are a series, as in client-go's events library: the first Event of an (object, type,
// reason) creates an Event; repeats within ten minutes only count in memory, and the Event's count,
// lastTimestamp and latest message are written at most once per SERIES_UPDATE_MS. Messages that
// differ are combined as client-go's aggregator does ("(combined from similar events): …"). A 1 s
// schedule says "Created job …" and "Deleted job …" every second: one Event per Job was 1–2 extra
// API requests per Job (the steady bench: 298 creates/s for 100 Jobs/s); as a series it is two
// writes a minute per schedule. client-go's spam filter (EventAllowance) still bounds every write.
import pLimit from 'p-limit';

import type { TimerHandle, Timers, WallClock } from '../clock/clock.js';
import { isNotFound } from '../kube/api-error.js';
import type { RestClient } from '../kube/rest.js';
import type { KubeObject } from '../kube/types.js';
import type { Logger } from '../log.js';
import { EventAllowance } from './event-allowance.js';
import type { WritePriority } from './write-priority.js';

export type EventType = 'Normal' | 'Warning';

export interface EventSink {
  record(obj: KubeObject, type: EventType, reason: string, message: string): void;
}

export interface EventRecorderOptions {
  rest: RestClient;
  wall: WallClock;
  timers: Timers;
  log: Logger;
  /** reportingInstance: this replica. */
  instance: string;
  priority: WritePriority;
  /** Called for every Event not written (spam filter or full queue). */
  onDropped?: () => void;
}

/** What an Event names of its object: a reference, not a copy (a SecondCronJob carries its whole Job template). */
interface ObjectRef {
  readonly apiVersion: string | undefined;
  readonly kind: string | undefined;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly resourceVersion: string | undefined;
}

/** One (object, type, reason) as last written and as seen since. */
interface Series {
  readonly key: string;
  readonly ref: ObjectRef;
  readonly type: EventType;
  readonly reason: string;
  /** The Event's name once its create succeeded. */
  name: string | undefined;
  firstTimestamp: string;
  firstMessage: string;
  message: string;
  count: number;
  /** count as last written to the API server. */
  writtenCount: number;
  lastSeenMs: number;
  lastWriteMs: number;
  flush: TimerHandle | undefined;
}

export const SERIES_WINDOW_MS = 10 * 60_000;
/** client-go's events library refreshes a series every 30 minutes; a minute keeps `kubectl describe` current. */
export const SERIES_UPDATE_MS = 60_000;
const MAX_PENDING = 500;
const MAX_SERIES = 10_000;

export class EventRecorder implements EventSink {
  private readonly limit = pLimit(2);
  private readonly series = new Map<string, Series>();
  private readonly allowance: EventAllowance;
  private sequence = 0;

  constructor(private readonly o: EventRecorderOptions) {
    this.allowance = new EventAllowance(o.wall);
  }

  record(obj: KubeObject, type: EventType, reason: string, message: string): void {
    const now = this.o.wall.nowMs();
    const key = `${obj.metadata.uid}\u0000${type}\u0000${reason}`;
    const s = this.series.get(key);
    if (s && now - s.lastSeenMs < SERIES_WINDOW_MS) {
      s.count++;
      s.lastSeenMs = now;
      s.message = message === s.firstMessage ? message : `(combined from similar events): ${message}`;
      if (s.name !== undefined) this.scheduleUpdate(s);
      return;
    }
    if (s?.flush !== undefined) this.o.timers.clear(s.flush);
    this.prune(now);
    const ref: ObjectRef = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      name: obj.metadata.name,
      namespace: obj.metadata.namespace ?? 'default',
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
    };
    const fresh: Series = { key, ref, type, reason, name: undefined, firstTimestamp: new Date(now).toISOString(), firstMessage: message, message, count: 1, writtenCount: 0, lastSeenMs: now, lastWriteMs: now, flush: undefined };
    this.series.set(key, fresh);
    // Dropped: the series is forgotten, so the next occurrence tries to create it again instead of
    // counting silently against an Event that was never written.
    if (!this.enqueue(() => this.create(fresh))) this.forget(fresh);
  }

  /** False when the queue is full and the write was dropped. */
  private enqueue(write: () => Promise<void>): boolean {
    if (this.limit.pendingCount >= MAX_PENDING) {
      this.o.onDropped?.();
      return false;
    }
    void this.limit(write).catch((err: unknown) => this.o.log.debug('event not recorded', { err }));
    return true;
  }

  private scheduleUpdate(s: Series): void {
    if (s.flush !== undefined) return;
    const delay = Math.max(0, s.lastWriteMs + SERIES_UPDATE_MS - this.o.wall.nowMs());
    s.flush = this.o.timers.set(delay, () => {
      s.flush = undefined;
      if (this.enqueue(() => this.update(s))) return;
      s.lastWriteMs = this.o.wall.nowMs(); // dropped: the count is written a period later
      this.scheduleUpdate(s);
    });
  }

  private async create(s: Series): Promise<void> {
    if (!this.allowance.take(s.ref.uid, s.type)) {
      this.forget(s);
      this.o.onDropped?.();
      return;
    }
    await this.o.priority.calm();
    const ns = s.ref.namespace;
    const now = this.o.wall.nowMs();
    const name = `${s.ref.name}.${now.toString(16)}${(this.sequence++ % 4096).toString(16).padStart(3, '0')}`;
    const count = s.count;
    try {
      await this.o.rest.request({
        verb: 'create',
        path: `/api/v1/namespaces/${ns}/events`,
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name, namespace: ns },
          involvedObject: s.ref,
          type: s.type,
          reason: s.reason,
          message: s.message,
          count,
          firstTimestamp: s.firstTimestamp,
          lastTimestamp: new Date(s.lastSeenMs).toISOString(),
          source: { component: 'secondcron' },
          reportingComponent: 'secondcron.io/operator',
          reportingInstance: this.o.instance,
        },
        timeoutMs: 5_000,
        discardResponse: true,
        purpose: 'event',
      });
    } catch (err) {
      this.forget(s); // the next occurrence starts a new Event
      throw err;
    }
    s.name = name;
    s.writtenCount = count;
    s.lastWriteMs = this.o.wall.nowMs();
    if (s.count > s.writtenCount) this.scheduleUpdate(s); // repeats while the create was queued
  }

  private async update(s: Series): Promise<void> {
    if (s.name === undefined || s.count === s.writtenCount || this.series.get(s.key) !== s) return;
    if (!this.allowance.take(s.ref.uid, s.type)) {
      s.lastWriteMs = this.o.wall.nowMs(); // try again a period later; the count keeps growing meanwhile
      this.scheduleUpdate(s);
      return;
    }
    await this.o.priority.calm();
    const count = s.count;
    try {
      await this.o.rest.request({
        verb: 'patch',
        path: `/api/v1/namespaces/${s.ref.namespace}/events/${s.name}`,
        body: { count, message: s.message, lastTimestamp: new Date(s.lastSeenMs).toISOString() },
        patchType: 'merge',
        timeoutMs: 5_000,
        discardResponse: true,
        purpose: 'event',
      });
    } catch (err) {
      if (isNotFound(err)) {
        this.forget(s); // the Event expired (event TTL): the next occurrence creates one
      } else {
        s.lastWriteMs = this.o.wall.nowMs();
        this.scheduleUpdate(s); // the count must still reach the API server
      }
      throw err;
    }
    s.writtenCount = count;
    s.lastWriteMs = this.o.wall.nowMs();
  }

  private forget(s: Series): void {
    if (s.flush !== undefined) this.o.timers.clear(s.flush);
    s.flush = undefined;
    if (this.series.get(s.key) === s) this.series.delete(s.key);
  }

  /** Bounded memory: series quiet for a whole window and fully written are forgotten. */
  private prune(now: number): void {
    if (this.series.size < MAX_SERIES) return;
    for (const [k, s] of this.series) {
      if (now - s.lastSeenMs >= SERIES_WINDOW_MS && s.flush === undefined && s.count === s.writtenCount) this.series.delete(k);
    }
  }
}
