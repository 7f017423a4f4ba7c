// Watches the SecondCronJobs of one namespace from outside the operator, to time when the operator
// has written what it writes to every resource it adopts: the finalizer and a status with a Ready
// condition.
import { KubeConfig, Watch } from '@kubernetes/client-node';

import { FINALIZER } from '../../src/api/resources.js';

interface WatchedScj {
  metadata: { name: string; finalizers?: string[] };
  status?: { conditions?: Array<{ type: string }> };
}

export class ScjWriteWatcher {
  private readonly finalized = new Set<string>();
  private readonly withStatus = new Set<string>();
  private abort: AbortController | undefined;
  private stopped = false;

  constructor(private readonly kubeconfigPath: string, private readonly namespace: string) {}

  async start(): Promise<this> {
    const kc = new KubeConfig();
    kc.loadFromFile(this.kubeconfigPath);
    const connect = async (): Promise<void> => {
      // No resourceVersion: every resource arrives as ADDED first, then its updates.
      this.abort = await new Watch(kc).watch(
        `/apis/secondcron.io/v1/namespaces/${this.namespace}/secondcronjobs`,
        {},
        (type: string, obj: WatchedScj) => {
          if (type !== 'ADDED' && type !== 'MODIFIED') return;
          const name = obj.metadata.name;
          if (obj.metadata.finalizers?.includes(FINALIZER)) this.finalized.add(name);
          if (obj.status?.conditions?.some((c) => c.type === 'Ready')) this.withStatus.add(name);
        },
        () => {
          if (!this.stopped) setTimeout(() => void connect().catch(() => undefined), 500);
        },
      );
    };
    await connect();
    return this;
  }

  /** Resources with our finalizer, and with a Ready condition in their status. */
  counts(): { finalizers: number; status: number } {
    return { finalizers: this.finalized.size, status: this.withStatus.size };
  }

  stop(): void {
    this.stopped = true;
    this.abort?.abort();
  }
}
