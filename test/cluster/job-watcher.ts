// An independent observer of the Jobs secondcron creates: every Job with its slot (from the
// scheduled-at annotation), the moment its first watch event arrived here, and the moments it was
// first seen finished or being deleted. Used by HA tests, the demo
// and the benchmark, so latency and duplicates are measured outside the operator's own metrics.
import { KubeConfig, Watch } from '@kubernetes/client-node';

export interface SeenJob {
  namespace: string;
  name: string;
  uid: string;
  /** The SecondCronJob (label value). */
  owner: string;
  slotMs: number;
  arrivedMs: number;
  /** When an event first showed its deletion accepted (deletionTimestamp set, or DELETED). */
  deletingMs?: number;
  /** When an event first showed it no longer active: finished (Complete/Failed), being deleted or gone. */
  inactiveMs?: number;
  /**
   * The resourceVersion (etcd revision) of the first event seen: its creation's, when the watch was
   * running then. Revisions order writes on the API server itself, free of any client's clock or lag.
   */
  firstRv: number;
  /** The revision at which it was first seen finished (Complete/Failed) or gone (DELETED); being deleted does not end it. */
  endedRv?: number;
}

interface WatchedJob {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  status?: { conditions?: { type: string; status: string }[] };
}

function finished(job: WatchedJob): boolean {
  return (job.status?.conditions ?? []).some((c) => c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed'));
}

export interface JobWatcherOptions {
  kubeconfigPath: string;
  /** Watch one namespace, or all. */
  namespace?: string;
  /** Extra label selector; the owner label is always required. */
  labelSelector?: string;
  /** Defaults to the label secondcron.io/secondcronjob and annotation secondcron.io/scheduled-at. */
  ownerLabel?: string;
  slotAnnotation?: string;
  now?: () => number;
}

export class JobWatcher {
  readonly seen: SeenJob[] = [];
  private readonly byUid = new Map<string, SeenJob>();
  private abort: AbortController | undefined;
  private stopped = false;
  private resourceVersion = '';
  private readonly watch: Watch;
  /** Times the watch had to be resumed (network errors, apiserver restarts). */
  reconnects = 0;

  constructor(private readonly opts: JobWatcherOptions) {
    const kc = new KubeConfig();
    kc.loadFromFile(opts.kubeconfigPath);
    this.watch = new Watch(kc);
  }

  /** Resolves once the watch is established (events after this moment are all seen). */
  async start(): Promise<this> {
    await this.connect();
    return this;
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }

  /** Jobs per (owner, slot) seen more than once with different uids: duplicates. */
  duplicates(): SeenJob[][] {
    const bySlot = new Map<string, SeenJob[]>();
    for (const j of this.seen) {
      const key = `${j.namespace}/${j.owner}@${j.slotMs}`;
      bySlot.set(key, [...(bySlot.get(key) ?? []), j]);
    }
    return [...bySlot.values()].filter((list) => list.length > 1);
  }

  slotsOf(owner: string): number[] {
    return this.seen.filter((j) => j.owner === owner).map((j) => j.slotMs).sort((a, b) => a - b);
  }

  private async connect(): Promise<void> {
    const ownerLabel = this.opts.ownerLabel ?? 'secondcron.io/secondcronjob';
    const slotAnnotation = this.opts.slotAnnotation ?? 'secondcron.io/scheduled-at';
    const now = this.opts.now ?? Date.now;
    const path = this.opts.namespace ? `/apis/batch/v1/namespaces/${this.opts.namespace}/jobs` : '/apis/batch/v1/jobs';
    const selector = [ownerLabel, this.opts.labelSelector].filter(Boolean).join(',');
    this.abort = await this.watch.watch(
      path,
      { labelSelector: selector, allowWatchBookmarks: true, ...(this.resourceVersion ? { resourceVersion: this.resourceVersion } : {}) },
      (type: string, obj: WatchedJob) => {
        const arrivedMs = now();
        if (type === 'ERROR') {
          this.resourceVersion = ''; // 410 Gone: replay from a fresh list; uids dedupe the replay
          return;
        }
        if (obj?.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
        if (type === 'BOOKMARK' || !obj?.metadata?.uid) return;
        let job = this.byUid.get(obj.metadata.uid);
        if (!job) {
          job = {
            namespace: obj.metadata.namespace,
            name: obj.metadata.name,
            uid: obj.metadata.uid,
            owner: obj.metadata.labels?.[ownerLabel] ?? '',
            slotMs: Date.parse(obj.metadata.annotations?.[slotAnnotation] ?? ''),
            arrivedMs,
            firstRv: Number(obj.metadata.resourceVersion),
          };
          this.byUid.set(obj.metadata.uid, job);
          this.seen.push(job);
        }
        if (job.deletingMs === undefined && (type === 'DELETED' || obj.metadata.deletionTimestamp)) job.deletingMs = arrivedMs;
        if (job.inactiveMs === undefined && (job.deletingMs !== undefined || finished(obj))) job.inactiveMs = arrivedMs;
        if (job.endedRv === undefined && (type === 'DELETED' || finished(obj))) job.endedRv = Number(obj.metadata.resourceVersion);
      },
      () => {
        if (this.stopped) return;
        this.reconnects++;
        // Resume from the last resourceVersion (the initial list replays as ADDED; uids dedupe it).
        setTimeout(() => void this.connect().catch(() => this.retryLater()), 200);
      },
    );
  }

  private retryLater(): void {
    if (this.stopped) return;
    this.reconnects++;
    setTimeout(() => void this.connect().catch(() => this.retryLater()), 500);
  }
}
