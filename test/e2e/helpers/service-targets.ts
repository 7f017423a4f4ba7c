// What a ServiceMonitor does, for Debian's Prometheus (built without Kubernetes discovery): follows
// the EndpointSlices of one Service and keeps a file_sd file with one target per endpoint of the
// named port, labelled with its pod and namespace. Every endpoint counts, ready or not, terminating
// or not: a pod that is starting or draining still serves /metrics.
import { renameSync, writeFileSync } from 'node:fs';

import { kubectl } from '../../integration/helpers/cluster-env.js';

interface EndpointSlice {
  ports?: { name?: string; port?: number }[];
  endpoints?: { addresses: string[]; targetRef?: { kind: string; name: string } }[];
}

export class ServiceTargets {
  private timer: NodeJS.Timeout | undefined;
  private written = '';
  private polling = false;

  constructor(
    private readonly file: string,
    private readonly namespace: string,
    private readonly service: string,
    private readonly portName: string,
  ) {}

  /** Writes the file once, then keeps it current (every 500 ms). */
  async start(): Promise<this> {
    await this.sync();
    this.timer = setInterval(() => void this.sync(), 500);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sync(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const res = await kubectl(['get', 'endpointslices', '-n', this.namespace, '-l', `kubernetes.io/service-name=${this.service}`, '-o', 'json']);
      if (res.code !== 0) return; // The next poll retries; Prometheus keeps the last targets.
      const slices = (JSON.parse(res.stdout) as { items: EndpointSlice[] }).items;
      const groups = slices.flatMap((slice) => {
        const port = slice.ports?.find((p) => p.name === this.portName)?.port;
        if (port === undefined) return [];
        return (slice.endpoints ?? []).map((e) => ({
          targets: e.addresses.map((a) => `${a}:${port}`),
          labels: { namespace: this.namespace, pod: e.targetRef?.name ?? '' },
        }));
      });
      const text = `${JSON.stringify(groups, null, 2)}\n`;
      if (text === this.written) return;
      writeFileSync(`${this.file}.tmp`, text);
      renameSync(`${this.file}.tmp`, this.file);
      this.written = text;
    } finally {
      this.polling = false;
    }
  }
}
