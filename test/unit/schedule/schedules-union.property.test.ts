// fast-check: a compiled `schedules` list walks exactly the sorted, duplicate-free merge of the slots
// of its expressions compiled one by one (the real code on both sides), in zones with DST, around
// their transitions, with H, and with a window.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import fc from 'fast-check';

import { compileSchedule, latestSlotAtOrBefore, type ScheduleSpec, type SlotSource } from '../../../src/schedule/index.js';
import { ms, slotsBetween } from './helpers.js';

const FIELDS = [
  ['0', '*/15', '5,35', '*/7', 'H', '30'],
  ['*', '*/30', '0', '30', '15-45/15', 'H', '59'],
  ['*', '2', '1-3', '*/2', '0', '2,3', 'H(0-5)'],
  ['*', '?', 'L', '*/2', '1,15,L'],
  ['*', '*'],
  ['*', '?', 'MON-FRI', 'SUN', 'SAT,SUN'],
] as const;

const expression = fc.tuple(...FIELDS.map((options) => fc.constantFrom(...options))).map((parts) => parts.join(' '));

// Around the 2026 transitions (±20 h), plus a zone without DST.
const AROUND = [
  ['Europe/Berlin', '2026-03-29T01:00:00Z'],
  ['Europe/Berlin', '2026-10-25T01:00:00Z'],
  ['America/New_York', '2026-11-01T06:00:00Z'],
  ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
  ['Asia/Kolkata', '2026-02-28T18:30:00Z'],
] as const;

const HOURS = 3_600_000;

function compiled(spec: ScheduleSpec, nowMs: number, identity: string): SlotSource {
  const result = compileSchedule(spec, nowMs, nowMs, identity);
  if (!result.ok) assert.fail(`${JSON.stringify(spec)}: ${result.message}`);
  return result.source;
}

test('property: the union\'s next() is the sorted-dedup merge of each expression\'s', () => {
  fc.assert(
    fc.property(
      fc.array(expression, { minLength: 2, maxLength: 4 }),
      fc.constantFrom(...AROUND),
      fc.integer({ min: 0, max: 3_600 }),
      fc.constantFrom('default/a', 'team-b/nightly'),
      (expressions, [timeZone, around], shiftSeconds, identity) => {
        const from = ms(around) - 20 * HOURS + shiftSeconds * 1000 + 500;
        const until = ms(around) + 20 * HOURS;
        const merged = new Set<number>();
        for (const e of expressions) for (const slot of slotsBetween(compiled({ schedule: e, timeZone }, from, identity), from, until)) merged.add(slot);
        const expected = [...merged].sort((a, b) => a - b);
        const union = slotsBetween(compiled({ schedules: expressions, timeZone }, from, identity), from, until);
        assert.equal(union.length, expected.length);
        assert.deepEqual(union, expected);
      },
    ),
    { numRuns: 60, seed: 35 },
  );
});

test('property: a window keeps exactly the union\'s slots inside it (both ends inclusive)', () => {
  fc.assert(
    fc.property(
      fc.array(expression, { minLength: 1, maxLength: 3 }),
      fc.constantFrom(...AROUND),
      fc.integer({ min: 0, max: 20 * 3_600 }),
      fc.integer({ min: 1, max: 20 * 3_600 }),
      ([first, ...rest], [timeZone, around], startSeconds, lengthSeconds) => {
        const expressions = [first as string, ...rest];
        const from = ms(around) - 20 * HOURS;
        const until = ms(around) + 20 * HOURS;
        const notBeforeMs = from + startSeconds * 1000;
        const notAfterMs = notBeforeMs + lengthSeconds * 1000;
        const all = slotsBetween(compiled({ schedules: expressions, timeZone }, from, 'default/a'), from, until);
        const windowed = compileSchedule(
          { schedules: expressions, timeZone, notBefore: new Date(notBeforeMs).toISOString(), notAfter: new Date(notAfterMs).toISOString() },
          from,
          from,
          'default/a',
        );
        assert.ok(windowed.ok);
        const inside = all.filter((s) => s >= notBeforeMs && s <= notAfterMs);
        assert.deepEqual(slotsBetween(windowed.source, from, until), inside);
      },
    ),
    { numRuns: 60, seed: 3_535 },
  );
});

test('property: the latest due slot of a union (catch-up after downtime) is the latest of any expression\'s', () => {
  fc.assert(
    fc.property(
      fc.array(expression, { minLength: 2, maxLength: 4 }),
      fc.constantFrom(...AROUND),
      fc.integer({ min: 1, max: 40 * 3_600 }),
      ([first, ...rest], [timeZone, around], downSeconds) => {
        const expressions = [first as string, ...rest];
        const from = ms(around) - 20 * HOURS;
        const at = from + downSeconds * 1000 + 250;
        const members = expressions.map((e) => latestSlotAtOrBefore(compiled({ schedule: e, timeZone }, from, 'default/a'), at, from));
        const found = members.filter((s): s is number => s !== null);
        const expected = found.length === 0 ? null : Math.max(...found);
        assert.equal(latestSlotAtOrBefore(compiled({ schedules: expressions, timeZone }, from, 'default/a'), at, from), expected);
      },
    ),
    { numRuns: 60, seed: 353_535 },
  );
});
