// A Job's trigger latency split at the API server's door, from its audit log (issue 36): the
// client's share = the create's requestReceivedTimestamp − the Job's slot (timer, queue, plan, token
// bucket, client, connection: everything before the server had the request), and the server's share
// = the independent watcher's arrival − requestReceivedTimestamp (admission, etcd, the watch cache,
// the watch). Neither comes from the operator's own timestamps. The same split for the floor client,
// whose "slot" is the whole second it released its batch on.
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

import { type Summary, summarize } from './stats.js';

/** A Job as the bench timed it: when it was due, and when the watcher saw it. */
export interface TimedJob {
  namespace: string;
  name: string;
  dueMs: number;
  arrivedMs: number;
}

type Brief = Pick<Summary, 'p50_ms' | 'p99_ms' | 'max_ms'>;

export interface LatencySplit {
  /** Jobs split (their 201 create found in the audit log). */
  jobs: number;
  /** Jobs the watcher saw whose create is not in the audit log (0 unless the log is incomplete). */
  unmatched: number;
  /** Due → the API server received the create (the operator's, or the floor client's, share), ms. */
  client: Brief;
  /** The API server received the create → the watcher saw the Job, ms. */
  server: Brief;
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  requestURI?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
}

/** RFC 3339 with µs (the audit log's) to epoch ms, keeping the fraction Date.parse would drop. */
export function preciseMs(ts: string): number {
  const m = /^(.*T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(ts);
  if (!m) return Date.parse(ts);
  return Date.parse(`${m[1]}${m[3]}`) + (m[2] ? Number(m[2]) * 1000 : 0);
}

/** When the API server received each successful, non-dry-run Job create in `namespaces`, by "namespace/name". */
export async function auditedJobCreates(path: string, namespaces: ReadonlySet<string>): Promise<Map<string, number>> {
  if (!existsSync(path)) throw new Error(`no audit log at ${path}`);
  const out = new Map<string, number>();
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.includes('"verb":"create"') || !line.includes('"resource":"jobs"')) continue; // most lines are something else
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue; // a line cut short at the end of a file still being written
    }
    const ref = e.objectRef;
    if (e.stage !== 'ResponseComplete' || e.responseStatus?.code !== 201 || ref?.subresource || !ref?.name || !ref.namespace) continue;
    if (!namespaces.has(ref.namespace) || /[?&]dryRun=/.test(e.requestURI ?? '') || !e.requestReceivedTimestamp) continue;
    out.set(`${ref.namespace}/${ref.name}`, preciseMs(e.requestReceivedTimestamp));
  }
  return out;
}

const brief = (s: Summary): Brief => ({ p50_ms: s.p50_ms, p99_ms: s.p99_ms, max_ms: s.max_ms });

/** The split, and every Job's client share (for the chart). */
export interface SplitMeasured {
  split: LatencySplit;
  clientMs: number[];
}

/** The split of every job; null without an audit log. */
export async function splitLatency(auditLogPath: string | undefined, jobs: readonly TimedJob[]): Promise<SplitMeasured | null> {
  if (!auditLogPath) return null;
  const received = await auditedJobCreates(auditLogPath, new Set(jobs.map((j) => j.namespace)));
  return splitFrom(received, jobs);
}

/** Pure: the split from the received times already read. */
export function splitFrom(received: ReadonlyMap<string, number>, jobs: readonly TimedJob[]): SplitMeasured {
  const client: number[] = [];
  const server: number[] = [];
  for (const j of jobs) {
    const at = received.get(`${j.namespace}/${j.name}`);
    if (at === undefined) continue;
    client.push(at - j.dueMs);
    server.push(j.arrivedMs - at);
  }
  return { split: { jobs: client.length, unmatched: jobs.length - client.length, client: brief(summarize(client)), server: brief(summarize(server)) }, clientMs: client };
}

/** "<who> p50 / p99 / max ms; server p50 / p99 / max ms (N Jobs)" for the log and the table. */
export function describeSplit(s: LatencySplit | null | undefined, who = 'client'): string {
  if (!s) return 'n/a (no audit log)';
  const b = (x: Brief): string => `${x.p50_ms ?? 'n/a'} / ${x.p99_ms ?? 'n/a'} / ${x.max_ms ?? 'n/a'} ms`;
  return `${who} ${b(s.client)}; server ${b(s.server)} (${s.jobs} Jobs${s.unmatched ? `, ${s.unmatched} without an audited create` : ''})`;
}
