// Job creates and deletes as the API server saw them, from its audit log (the shared integration
// cluster writes one for Job writes: test/cluster/run-integration.ts, `auditJobWrites`): outside
// evidence of duplicates that does not depend on the operator's own counters, on a watcher seeing
// two uids, or on history limits keeping a Job long enough to be seen twice. A second 201 for one
// Job name is a slot that ran twice (the name is a function of the slot, DESIGN §3 "Job identity");
// a 409 is a second decision for a slot that a test must have provoked on purpose.
//
// Parsing and judging are pure (test/unit/harness/audit-creates.test.ts); reading the file is not.
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** One Job create or delete, as its ResponseComplete audit event tells it. */
export interface AuditedJobWrite {
  auditID: string;
  verb: 'create' | 'delete';
  namespace: string;
  /** The Job's name (for a create: from the request's object). */
  name: string;
  /** The status code the client got. */
  code: number;
  user: string;
  userAgent: string;
  /** When the API server received the request (requestReceivedTimestamp, µs precision). */
  receivedMs: number;
  /** When it answered (stageTimestamp of ResponseComplete). */
  answeredMs: number;
}

interface AuditEvent {
  auditID?: string;
  stage?: string;
  verb?: string;
  requestURI?: string;
  user?: { username?: string };
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
}

/** Parses audit log lines (JSON lines); keeps the completed, non-dry-run creates and deletes of batch Jobs, in the log's order. */
export function parseAuditJobWrites(text: string): AuditedJobWrite[] {
  return parseAuditJobRequests(text, ['create', 'delete'] as const);
}

/**
 * One read of a Job by name (get), as its ResponseComplete audit event tells it. The shared cluster
 * audits every request of the operators' ServiceAccount (test/cluster/run-integration.ts,
 * `auditUsers`), reads included; other users' reads are not audited.
 */
export interface AuditedJobRead extends Omit<AuditedJobWrite, 'verb'> {
  verb: 'get';
}

/** Parses audit log lines; keeps the completed reads of one batch Job by name (get), in the log's order. */
export function parseAuditJobReads(text: string): AuditedJobRead[] {
  return parseAuditJobRequests(text, ['get'] as const).filter((r) => r.name !== '');
}

function parseAuditJobRequests<V extends string>(text: string, verbs: readonly V[]): (Omit<AuditedJobWrite, 'verb'> & { verb: V })[] {
  const out: (Omit<AuditedJobWrite, 'verb'> & { verb: V })[] = [];
  const isVerb = (v: string | undefined): v is V => v !== undefined && (verbs as readonly string[]).includes(v);
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.includes('"jobs"')) continue; // cheap: most lines of a busy log are something else
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue; // a line cut short at the end of a file still being written
    }
    const verb = e.verb;
    if (e.stage !== 'ResponseComplete' || !isVerb(verb)) continue;
    const ref = e.objectRef;
    if (ref?.resource !== 'jobs' || ref.apiGroup !== 'batch' || ref.subresource) continue;
    if (isDryRun(e.requestURI ?? '')) continue;
    const id = e.auditID ?? '';
    if (id && seen.has(id)) continue;
    seen.add(id);
    out.push({
      auditID: id,
      verb,
      namespace: ref.namespace ?? '',
      name: ref.name ?? '',
      code: e.responseStatus?.code ?? 0,
      user: e.user?.username ?? '',
      userAgent: e.userAgent ?? '',
      receivedMs: Date.parse(e.requestReceivedTimestamp ?? ''),
      answeredMs: Date.parse(e.stageTimestamp ?? ''),
    });
  }
  return out;
}

function isDryRun(requestURI: string): boolean {
  const q = requestURI.indexOf('?');
  if (q < 0) return false;
  return new URLSearchParams(requestURI.slice(q + 1)).getAll('dryRun').some((v) => v !== '');
}

export interface JobWriteFilter {
  namespace: string;
  /** Only writes of this user (default: any). */
  user?: string;
  /** Only writes whose User-Agent starts with this (default "secondcron/": the operator's, not kubectl's). */
  userAgentPrefix?: string;
  /** Only Jobs of these SecondCronJobs: the name is `<scj>-<slot unix seconds>`. */
  owners?: readonly string[];
  /** Only requests received in [fromMs, toMs). */
  fromMs?: number;
  toMs?: number;
}

/** The Job name's SecondCronJob, or undefined when it is not `<scj>-<digits>`. */
export function ownerOfJobName(name: string): string | undefined {
  const m = /^(.+)-(\d+)$/.exec(name);
  return m ? m[1] : undefined;
}

/** The Job name's slot (epoch ms), or NaN. */
export function slotOfJobName(name: string): number {
  const m = /-(\d+)$/.exec(name);
  return m ? Number(m[1]) * 1000 : Number.NaN;
}

// A create on the wire when the server froze, given up by the client and retried for its own slot
// (an unknown outcome), may meet the Job the first one stored after the thaw: that 409 the freeze
// provoked. A second 201 is never allowed, nor a 409 for any other slot.
export function onTheWireDuringFreeze(frozenMs: number, thawedMs: number): (jobName: string) => boolean {
  return (jobName) => {
    const slot = slotOfJobName(jobName);
    return slot >= frozenMs - 2_000 && slot <= thawedMs;
  };
}

export function selectJobWrites<W extends Omit<AuditedJobWrite, 'verb'>>(writes: readonly W[], f: JobWriteFilter): W[] {
  const agent = f.userAgentPrefix ?? 'secondcron/';
  return writes.filter(
    (w) =>
      w.namespace === f.namespace &&
      (f.user === undefined || w.user === f.user) &&
      w.userAgent.startsWith(agent) &&
      (f.owners === undefined || f.owners.includes(ownerOfJobName(w.name) ?? '')) &&
      (f.fromMs === undefined || w.receivedMs >= f.fromMs) &&
      (f.toMs === undefined || w.receivedMs < f.toMs),
  );
}

/** Per Job name, the codes of its creates in the order the API server received them. */
export function createCodesByName(writes: readonly AuditedJobWrite[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  const creates = writes.filter((w) => w.verb === 'create').sort((a, b) => a.receivedMs - b.receivedMs);
  for (const c of creates) out.set(c.name, [...(out.get(c.name) ?? []), c.code]);
  return out;
}

/**
 * The Job names the API server stored: a 201 create, or a create whose answer left the outcome open
 * (a 5xx such as the API server's own 504 after a freeze: it may have stored the Job after all) that
 * a later delete of the same name found (2xx; a name never stored is answered 404). The operator
 * deletes only Jobs its cache showed, so this is the server's word, not the operator's.
 */
export function storedJobNames(writes: readonly AuditedJobWrite[]): Set<string> {
  const stored = new Set(writes.filter((w) => w.verb === 'create' && w.code === 201).map((w) => w.name));
  const unknown = new Set(writes.filter((w) => w.verb === 'create' && w.code >= 500).map((w) => w.name));
  for (const w of writes) if (w.verb === 'delete' && w.code >= 200 && w.code < 300 && unknown.has(w.name)) stored.add(w.name);
  return stored;
}

export interface CreateExpectations {
  /** Job names whose 409 the test provoked (e.g. it created the Job itself first); any other 409 is a problem. */
  allow409?: (name: string) => boolean;
}

/**
 * What is wrong with the creates: a name created (201) more than once, a 409 the test did not
 * provoke. [] when nothing is. Each problem names the Job and its codes in order.
 */
export function createProblems(writes: readonly AuditedJobWrite[], expect: CreateExpectations = {}): string[] {
  const problems: string[] = [];
  for (const [name, codes] of createCodesByName(writes)) {
    const created = codes.filter((c) => c === 201).length;
    if (created > 1) problems.push(`${name}: created ${created} times (codes ${codes.join(',')})`);
    if (codes.includes(409) && !(expect.allow409?.(name) ?? false)) problems.push(`${name}: 409 AlreadyExists not provoked by the test (codes ${codes.join(',')})`);
  }
  return problems;
}

/** One line for the diagnostics: creates, deletes and their codes. */
export function describeJobWrites(writes: readonly AuditedJobWrite[]): string {
  const tally = (verb: string): string => {
    const codes = new Map<number, number>();
    for (const w of writes) if (w.verb === verb) codes.set(w.code, (codes.get(w.code) ?? 0) + 1);
    return [...codes].sort((a, b) => a[0] - b[0]).map(([c, n]) => `${c}×${n}`).join(' ') || 'none';
  };
  const names = new Set(writes.filter((w) => w.verb === 'create').map((w) => w.name));
  return `audit: ${names.size} Job name(s) created; creates ${tally('create')}; deletes ${tally('delete')}`;
}

/** The shared cluster's audit log (set by run-integration). */
export function testAuditLog(): string {
  const path = process.env.SECONDCRON_TEST_AUDIT_LOG;
  if (!path) throw new Error('SECONDCRON_TEST_AUDIT_LOG is not set: run the integration tests with `make test-integration` (its cluster writes the audit log)');
  return path;
}

/**
 * Reads the audit log's reads of Jobs by name after `settleMs`, selected as `auditedJobWrites` selects
 * writes (by default the operator's User-Agent only).
 */
export async function auditedJobReads(f: JobWriteFilter & { name?: string }, opts: { path?: string; settleMs?: number } = {}): Promise<AuditedJobRead[]> {
  await sleep(opts.settleMs ?? 1_500);
  const path = opts.path ?? testAuditLog();
  if (!existsSync(path)) throw new Error(`no audit log at ${path}`);
  return selectJobWrites(parseAuditJobReads(readFileSync(path, 'utf8')), f).filter((r) => f.name === undefined || r.name === f.name);
}

/**
 * Reads the audit log's Job writes after `settleMs` (the API server writes an event after its answer).
 * `path` defaults to the shared cluster's log.
 */
export async function auditedJobWrites(f: JobWriteFilter, opts: { path?: string; settleMs?: number } = {}): Promise<AuditedJobWrite[]> {
  await sleep(opts.settleMs ?? 1_500);
  const path = opts.path ?? testAuditLog();
  if (!existsSync(path)) throw new Error(`no audit log at ${path}`);
  return selectJobWrites(parseAuditJobWrites(readFileSync(path, 'utf8')), f);
}

/**
 * Replace (DESIGN §3, I3) as the API server saw it: each stored create of `owner`'s Jobs, in slot
 * order, must come after an accepted (2xx) delete of the Job stored before it, answered before the
 * create was received, unless `wasActive` says that Job was no longer active then (finished, or gone).
 * The first stored create has no predecessor here.
 */
export function replaceOrderProblems(writes: readonly AuditedJobWrite[], owner: string, wasActive: (name: string, atMs: number) => boolean = () => true): string[] {
  const stored = writes.filter((w) => w.verb === 'create' && w.code === 201 && ownerOfJobName(w.name) === owner).sort((a, b) => slotOfJobName(a.name) - slotOfJobName(b.name));
  const problems: string[] = [];
  for (const [i, create] of stored.entries()) {
    const previous = stored[i - 1];
    if (previous === undefined || !wasActive(previous.name, create.receivedMs)) continue;
    const deletes = writes.filter((w) => w.verb === 'delete' && w.name === previous.name);
    const accepted = deletes.find((d) => d.code >= 200 && d.code < 300 && d.answeredMs <= create.receivedMs);
    if (!accepted) {
      const seen = deletes.map((d) => `${d.code} answered ${Math.round(d.answeredMs - create.receivedMs)} ms after`).join(', ') || 'none';
      problems.push(`${create.name} created while ${previous.name} was active and not deleted first (its deletes: ${seen})`);
    }
  }
  return problems;
}

/**
 * I4 as seen on the wire: per schedule, a create for a slot received after a create for a newer
 * slot of the same schedule (a superseded create sent again). `creates` in the order received.
 */
export function supersededCreateProblems(creates: readonly { name: string; receivedMs: number; status?: number; code?: number }[]): string[] {
  const newest = new Map<string, { slot: number; name: string }>();
  const problems: string[] = [];
  for (const c of [...creates].sort((a, b) => a.receivedMs - b.receivedMs)) {
    const owner = ownerOfJobName(c.name);
    const slot = slotOfJobName(c.name);
    if (owner === undefined || Number.isNaN(slot)) continue;
    const n = newest.get(owner);
    if (n && slot < n.slot) problems.push(`${c.name} sent (answered ${c.code ?? c.status ?? '?'}) after ${n.name}, a newer slot's create`);
    else newest.set(owner, { slot, name: c.name });
  }
  return problems;
}

/**
 * I4 on the wire (a fault proxy's records): a create refused with proof that nothing was stored (429,
 * 503) whose answer arrived after the schedule's next slot was due (by more than `marginMs`) is
 * superseded; sending it again for the same slot, at any later time, is a problem.
 */
export function resentAfterSupersedingRefusal(
  records: readonly { name: string; receivedMs: number; answeredMs?: number; status?: number }[],
  periodMs: number,
  marginMs = 250,
): string[] {
  const problems: string[] = [];
  for (const r of records) {
    if (r.status !== 429 && r.status !== 503) continue;
    const slot = slotOfJobName(r.name);
    const answeredMs = r.answeredMs;
    if (answeredMs === undefined || Number.isNaN(slot) || answeredMs <= slot + periodMs + marginMs) continue;
    const again = records.filter((o) => o.name === r.name && o.receivedMs > answeredMs);
    if (again.length) problems.push(`${r.name}: refused ${r.status} ${Math.round(answeredMs - slot)} ms after its slot (a newer slot due), sent again ${again.length} time(s) (answered ${again.map((o) => o.status ?? '?').join(',')})`);
  }
  return problems;
}
