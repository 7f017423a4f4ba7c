// The counters the slot audit compares with, summed over every operator process a test ran, the
// exited ones included: each process (identity + pid) is scraped every 250 ms and its last values are
// kept after it exits. A replica stopped or SIGKILLed therefore still contributes what it had counted
// at its last scrape; only what it counted in its last ≤ 250 ms is lost (the tests stop leaders in a
// steady state, when they count nothing, and say so).
import type { OperatorProcess } from '../../cluster/operator-process.js';

export interface Counts {
  /** Σ secondcron_triggers_missed_total over every reason. */
  missed: number;
  /** secondcron_jobs_created_total{result="already_exists"}. */
  alreadyExists: number;
}

export function parseCounts(metricsText: string): Counts {
  let missed = 0;
  let alreadyExists = 0;
  for (const line of metricsText.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('secondcron_triggers_missed_total{')) missed += value;
    else if (line.startsWith('secondcron_jobs_created_total{') && line.includes('result="already_exists"')) alreadyExists += value;
  }
  return { missed, alreadyExists };
}

export function minus(a: Counts, b: Counts): Counts {
  return { missed: a.missed - b.missed, alreadyExists: a.alreadyExists - b.alreadyExists };
}

export class ReplicaCounters {
  private readonly last = new Map<string, Counts>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();

  /** `replicas` is read at every scrape, so replicas a test adds or restarts are followed. */
  constructor(private readonly replicas: () => readonly OperatorProcess[], private readonly intervalMs = 250) {}

  start(): this {
    const tick = (): void => {
      this.polling = this.scrape().finally(() => {
        if (this.timer) this.timer = setTimeout(tick, this.intervalMs);
      });
    };
    this.timer = setTimeout(tick, 0);
    return this;
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.polling;
  }

  /** Scrapes every running replica now; a replica that cannot answer keeps its last values. */
  async scrape(): Promise<void> {
    await Promise.all(
      this.replicas().map(async (op) => {
        if (!op.running || op.pid === undefined) return;
        const key = `${op.identity ?? ''}#${op.pid}`;
        const text = await op.metrics().catch(() => undefined);
        if (text !== undefined) this.last.set(key, parseCounts(text));
      }),
    );
  }

  /** Scrapes now, then sums the last values of every process ever scraped. */
  async total(): Promise<Counts> {
    await this.scrape();
    let missed = 0;
    let alreadyExists = 0;
    for (const c of this.last.values()) {
      missed += c.missed;
      alreadyExists += c.alreadyExists;
    }
    return { missed, alreadyExists };
  }
}
