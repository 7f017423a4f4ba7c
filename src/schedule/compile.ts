import type { CompileResult, ScheduleSpec, SlotSource } from './types.js';
import { type CronParseResult, parseCron } from './cron-expression.js';
import { closestZoneName } from './closest-zone.js';
import { resolveHashes } from './hashed-fields.js';
import { CronWallMatcher } from './cron-wall-matcher.js';
import { CronSlotSource, HORIZON_YEARS } from './cron-slot-source.js';
import { IntervalSlotSource } from './interval-slot-source.js';
import { UnionSlotSource } from './union-slot-source.js';
import { type ActiveWindow, WindowedSlotSource, parseActiveWindow } from './active-window.js';
import { UTC_ZONE, type ZoneOffsets, isKnownTimeZone, zoneOffsetsFor } from './zone-offsets.js';

/** spec.schedules holds 1 to this many expressions (the CRD says the same). */
export const MAX_SCHEDULES = 16;
/** Between the resolved expressions of `schedules` in CompileResult.resolvedSchedule (no cron text contains it). */
export const RESOLVED_SEPARATOR = '; ';

type Invalid = CompileResult & { ok: false };

/**
 * Turns a spec into a slot source, or into a message for the user (Ready=False condition and Event).
 * The CRD schema already rejects most malformed specs; the checks are repeated because a resource may
 * predate the schema or come from elsewhere, and a bad spec must never crash the operator.
 *
 * anchorMs: the resource's creationTimestamp (interval anchor). nowMs: only used to check that the
 * schedule (each expression of a list) fires at all within the next HORIZON_YEARS. identity: what
 * `H` hashes (hashIdentity: `<namespace>/<name>`), alike in every expression; the schedule that runs
 * is the resolved expression, DST rules included. A window (notBefore/notAfter) removes the slots
 * outside it from the source; a window in the past is not an error (windowState: WindowEnded).
 */
export function compileSchedule(spec: ScheduleSpec, anchorMs: number, nowMs: number, identity: string): CompileResult {
  const hasSchedule = isSet(spec.schedule);
  const hasSchedules = isSet(spec.schedules);
  const hasInterval = isSet(spec.intervalSeconds);
  const hasTimeZone = isSet(spec.timeZone) && spec.timeZone !== '';

  const kinds = [hasSchedule, hasSchedules, hasInterval].filter(Boolean).length;
  if (kinds > 1) {
    const set = [hasSchedule && 'schedule', hasSchedules && 'schedules', hasInterval && 'intervalSeconds'].filter((k): k is string => typeof k === 'string');
    return invalid(`set exactly one of schedule, schedules or intervalSeconds, not ${set.join(' and ')}`);
  }
  if (kinds === 0) return invalid('set one of schedule, schedules or intervalSeconds');

  const parsedWindow = parseActiveWindow(spec.notBefore, spec.notAfter);
  if (!parsedWindow.ok) return invalid(parsedWindow.message);
  const window = parsedWindow.window;

  let compiled: CompileResult;
  if (hasInterval) {
    if (hasTimeZone) return invalid('timeZone applies to schedule and schedules only, not to intervalSeconds');
    compiled = compileInterval(spec.intervalSeconds, anchorMs);
  } else {
    const timeZone = hasTimeZone ? spec.timeZone : 'UTC';
    if (typeof timeZone !== 'string' || !isKnownTimeZone(timeZone)) {
      const closest = typeof timeZone === 'string' ? closestZoneName(timeZone) : undefined;
      const hint = closest === undefined ? '' : `; did you mean ${JSON.stringify(closest)}?`;
      return { ok: false, reason: 'UnknownTimeZone', message: `unknown time zone ${JSON.stringify(timeZone)}${hint}` };
    }
    const zone = hasTimeZone ? zoneOffsetsFor(timeZone) : UTC_ZONE;
    compiled = hasSchedule ? compileOne(spec.schedule, zone, timeZone, nowMs, identity) : compileList(spec.schedules, zone, timeZone, nowMs, identity);
  }
  return window === undefined || !compiled.ok ? compiled : withWindow(compiled, window);
}

function compileInterval(seconds: unknown, anchorMs: number): CompileResult {
  if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds < 1) {
    return invalid(`intervalSeconds must be a whole number of at least 1, got ${String(seconds)}`);
  }
  if (!Number.isFinite(anchorMs)) return invalid('intervalSeconds needs a valid creationTimestamp as its anchor');
  return {
    ok: true,
    source: new IntervalSlotSource(anchorMs, seconds),
    describe: flat('every ', String(seconds), 's from ', new Date(anchorMs).toISOString()),
  };
}

function compileOne(expression: unknown, zone: ZoneOffsets, timeZone: string, nowMs: number, identity: string): CompileResult {
  const cron = compileCron(expression, zone, nowMs, identity);
  if (!cron.ok) return cron;
  return { ok: true, source: cron.source, resolvedSchedule: cron.resolved, resolvedSchedules: [cron.resolved], describe: flat('cron ', cron.describe, ' in ', timeZone) };
}

/** spec.schedules: the union of the expressions' slots; a bad item is named by its index. */
function compileList(expressions: unknown, zone: ZoneOffsets, timeZone: string, nowMs: number, identity: string): CompileResult {
  if (!Array.isArray(expressions)) return invalid('schedules must be a list of cron expressions');
  if (expressions.length < 1 || expressions.length > MAX_SCHEDULES) {
    return invalid(`schedules must hold 1 to ${MAX_SCHEDULES} cron expressions, got ${expressions.length}`);
  }
  const sources: SlotSource[] = [];
  const resolved: string[] = [];
  const described: string[] = [];
  for (const [i, expression] of expressions.entries()) {
    const cron = compileCron(expression, zone, nowMs, identity);
    if (!cron.ok) return invalid(`schedules[${i}]: ${cron.message}`);
    sources.push(cron.source);
    resolved.push(cron.resolved);
    described.push(cron.describe);
  }
  return {
    ok: true,
    source: sources.length === 1 ? (sources[0] as SlotSource) : new UnionSlotSource(sources),
    resolvedSchedule: resolved.join(RESOLVED_SEPARATOR),
    resolvedSchedules: resolved,
    describe: flat('cron ', described.length === 1 ? 'list' : `union of ${described.length}`, ' [', described.join(', '), '] in ', timeZone),
  };
}

type CompiledCron = { ok: true; source: SlotSource; resolved: string; describe: string } | Invalid;

/** One cron expression: `H` resolved for identity, parsed, and checked to fire within the horizon. */
function compileCron(expression: unknown, zone: ZoneOffsets, nowMs: number, identity: string): CompiledCron {
  if (typeof expression !== 'string') return invalid(`schedule must be a string, got ${JSON.stringify(expression)}`);
  const resolved = resolveHashes(expression, identity);
  if (!resolved.ok) return invalid(resolved.message);
  const resolvedSchedule = resolved.expression;
  const parsed = parsedCron(resolvedSchedule);
  if (!parsed.ok) {
    if (resolvedSchedule === expression) return invalid(parsed.message);
    const quoted = `schedule ${JSON.stringify(resolvedSchedule)}`;
    return invalid(parsed.message.replace(quoted, `schedule ${JSON.stringify(expression)} (resolved ${JSON.stringify(resolvedSchedule)})`));
  }
  const source = new CronSlotSource(parsed.matcher, zone, parsed.fields.wallClockWildcard);
  if (source.next(nowMs) === null) {
    return invalid(`schedule ${JSON.stringify(expression)}: never fires (no matching time within ${HORIZON_YEARS} years)`);
  }
  const hashed = resolvedSchedule === expression ? '' : ` resolved to ${JSON.stringify(resolvedSchedule)}`;
  const expanded = parsed.fields.normalized === resolvedSchedule.trim() ? '' : ` (${parsed.fields.normalized})`;
  return { ok: true, source, resolved: resolvedSchedule, describe: `${JSON.stringify(expression)}${hashed}${expanded}` };
}

function withWindow(compiled: CompileResult & { ok: true }, window: ActiveWindow): CompileResult {
  const from = window.notBeforeMs === undefined ? '' : ` from ${new Date(window.notBeforeMs).toISOString()}`;
  const until = window.notAfterMs === undefined ? '' : ` until ${new Date(window.notAfterMs).toISOString()}`;
  return { ...compiled, source: new WindowedSlotSource(compiled.source, window), window, describe: flat(compiled.describe, ', only', from, until) };
}

// Parsed expressions and their matchers are immutable, so schedules with the same expression share
// one (about 2 KiB each): thousands of schedules usually use far fewer distinct expressions.
type ParsedCron = (CronParseResult & { ok: false }) | (CronParseResult & { ok: true; matcher: CronWallMatcher });
const parsedCache = new Map<string, ParsedCron>();
const MAX_PARSED = 20_000;

function parsedCron(expression: string): ParsedCron {
  let parsed = parsedCache.get(expression);
  if (parsed === undefined) {
    const result = parseCron(expression);
    parsed = result.ok ? { ...result, matcher: new CronWallMatcher(result.fields) } : result;
    if (parsedCache.size >= MAX_PARSED) parsedCache.clear();
    parsedCache.set(expression, parsed);
  }
  return parsed;
}

/**
 * One flat string. Each schedule keeps its `describe`; a template literal makes a tree of cons strings
 * that keeps every part (and the quoted expression) besides: ~100 bytes a schedule where the flat
 * string is ~50 (a heap snapshot at 10,000, issue 36).
 */
function flat(...parts: string[]): string {
  return parts.join('');
}

function isSet<T>(value: T | undefined | null): value is T {
  return value !== undefined && value !== null;
}

function invalid(message: string): Invalid {
  return { ok: false, reason: 'InvalidSchedule', message };
}
