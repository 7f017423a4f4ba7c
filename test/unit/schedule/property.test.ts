import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IANAZone } from 'luxon';
import { parseCron, type CronFields } from '../../../src/schedule/cron-expression.js';
import { resolveHashes } from '../../../src/schedule/hashed-fields.js';
import { iso, ms, pick, seededRandom, slotsBetween, source } from './helpers.js';

/**
 * A brute-force reference: every second of the window, luxon's offset, Date's calendar, and the DST
 * rule stated directly ("a wall time seen before is not run again by a fixed schedule"; "a fixed
 * wall time the clock jumps over runs at the jump"). It shares only the parser with the real code.
 */
function referenceSlots(fields: CronFields, zoneName: string, fromMs: number, untilMs: number): number[] {
  const zone = IANAZone.create(zoneName);
  const minuteOffsets = new Map<number, number>();
  const rawOffset = (t: number): number => Math.round(zone.offset(t) * 60_000);
  // luxon per second would take too long; offsets are read per minute and per second only in a
  // minute whose two ends disagree.
  const minuteOffset = (minute: number): number => {
    let offset = minuteOffsets.get(minute);
    if (offset === undefined) {
      offset = rawOffset(minute);
      minuteOffsets.set(minute, offset);
    }
    return offset;
  };
  const offsetAt = (t: number): number => {
    const minute = Math.floor(t / 60_000) * 60_000;
    const start = minuteOffset(minute);
    return start === minuteOffset(minute + 60_000) ? start : rawOffset(t);
  };
  const distinctOffsets = new Set<number>();
  for (let t = fromMs - 2 * 86_400_000; t <= untilMs + 86_400_000; t += 1_800_000) distinctOffsets.add(rawOffset(t));

  const matchesWall = (wall: number): boolean => {
    const d = new Date(wall);
    if (!fields.seconds[d.getUTCSeconds()] || !fields.minutes[d.getUTCMinutes()] || !fields.hours[d.getUTCHours()]) {
      return false;
    }
    if (!fields.months[d.getUTCMonth() + 1]) return false;
    const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
    const domHit = fields.daysOfMonth[d.getUTCDate()] === true || (fields.lastDayOfMonth && d.getUTCDate() === lastDay);
    const dowHit = fields.daysOfWeek[d.getUTCDay()] === true;
    return fields.dayOfMonthStar || fields.dayOfWeekStar ? domHit && dowHit : domHit || dowHit;
  };
  const fixedTime = !fields.wallClockWildcard;
  const seenBefore = (instant: number, wall: number): boolean => {
    for (const o of distinctOffsets) {
      const earlier = wall - o;
      if (earlier < instant && offsetAt(earlier) === o) return true;
    }
    return false;
  };

  const slots: number[] = [];
  const first = Math.floor(fromMs / 1000) * 1000 + 1000;
  for (let t = first; t <= untilMs; t += 1000) {
    const offset = offsetAt(t);
    const wall = t + offset;
    let slot = matchesWall(wall) && !(fixedTime && seenBefore(t, wall));
    const previousOffset = offsetAt(t - 1000);
    if (!slot && fixedTime && offset > previousOffset) {
      // The clock jumped from wall(t - 1 s) straight to wall(t): the skipped wall times run now.
      for (let skipped = t + previousOffset; skipped < wall; skipped += 1000) {
        if (matchesWall(skipped)) {
          slot = true;
          break;
        }
      }
    }
    if (slot) slots.push(t);
  }
  return slots;
}

function randomExpression(random: () => number): string {
  return [
    pick(random, ['0', '*', '*/15', '5,35', '0-10/5', '30', '*/7']),
    pick(random, ['*', '*/30', '0', '30', '15-45/15', '0,30', '*/7', '59', '0-59']),
    pick(random, ['*', '2', '1-3', '*/2', '0', '2,3', '23', '3', '0-23', '*/5']),
    pick(random, ['*', '?', '*', 'L', '1-31', '*/2', '1,15,L']),
    pick(random, ['*', '*', '1-12', 'JAN-DEC']),
    pick(random, ['*', '?', '*', 'MON-FRI', 'SUN', '0-6', 'SAT,SUN']),
  ].join(' ');
}

// Windows of ±20 h around 2026 transitions, plus zones without DST.
const WINDOWS: ReadonlyArray<[string, string]> = [
  ['Europe/Berlin', '2026-03-29T01:00:00Z'],
  ['Europe/Berlin', '2026-10-25T01:00:00Z'],
  ['America/New_York', '2026-11-01T06:00:00Z'],
  ['America/New_York', '2026-03-08T07:00:00Z'],
  ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
  ['Australia/Lord_Howe', '2026-10-03T15:30:00Z'],
  ['America/Santiago', '2026-09-06T04:00:00Z'],
  ['America/Santiago', '2026-04-05T03:00:00Z'],
  ['Pacific/Chatham', '2026-04-04T14:00:00Z'],
  ['Asia/Kolkata', '2026-02-28T18:30:00Z'],
  ['UTC', '2028-02-29T00:00:00Z'],
];

/** Edge cases picked by hand: fixed every-second (the whole repeated hour is skipped), seconds inside a gap. */
const PINNED: readonly string[] = ['* 0-59 0-23 * * *', '*/10 0-59 2 * * *', '0 30 2 * * *', '@daily', '* */30 * * * *'];

describe('property: next() agrees with a second-by-second reference', () => {
  const random = seededRandom(20_261_202);
  for (const [zone, around] of WINDOWS) {
    const expressions = [randomExpression(random), randomExpression(random)];
    if (zone === 'Europe/Berlin' || zone === 'Australia/Lord_Howe') expressions.push(...PINNED);
    for (const expression of expressions) {
      it(`${expression} in ${zone} around ${around}`, () => {
        const parsed = parseCron(expression);
        assert.ok(parsed.ok);
        const from = ms(around) - 20 * 3_600_000 + Math.floor(random() * 600) * 1000 + 500;
        const until = ms(around) + 20 * 3_600_000;
        const expected = referenceSlots(parsed.fields, zone, from, until);
        const actual = slotsBetween(source({ schedule: expression, timeZone: zone }, around), from, until);
        if (actual.length !== expected.length || actual.some((s, i) => s !== expected[i])) {
          const i = actual.findIndex((s, k) => s !== expected[k]);
          assert.fail(
            `${actual.length} slots vs ${expected.length} expected; first difference at #${i}: ` +
              `${iso(actual[i] ?? null)} vs ${iso(expected[i] ?? null)}`,
          );
        }
      });
    }
  }
});

function randomHashedExpression(random: () => number): string {
  return [
    pick(random, ['H', 'H/15', 'H(0-9)', '0', '*/7']),
    pick(random, ['H', 'H/30', 'H(0-29)/10', '*', '*/30', '0']),
    pick(random, ['H', 'H(1-3)', 'H/2', '*', '2', 'H(0-3)/2']),
    // Every day, so that each 40-hour window holds slots (H in the day fields: hashed-fields.test.ts).
    pick(random, ['*', '?']),
    '*',
    pick(random, ['*', '?']),
  ].join(' ');
}

// H changes nothing about DST: the reference is the resolved expression's, computed from parseCron of
// the resolved text; the slots are those of the H expression compiled for the identity.
describe('property: H expressions fire as their resolved expression, across DST', () => {
  const random = seededRandom(25_2026);
  for (const [zone, around] of WINDOWS) {
    for (let i = 0; i < 3; i++) {
      const expression = randomHashedExpression(random);
      const identity = `ns-${Math.floor(random() * 100)}/job-${Math.floor(random() * 1e6)}`;
      it(`${expression} as ${identity} in ${zone} around ${around}`, () => {
        const resolved = resolveHashes(expression, identity);
        assert.ok(resolved.ok);
        const parsed = parseCron(resolved.expression);
        assert.ok(parsed.ok, resolved.expression);
        const from = ms(around) - 20 * 3_600_000 + Math.floor(random() * 600) * 1000 + 500;
        const until = ms(around) + 20 * 3_600_000;
        const expected = referenceSlots(parsed.fields, zone, from, until);
        const actual = slotsBetween(source({ schedule: expression, timeZone: zone }, around, around, identity), from, until);
        assert.ok(expected.length > 0, `no slot of ${resolved.expression} in the window`);
        assert.deepEqual(actual.map(iso), expected.map(iso), `${expression} resolved to ${resolved.expression}`);
      });
    }
  }
});

// spec.schedules: the union of two expressions is the sorted, duplicate-free merge of each one's
// reference slots, across both Berlin transitions (fixed-time and wall-clock members mixed).
const PINNED_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['0 30 2 * * *', '0 0 3 * * *'], // the gap's fixed time and the instant it moves to: one slot
  ['0 30 2 * * *', '0 */30 * * * *'], // fixed (first copy only) and wall clock (both copies) at fall-back
  ['*/10 * 2 * * *', '*/15 * * * * *'],
  ['0 0 * * * *', '0 0 2 * * *'],
];

describe('property: schedules lists fire the union of their expressions\' reference slots, across DST', () => {
  const random = seededRandom(35_2026);
  for (const around of ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z']) {
    const pairs = [...PINNED_PAIRS, [randomExpression(random), randomExpression(random)] as const];
    for (const pair of pairs) {
      it(`[${pair.join(', ')}] in Europe/Berlin around ${around}`, () => {
        const from = ms(around) - 20 * 3_600_000 + Math.floor(random() * 600) * 1000 + 500;
        const until = ms(around) + 20 * 3_600_000;
        const merged = new Set<number>();
        for (const expression of pair) {
          const parsed = parseCron(expression);
          assert.ok(parsed.ok, expression);
          for (const slot of referenceSlots(parsed.fields, 'Europe/Berlin', from, until)) merged.add(slot);
        }
        const expected = [...merged].sort((a, b) => a - b);
        const actual = slotsBetween(source({ schedules: [...pair], timeZone: 'Europe/Berlin' }, around), from, until);
        assert.ok(expected.length > 0, 'the window holds slots');
        assert.deepEqual(actual.map(iso), expected.map(iso));
      });
    }
  }
});
