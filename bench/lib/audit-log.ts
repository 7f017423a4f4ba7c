// The operator's requests counted by the API server (its audit log, test/cluster's `auditUsers`), not
// by the operator: the outsider's count beside secondcron_api_requests_total (issue 24).
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

interface AuditEvent {
  auditID: string;
  stage: string;
  verb: string;
  userAgent?: string;
  requestReceivedTimestamp: string;
  stageTimestamp?: string;
  requestURI?: string;
  objectRef?: { resource?: string; subresource?: string };
}

export interface AuditedRequests {
  total: number;
  /** By "verb resource[/subresource]", e.g. "create jobs", "patch secondcronjobs/status", "create jobs (dry run)". */
  by: Record<string, number>;
  /** The same keys: mean time the server took (ResponseComplete's stageTimestamp − requestReceivedTimestamp), ms; watches left out. */
  server_ms_mean: Record<string, number>;
}

/**
 * Requests whose user agent contains `agent` and that the server received in [fromMs, toMs), each
 * counted once (a watch logs ResponseStarted and, when it ends, ResponseComplete).
 */
export async function auditedRequests(path: string, agent: string, fromMs: number, toMs: number): Promise<AuditedRequests> {
  if (!existsSync(path)) throw new Error(`no audit log at ${path}`);
  const seen = new Set<string>();
  const by: Record<string, number> = {};
  const serverMs: Record<string, number> = {};
  const timed: Record<string, number> = {};
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.includes(agent)) continue;
    const e = JSON.parse(line) as AuditEvent;
    if (!e.userAgent?.includes(agent) || seen.has(e.auditID)) continue;
    const at = Date.parse(e.requestReceivedTimestamp);
    if (at < fromMs || at >= toMs) continue;
    seen.add(e.auditID);
    const resource = e.objectRef?.resource ? `${e.objectRef.resource}${e.objectRef.subresource ? '/' + e.objectRef.subresource : ''}` : 'other';
    const key = `${e.verb} ${resource}${/[?&]dryRun=/.test(e.requestURI ?? '') ? ' (dry run)' : ''}`;
    by[key] = (by[key] ?? 0) + 1;
    if (e.stage === 'ResponseComplete' && e.verb !== 'watch' && e.stageTimestamp) {
      serverMs[key] = (serverMs[key] ?? 0) + Date.parse(e.stageTimestamp) - at;
      timed[key] = (timed[key] ?? 0) + 1;
    }
  }
  const server_ms_mean: Record<string, number> = {};
  for (const [k, total] of Object.entries(serverMs)) server_ms_mean[k] = Math.round((total / (timed[k] ?? 1)) * 10) / 10;
  return { total: seen.size, by, server_ms_mean };
}
