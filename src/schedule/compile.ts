import type { CompileResult, ScheduleSpec } from './types.js';
import { type CronParseResult, parseCron } from './cron-expression.js';
import { closestZoneName } from './closest-zone.js';
import { resolveHashes } from './hashed-fields.js';
import { CronWallMatcher } from './cron-wall-matcher.js';
import { CronSlotSource, HORIZON_YEARS } from './cron-slot-source.js';
import { IntervalSlotSource } from './interval-slot-source.js';
import { UTC_ZONE, isKnownTimeZone, zoneOffsetsFor } from './zone-offsets.js';

/**
 * Turns a spec into a slot source, or into a message for the user (Ready=False condition and Event).
 * The CRD schema already rejects most malformed specs; the checks are repeated because a resource may
 * predate the schema or come from elsewhere, and a bad spec must never crash the operator.
 *
 * anchorMs: the resource's creationTimestamp (interval anchor). nowMs: only used to check that the
 * schedule fires at all within the next HORIZON_YEARS. identity: what `H` hashes (hashIdentity:
 * `<namespace>/<name>`); the schedule that runs is the resolved expression, DST rules included.
 */
export function compileSchedule(spec: ScheduleSpec, anchorMs: number, nowMs: number, identity: string): CompileResult {
  const hasSchedule = spec.schedule !== undefined && spec.schedule !== null;
  const hasInterval = spec.intervalSeconds !== undefined && spec.intervalSeconds !== null;
  const hasTimeZone = spec.timeZone !== undefined && spec.timeZone !== null && spec.timeZone !== '';

  if (hasSchedule && hasInterval) return invalid('set either schedule or intervalSeconds, not both');
  if (!hasSchedule && !hasInterval) return invalid('set one of schedule or intervalSeconds');

  if (hasInterval) {
    const seconds = spec.intervalSeconds as number;
    if (hasTimeZone) return invalid('timeZone applies to schedule only, not to intervalSeconds');
    if (typeof seconds !== 'number' || !Number.isSafeInteger(seconds) || seconds < 1) {
      return invalid(`intervalSeconds must be a whole number of at least 1, got ${String(seconds)}`);
    }
    if (!Number.isFinite(anchorMs)) return invalid('intervalSeconds needs a valid creationTimestamp as its anchor');
    return {
      ok: true,
      source: new IntervalSlotSource(anchorMs, seconds),
      describe: `every ${seconds}s from ${new Date(anchorMs).toISOString()}`,
    };
  }

  const expression = spec.schedule as string;
  if (typeof expression !== 'string') return invalid('schedule must be a string');
  const timeZone = hasTimeZone ? (spec.timeZone as string) : 'UTC';
  if (typeof timeZone !== 'string' || !isKnownTimeZone(timeZone)) {
    const closest = typeof timeZone === 'string' ? closestZoneName(timeZone) : undefined;
    const hint = closest === undefined ? '' : `; did you mean ${JSON.stringify(closest)}?`;
    return { ok: false, reason: 'UnknownTimeZone', message: `unknown time zone ${JSON.stringify(timeZone)}${hint}` };
  }
  const resolved = resolveHashes(expression, identity);
  if (!resolved.ok) return invalid(resolved.message);
  const resolvedSchedule = resolved.expression;
  const parsed = parsedCron(resolvedSchedule);
  if (!parsed.ok) {
    if (resolvedSchedule === expression) return invalid(parsed.message);
    const quoted = `schedule ${JSON.stringify(resolvedSchedule)}`;
    return invalid(parsed.message.replace(quoted, `schedule ${JSON.stringify(expression)} (resolved ${JSON.stringify(resolvedSchedule)})`));
  }

  const zone = hasTimeZone ? zoneOffsetsFor(timeZone) : UTC_ZONE;
  const source = new CronSlotSource(parsed.matcher, zone, parsed.fields.wallClockWildcard);
  if (source.next(nowMs) === null) {
    return invalid(
      `schedule ${JSON.stringify(expression)}: never fires (no matching time within ${HORIZON_YEARS} years)`,
    );
  }
  const hashed = resolvedSchedule === expression ? '' : ` resolved to ${JSON.stringify(resolvedSchedule)}`;
  const expanded = parsed.fields.normalized === resolvedSchedule.trim() ? '' : ` (${parsed.fields.normalized})`;
  return { ok: true, source, resolvedSchedule, describe: `cron ${JSON.stringify(expression)}${hashed}${expanded} in ${timeZone}` };
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

function invalid(message: string): CompileResult {
  return { ok: false, reason: 'InvalidSchedule', message };
}
