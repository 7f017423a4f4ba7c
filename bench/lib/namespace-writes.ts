// What the operator changed in one namespace, seen from outside it: every change to a SecondCronJob
// (finalizers, status, anything else), every Job deleted, every Event secondcron wrote (created or
// bumped) and every change of the leader Lease, each with the moment its watch event arrived here.
// The failover scenario attributes a new leader's write requests (its own counters) to objects with
// these. A write that changes nothing (a no-op patch) makes no watch event: only the counters see it.
import { KubeConfig, Watch } from '@kubernetes/client-node';

import { FINALIZER } from '../../src/api/resources.js';

export type ScjChange = 'finalizer' | 'status' | 'other';

export interface Change {
  /** The SecondCronJob (for a Job: its owner label; for an Event: the object it is about). */
  name: string;
  arrivedMs: number;
}

export interface LeaseChange {
  holder: string;
  arrivedMs: number;
}

interface Meta {
  name: string;
  resourceVersion: string;
  labels?: Record<string, string>;
  finalizers?: string[];
}

interface WatchedScj {
  metadata: Meta;
  status?: unknown;
}

interface WatchedEvent {
  metadata: Meta;
  involvedObject?: { kind?: string; name?: string };
  source?: { component?: string };
}

interface WatchedLease {
  metadata: Meta;
  spec?: { holderIdentity?: string };
}

const OWNER_LABEL = 'secondcron.io/secondcronjob';
/** events.ts: `source.component` of every Event the operator writes. */
const EVENT_SOURCE = 'secondcron';

export class NamespaceWrites {
  readonly scjChanges = new Map<ScjChange, Change[]>([['finalizer', []], ['status', []], ['other', []]]);
  readonly jobDeletes: Change[] = [];
  readonly events: Change[] = [];
  readonly lease: LeaseChange[] = [];
  /** The last finalizers+status seen per SecondCronJob, to tell what a MODIFIED event changed. */
  private readonly last = new Map<string, { finalized: boolean; finalizers: string; status: string }>();
  private readonly aborts: AbortController[] = [];
  private stopped = false;

  constructor(private readonly kubeconfigPath: string, private readonly namespace: string, private readonly leaseName: string) {}

  /** Resolves once every watch is established: later changes are all seen. */
  async start(): Promise<this> {
    const ns = this.namespace;
    await Promise.all([
      this.follow<WatchedScj>(`/apis/secondcron.io/v1/namespaces/${ns}/secondcronjobs`, {}, (type, o, at) => this.scj(type, o, at)),
      this.follow<WatchedScj>(`/apis/batch/v1/namespaces/${ns}/jobs`, { labelSelector: OWNER_LABEL }, (type, o, at) => {
        if (type === 'DELETED') this.jobDeletes.push({ name: o.metadata.labels?.[OWNER_LABEL] ?? '', arrivedMs: at });
      }),
      this.follow<WatchedEvent>(`/api/v1/namespaces/${ns}/events`, {}, (type, o, at) => {
        if ((type === 'ADDED' || type === 'MODIFIED') && o.source?.component === EVENT_SOURCE) this.events.push({ name: o.involvedObject?.name ?? '', arrivedMs: at });
      }),
      this.follow<WatchedLease>(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, { fieldSelector: `metadata.name=${this.leaseName}` }, (type, o, at) => {
        const holder = o.spec?.holderIdentity ?? '';
        if (type !== 'DELETED' && this.lease[this.lease.length - 1]?.holder !== holder) this.lease.push({ holder, arrivedMs: at });
      }),
    ]);
    return this;
  }

  stop(): void {
    this.stopped = true;
    for (const a of this.aborts) a.abort();
  }

  /** SecondCronJobs with our finalizer, and with a status (the start-up writes every resource gets). */
  counts(): { finalizers: number; status: number } {
    let finalizers = 0;
    let status = 0;
    for (const v of this.last.values()) {
      if (v.finalized) finalizers++;
      if (v.status !== '') status++;
    }
    return { finalizers, status };
  }

  /** The Lease holder as last seen ('' = released or none yet). */
  holder(): string {
    return this.lease[this.lease.length - 1]?.holder ?? '';
  }

  private scj(type: string, o: WatchedScj, arrivedMs: number): void {
    const name = o.metadata.name;
    if (type === 'DELETED') {
      this.last.delete(name);
      return;
    }
    const now = { finalized: o.metadata.finalizers?.includes(FINALIZER) ?? false, finalizers: JSON.stringify(o.metadata.finalizers ?? []), status: o.status ? JSON.stringify(o.status) : '' };
    const before = this.last.get(name);
    this.last.set(name, now);
    if (type !== 'MODIFIED' || !before) return;
    const change: ScjChange = before.finalizers !== now.finalizers ? 'finalizer' : before.status !== now.status ? 'status' : 'other';
    this.scjChanges.get(change)?.push({ name, arrivedMs });
  }

  /**
   * Watches `path` from a fresh list (existing objects arrive as ADDED), resuming from the last
   * resourceVersion after a dropped connection.
   */
  private async follow<T extends { metadata: Meta }>(path: string, query: Record<string, string>, on: (type: string, obj: T, arrivedMs: number) => void): Promise<void> {
    const kc = new KubeConfig();
    kc.loadFromFile(this.kubeconfigPath);
    let resourceVersion = '';
    const connect = async (): Promise<void> => {
      const abort = await new Watch(kc).watch(
        path,
        { ...query, ...(resourceVersion ? { resourceVersion } : {}) },
        (type: string, obj: T) => {
          const arrivedMs = Date.now();
          if (type === 'ERROR') {
            resourceVersion = ''; // 410 Gone: a fresh list; replayed ADDED events change nothing above
            return;
          }
          if (obj?.metadata?.resourceVersion) resourceVersion = obj.metadata.resourceVersion;
          if (type !== 'BOOKMARK') on(type, obj, arrivedMs);
        },
        () => reconnect(),
      );
      this.aborts.push(abort);
    };
    const reconnect = (): void => {
      if (!this.stopped) setTimeout(() => void connect().catch(reconnect), 500);
    };
    await connect();
  }
}
