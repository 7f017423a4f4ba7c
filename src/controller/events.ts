// Kubernetes Events about SecondCronJobs. Best effort and never on the hot path: a small queue that
// yields to Job creates, repeats of the same reason+message within ten minutes bump the count of one
// Event (as client-go's aggregator does), and when the API is slow Events are dropped rather than
// delaying Jobs. client-go's spam filter applies too (EventAllowance): a 1 s schedule would otherwise
// write an Event per Job, doubling the API server's load.
import pLimit from 'p-limit';

import type { WallClock } from '../clock/clock.js';
import type { Logger } from '../log.js';
import type { RestClient } from '../kube/rest.js';
import type { KubeObject } from '../kube/types.js';
import { EventAllowance } from './event-allowance.js';
import type { WritePriority } from './write-priority.js';

export type EventType = 'Normal' | 'Warning';

export interface EventSink {
  record(obj: KubeObject, type: EventType, reason: string, message: string): void;
}

interface Seen {
  name: string;
  count: number;
  firstTimestamp: string;
  lastMs: number;
}

const AGGREGATE_WINDOW_MS = 10 * 60_000;
const MAX_PENDING = 500;

export class EventRecorder implements EventSink {
  private readonly limit = pLimit(2);
  private readonly seen = new Map<string, Seen>();
  private readonly allowance: EventAllowance;
  private sequence = 0;

  constructor(
    private readonly rest: RestClient,
    private readonly wall: WallClock,
    private readonly log: Logger,
    private readonly instance: string,
    private readonly priority: WritePriority,
    /** Called for every Event not written (spam filter or full queue). */
    private readonly onDropped: () => void = () => {},
  ) {
    this.allowance = new EventAllowance(wall);
  }

  record(obj: KubeObject, type: EventType, reason: string, message: string): void {
    if (this.limit.pendingCount >= MAX_PENDING || !this.allowance.take(obj.metadata.uid, type)) {
      this.onDropped();
      return;
    }
    void this.limit(() => this.write(obj, type, reason, message)).catch((err: unknown) =>
      this.log.debug('event not recorded', { reason, err }),
    );
  }

  private async write(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    await this.priority.calm();
    const now = this.wall.nowMs();
    const ns = obj.metadata.namespace ?? 'default';
    const key = `${obj.metadata.uid}\u0000${type}\u0000${reason}\u0000${message}`;
    const nowIso = new Date(now).toISOString();
    const prev = this.seen.get(key);
    if (prev && now - prev.lastMs < AGGREGATE_WINDOW_MS) {
      prev.count++;
      prev.lastMs = now;
      await this.rest.request({
        verb: 'patch',
        path: `/api/v1/namespaces/${ns}/events/${prev.name}`,
        body: { count: prev.count, lastTimestamp: nowIso },
        patchType: 'merge',
        timeoutMs: 5_000,
        metadataOnly: true,
      });
      return;
    }
    this.prune(now);
    const name = `${obj.metadata.name}.${now.toString(16)}${(this.sequence++ % 4096).toString(16).padStart(3, '0')}`;
    await this.rest.request({
      verb: 'create',
      path: `/api/v1/namespaces/${ns}/events`,
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace: ns },
        involvedObject: {
          apiVersion: obj.apiVersion,
          kind: obj.kind,
          name: obj.metadata.name,
          namespace: ns,
          uid: obj.metadata.uid,
          resourceVersion: obj.metadata.resourceVersion,
        },
        type,
        reason,
        message,
        count: 1,
        firstTimestamp: nowIso,
        lastTimestamp: nowIso,
        source: { component: 'secondcron' },
        reportingComponent: 'secondcron.io/operator',
        reportingInstance: this.instance,
      },
      timeoutMs: 5_000,
      metadataOnly: true,
    });
    this.seen.set(key, { name, count: 1, firstTimestamp: nowIso, lastMs: now });
  }

  private prune(now: number): void {
    if (this.seen.size < 10_000) return;
    for (const [k, v] of this.seen) if (now - v.lastMs >= AGGREGATE_WINDOW_MS) this.seen.delete(k);
  }
}
