// The status a SecondCronJob should show, derived from what the caches hold (never accumulated
// by hand, so any replica that becomes leader writes the same thing).
import { type Condition, type Job, type SecondCronJob, type SecondCronJobStatus } from '../api/resources.js';
import { isActive, jobOutcome, jobSlotMs, jobStartMs } from './job-state.js';
import { scheduleHash } from './slots/schedule-hash.js';

export interface ReadyState {
  status: Condition['status'];
  reason: string;
  message: string;
}

export interface StatusInputs {
  scj: SecondCronJob;
  ownedJobs: readonly Job[];
  nextSlotMs: number | null;
  /** Suspended: the first slot not decided (kept so that a wall-clock step backwards re-runs none). */
  suspendedNextSlotMs?: number;
  /** The cron schedule as it runs (`H` resolved); undefined for intervals and invalid schedules. */
  resolvedSchedule: string | undefined;
  /** Each cron expression as it runs, in spec order. */
  resolvedSchedules?: readonly string[];
  /** Slots this leader created or found already created, not yet visible in the Job cache. */
  lastScheduledMs: number | undefined;
  /** Enqueue: the slot waiting for a free place. */
  queuedSlotMs?: number;
  ready: ReadyState;
  /** The generation the Ready verdict is complete for (schedule and Job template both judged). */
  readyGeneration: number | undefined;
  nowMs: number;
}

export function desiredStatus(inp: StatusInputs): SecondCronJobStatus {
  const prev = inp.scj.status ?? {};
  const active = inp.ownedJobs
    .filter(isActive)
    .sort((a, b) => jobStartMs(a) - jobStartMs(b))
    .map((j) => ({ apiVersion: 'batch/v1', kind: 'Job', name: j.metadata.name, namespace: j.metadata.namespace ?? '', uid: j.metadata.uid }));
  const lastSchedule = maxTime(prev.lastScheduleTime, ...inp.ownedJobs.map(jobSlotMs), inp.lastScheduledMs);
  const lastSuccess = maxTime(
    prev.lastSuccessfulTime,
    ...inp.ownedJobs.filter((j) => jobOutcome(j) === 'Complete').map((j) => Date.parse(j.status?.completionTime ?? '')),
  );
  const status: SecondCronJobStatus = {
    observedGeneration: inp.scj.metadata.generation,
    activeCount: active.length,
    active,
    conditions: mergeCondition(prev.conditions ?? [], { type: 'Ready', ...inp.ready }, inp.readyGeneration, inp.nowMs),
  };
  if (lastSchedule) status.lastScheduleTime = lastSchedule;
  if (lastSuccess) status.lastSuccessfulTime = lastSuccess;
  if (inp.nextSlotMs !== null) status.nextScheduleTime = rfc3339(inp.nextSlotMs);
  if (inp.suspendedNextSlotMs !== undefined) status.suspendedNextScheduleTime = rfc3339(inp.suspendedNextSlotMs);
  if (status.nextScheduleTime !== undefined || status.suspendedNextScheduleTime !== undefined) status.scheduleHash = scheduleHash(inp.scj);
  if (inp.resolvedSchedule !== undefined) status.resolvedSchedule = inp.resolvedSchedule;
  if (inp.queuedSlotMs !== undefined) status.queuedScheduleTime = rfc3339(inp.queuedSlotMs);
  if (inp.resolvedSchedules !== undefined) status.resolvedSchedules = [...inp.resolvedSchedules];
  return status;
}

/** metav1.Condition's message limit, which the CRD's schema enforces. */
export const CONDITION_MESSAGE_MAX = 32_768;

/**
 * Keeps lastTransitionTime when the condition's status did not change (the Kubernetes convention).
 * A longer message (an API server's answer quoted in InvalidJobTemplate) is cut to fit the schema,
 * or the status could never be written.
 */
export function mergeCondition(
  conditions: readonly Condition[],
  next: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>,
  generation: number | undefined,
  nowMs: number,
): Condition[] {
  const old = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = old && old.status === next.status ? old.lastTransitionTime : rfc3339(nowMs);
  const message = next.message.length > CONDITION_MESSAGE_MAX ? fitMessage(next.message) : next.message;
  const merged: Condition = { ...next, message, lastTransitionTime, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  return [...conditions.filter((c) => c.type !== next.type), merged];
}

/** At most CONDITION_MESSAGE_MAX characters (code points, as the schema counts them), ending in "…" when cut. */
function fitMessage(message: string): string {
  const chars = [...message];
  return chars.length > CONDITION_MESSAGE_MAX ? `${chars.slice(0, CONDITION_MESSAGE_MAX - 1).join('')}…` : message;
}

export function statusEquals(a: SecondCronJobStatus | undefined, b: SecondCronJobStatus): boolean {
  return sameJson(normalize(a ?? {}), normalize(b));
}

/** Whole-second RFC 3339, as the API server stores date-time fields. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function maxTime(...values: (string | number | undefined)[]): string | undefined {
  let best = Number.NaN;
  for (const v of values) {
    const ms = typeof v === 'string' ? Date.parse(v) : v;
    if (ms !== undefined && !Number.isNaN(ms) && !(ms <= best)) best = ms;
  }
  return Number.isNaN(best) ? undefined : rfc3339(best);
}

function normalize(s: SecondCronJobStatus): SecondCronJobStatus {
  const out: SecondCronJobStatus = { ...s };
  if (!out.active?.length) delete out.active;
  if (out.conditions) out.conditions = [...out.conditions].sort((x, y) => x.type.localeCompare(y.type));
  return out;
}

// Equal as JSON: key order and undefined members do not matter (the API server returns keys sorted).
// Compared in place: serialising both sides for every reconcile of a 1 s schedule was 3 % of the
// operator's CPU at 100 Jobs/s, most of it garbage.
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  }
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x).filter((k) => x[k] !== undefined);
  return keys.length === Object.keys(y).filter((k) => y[k] !== undefined).length && keys.every((k) => sameJson(x[k], y[k]));
}
