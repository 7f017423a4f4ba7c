// The counters the slot audit compares with, summed over every operator process a test ran, the
// exited ones included: each process (identity + pid) is scraped every 250 ms and its last values are
// kept after it exits. A replica stopped or SIGKILLed therefore still contributes what it had counted
// at its last scrape; only what it counted in its last ≤ 250 ms is lost (the tests stop leaders in a
// steady state, when they count nothing, and say so).
import type { OperatorProcess } from '../../cluster/operator-process.js';

/**
 * The per-schedule count of missed slots the failure tests compare with the slots without a Job,
 * schedule by schedule (issue 32): a counter per process, labelled {namespace, name} (any other
 * label, e.g. reason, is summed over). The operator does not export it yet: until it does, every
 * per-schedule comparison fails with a message that says so (slot-audit.ts perScheduleProblems).
 */
export const PER_SCHEDULE_MISSED = 'secondcron_schedule_missed_slots_total';

export interface Counts {
  /** Σ secondcron_triggers_missed_total over every reason. */
  missed: number;
  /** secondcron_jobs_created_total{result="already_exists"}. */
  alreadyExists: number;
  /** Σ PER_SCHEDULE_MISSED by "namespace/name". */
  missedBySchedule: Record<string, number>;
  /** Whether any process scraped exported PER_SCHEDULE_MISSED (its TYPE line). */
  perScheduleExported: boolean;
}

function label(line: string, key: string): string | undefined {
  const m = new RegExp(`[{,]${key}="((?:[^"\\\\]|\\\\.)*)"`).exec(line);
  return m ? (m[1] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c)) : undefined;
}

export function parseCounts(metricsText: string): Counts {
  let missed = 0;
  let alreadyExists = 0;
  let perScheduleExported = false;
  const missedBySchedule: Record<string, number> = {};
  for (const line of metricsText.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('secondcron_triggers_missed_total{')) missed += value;
    else if (line.startsWith('secondcron_jobs_created_total{') && line.includes('result="already_exists"')) alreadyExists += value;
    else if (line.startsWith(`# TYPE ${PER_SCHEDULE_MISSED} `)) perScheduleExported = true;
    else if (line.startsWith(`${PER_SCHEDULE_MISSED}{`)) {
      const key = `${label(line, 'namespace') ?? ''}/${label(line, 'name') ?? ''}`;
      missedBySchedule[key] = (missedBySchedule[key] ?? 0) + value;
    }
  }
  return { missed, alreadyExists, missedBySchedule, perScheduleExported };
}

function addBySchedule(a: Record<string, number>, b: Record<string, number>, sign: 1 | -1): Record<string, number> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + sign * v;
  return out;
}

export function minus(a: Counts, b: Counts): Counts {
  return {
    missed: a.missed - b.missed,
    alreadyExists: a.alreadyExists - b.alreadyExists,
    missedBySchedule: addBySchedule(a.missedBySchedule, b.missedBySchedule, -1),
    perScheduleExported: a.perScheduleExported && b.perScheduleExported,
  };
}

/** Counted missed slots of one schedule. */
export function missedOf(counts: Counts, namespace: string, name: string): number {
  return counts.missedBySchedule[`${namespace}/${name}`] ?? 0;
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
    let missedBySchedule: Record<string, number> = {};
    let perScheduleExported = this.last.size > 0;
    for (const c of this.last.values()) {
      missed += c.missed;
      alreadyExists += c.alreadyExists;
      missedBySchedule = addBySchedule(missedBySchedule, c.missedBySchedule, 1);
      perScheduleExported &&= c.perScheduleExported;
    }
    return { missed, alreadyExists, missedBySchedule, perScheduleExported };
  }
}

/** The per-schedule counts of one namespace's schedules, keyed by schedule name (for slot-audit.ts perScheduleProblems). */
export function countedInNamespace(counts: Counts, namespace: string): { exported: boolean; bySchedule: Record<string, number> } {
  const bySchedule: Record<string, number> = {};
  for (const [key, v] of Object.entries(counts.missedBySchedule)) {
    if (key.startsWith(`${namespace}/`)) bySchedule[key.slice(namespace.length + 1)] = v;
  }
  return { exported: counts.perScheduleExported, bySchedule };
}
