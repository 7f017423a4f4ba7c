import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DateTime, IANAZone } from 'luxon';
import { ms, slotsBetween, source } from './helpers.js';

const HOUR = 3_600_000;

/** Local wall time with offset, e.g. "2026-03-29 03:00:00+02:00". */
function local(t: number, zone: string): string {
  return DateTime.fromMillis(t, { zone }).toFormat('yyyy-MM-dd HH:mm:ssZZ');
}

interface Transition {
  zone: string;
  at: string;
  /** UTC offsets in minutes before and after, as luxon reports them. */
  before: number;
  after: number;
}

// 2026 transitions; the first test checks them against luxon so the others rest on facts.
const TRANSITIONS: readonly Transition[] = [
  { zone: 'Europe/Berlin', at: '2026-03-29T01:00:00Z', before: 60, after: 120 },
  { zone: 'Europe/Berlin', at: '2026-10-25T01:00:00Z', before: 120, after: 60 },
  { zone: 'Europe/Vienna', at: '2026-03-29T01:00:00Z', before: 60, after: 120 },
  { zone: 'Europe/Vienna', at: '2026-10-25T01:00:00Z', before: 120, after: 60 },
  { zone: 'America/New_York', at: '2026-03-08T07:00:00Z', before: -300, after: -240 },
  { zone: 'America/New_York', at: '2026-11-01T06:00:00Z', before: -240, after: -300 },
  { zone: 'Australia/Lord_Howe', at: '2026-04-04T15:00:00Z', before: 660, after: 630 },
  { zone: 'Australia/Lord_Howe', at: '2026-10-03T15:30:00Z', before: 630, after: 660 },
  { zone: 'America/Santiago', at: '2026-04-05T03:00:00Z', before: -180, after: -240 },
  { zone: 'America/Santiago', at: '2026-09-06T04:00:00Z', before: -240, after: -180 },
];

const label = (t: Transition): string => `${t.zone} ${t.at} (${t.before > t.after ? 'fall-back' : 'spring-forward'})`;

describe('DST: test fixtures', () => {
  it('the listed transitions are what luxon knows', () => {
    for (const t of TRANSITIONS) {
      const zone = IANAZone.create(t.zone);
      assert.equal(zone.offset(ms(t.at) - 1000), t.before, label(t));
      assert.equal(zone.offset(ms(t.at)), t.after, label(t));
    }
  });
});

describe('DST: wildcard schedules follow the wall clock without gaps or double fires', () => {
  for (const t of TRANSITIONS) {
    it(`every second, 2 h either side: ${label(t)}`, () => {
      const src = source({ schedule: '* * * * * *', timeZone: t.zone });
      const from = ms(t.at) - 2 * HOUR;
      const until = ms(t.at) + 2 * HOUR;
      const slots = slotsBetween(src, from, until);
      assert.equal(slots.length, (until - from) / 1000, 'one slot per real second');
      assert.equal(slots[0], from + 1000);
      for (let i = 1; i < slots.length; i++) {
        if ((slots[i] as number) - (slots[i - 1] as number) !== 1000) {
          assert.fail(`gap or double fire after ${new Date(slots[i - 1] as number).toISOString()}`);
        }
      }
    });

    it(`every minute, 2 h either side: ${label(t)}`, () => {
      const src = source({ schedule: '0 * * * * *', timeZone: t.zone });
      const from = ms(t.at) - 2 * HOUR;
      const slots = slotsBetween(src, from, ms(t.at) + 2 * HOUR);
      assert.equal(slots.length, 240);
      slots.forEach((s, i) => assert.equal(s, from + (i + 1) * 60_000));
    });
  }

  it('0 */30 * * * * in Europe/Berlin runs in both copies of the repeated hour (fall-back)', () => {
    const src = source({ schedule: '0 */30 * * * *', timeZone: 'Europe/Berlin' });
    const slots = slotsBetween(src, ms('2026-10-24T23:00:00Z'), ms('2026-10-25T02:00:00Z'));
    assert.deepEqual(
      slots.map((s) => local(s, 'Europe/Berlin')),
      [
        '2026-10-25 01:30:00+02:00',
        '2026-10-25 02:00:00+02:00',
        '2026-10-25 02:30:00+02:00',
        '2026-10-25 02:00:00+01:00',
        '2026-10-25 02:30:00+01:00',
        '2026-10-25 03:00:00+01:00',
      ],
    );
    assert.equal(new Set(slots).size, slots.length);
  });

  it('0 */30 * * * * in Europe/Berlin skips 02:00 and 02:30 on spring-forward day', () => {
    const src = source({ schedule: '0 */30 * * * *', timeZone: 'Europe/Berlin' });
    const slots = slotsBetween(src, ms('2026-03-28T23:00:00Z'), ms('2026-03-29T02:00:00Z'));
    assert.deepEqual(
      slots.map((s) => local(s, 'Europe/Berlin')),
      [
        '2026-03-29 00:30:00+01:00',
        '2026-03-29 01:00:00+01:00',
        '2026-03-29 01:30:00+01:00',
        '2026-03-29 03:00:00+02:00',
        '2026-03-29 03:30:00+02:00',
        '2026-03-29 04:00:00+02:00',
      ],
    );
  });

  it('0 */30 * * * * in America/New_York: both copies of 01:00/01:30 in the fall, no 02:xx in spring', () => {
    const src = source({ schedule: '0 */30 * * * *', timeZone: 'America/New_York' });
    assert.deepEqual(
      slotsBetween(src, ms('2026-11-01T04:45:00Z'), ms('2026-11-01T07:00:00Z')).map((s) => local(s, 'America/New_York')),
      [
        '2026-11-01 01:00:00-04:00',
        '2026-11-01 01:30:00-04:00',
        '2026-11-01 01:00:00-05:00',
        '2026-11-01 01:30:00-05:00',
        '2026-11-01 02:00:00-05:00',
      ],
    );
    assert.deepEqual(
      slotsBetween(src, ms('2026-03-08T06:15:00Z'), ms('2026-03-08T07:45:00Z')).map((s) => local(s, 'America/New_York')),
      ['2026-03-08 01:30:00-05:00', '2026-03-08 03:00:00-04:00', '2026-03-08 03:30:00-04:00'],
    );
  });
});

describe('DST: fixed-time schedules (Vixie rule)', () => {
  const dayOf = (src: ReturnType<typeof source>, fromIso: string, untilIso: string, zone: string): string[] =>
    slotsBetween(src, ms(fromIso), ms(untilIso)).map((s) => `${new Date(s).toISOString()} = ${local(s, zone)}`);

  it('0 30 2 * * * in Europe/Berlin runs once at 03:00 local on spring-forward day', () => {
    const src = source({ schedule: '0 30 2 * * *', timeZone: 'Europe/Berlin' });
    assert.deepEqual(dayOf(src, '2026-03-27T12:00:00Z', '2026-03-30T12:00:00Z', 'Europe/Berlin'), [
      '2026-03-28T01:30:00.000Z = 2026-03-28 02:30:00+01:00',
      '2026-03-29T01:00:00.000Z = 2026-03-29 03:00:00+02:00',
      '2026-03-30T00:30:00.000Z = 2026-03-30 02:30:00+02:00',
    ]);
  });

  it('the gap slot is found from any point before it, also one second before', () => {
    const src = source({ schedule: '0 30 2 * * *', timeZone: 'Europe/Berlin' });
    for (const from of ['2026-03-28T01:30:00Z', '2026-03-29T00:30:00Z', '2026-03-29T00:59:59Z', '2026-03-29T00:59:59.999Z']) {
      assert.equal(src.next(ms(from)), ms('2026-03-29T01:00:00Z'), from);
    }
    assert.equal(src.next(ms('2026-03-29T01:00:00Z')), ms('2026-03-30T00:30:00Z'));
  });

  it('0 30 2 * * * in Europe/Berlin runs once, at the first 02:30 (CEST), on fall-back day', () => {
    const src = source({ schedule: '0 30 2 * * *', timeZone: 'Europe/Berlin' });
    assert.deepEqual(dayOf(src, '2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z', 'Europe/Berlin'), [
      '2026-10-25T00:30:00.000Z = 2026-10-25 02:30:00+02:00',
      '2026-10-26T01:30:00.000Z = 2026-10-26 02:30:00+01:00',
    ]);
    // Asked from inside the repeated hour, the second 02:30 is still not a slot.
    for (const from of ['2026-10-25T00:30:00Z', '2026-10-25T00:59:59Z', '2026-10-25T01:00:00Z', '2026-10-25T01:29:59Z']) {
      assert.equal(src.next(ms(from)), ms('2026-10-26T01:30:00Z'), from);
    }
  });

  it('fixed minute with every second: the gap collapses to one instant, the repeat is not run again', () => {
    const src = source({ schedule: '* 30 2 * * *', timeZone: 'Europe/Berlin' });
    assert.deepEqual(dayOf(src, '2026-03-28T22:00:00Z', '2026-03-29T22:00:00Z', 'Europe/Berlin'), [
      '2026-03-29T01:00:00.000Z = 2026-03-29 03:00:00+02:00',
    ]);
    const fall = slotsBetween(src, ms('2026-10-24T22:00:00Z'), ms('2026-10-25T22:00:00Z'));
    assert.equal(fall.length, 60);
    fall.forEach((s, i) => assert.equal(s, ms('2026-10-25T00:30:00Z') + i * 1000));
  });

  it('a gap time and the first time after the gap both matching fire once', () => {
    const src = source({ schedule: '0 0 2,3 * * *', timeZone: 'Europe/Berlin' });
    assert.deepEqual(dayOf(src, '2026-03-28T22:00:00Z', '2026-03-29T22:00:00Z', 'Europe/Berlin'), [
      '2026-03-29T01:00:00.000Z = 2026-03-29 03:00:00+02:00',
    ]);
  });

  it('America/New_York: 02:30 in the spring gap runs at 03:00; 01:30 in the fall runs once (EDT)', () => {
    const spring = source({ schedule: '0 30 2 * * *', timeZone: 'America/New_York' });
    assert.deepEqual(dayOf(spring, '2026-03-07T12:00:00Z', '2026-03-09T12:00:00Z', 'America/New_York'), [
      '2026-03-08T07:00:00.000Z = 2026-03-08 03:00:00-04:00',
      '2026-03-09T06:30:00.000Z = 2026-03-09 02:30:00-04:00',
    ]);
    const fall = source({ schedule: '0 30 1 * * *', timeZone: 'America/New_York' });
    assert.deepEqual(dayOf(fall, '2026-10-31T12:00:00Z', '2026-11-02T12:00:00Z', 'America/New_York'), [
      '2026-11-01T05:30:00.000Z = 2026-11-01 01:30:00-04:00',
      '2026-11-02T06:30:00.000Z = 2026-11-02 01:30:00-05:00',
    ]);
  });

  it('Australia/Lord_Howe (30-minute shift): 02:15 in the gap runs at 02:30; 01:45 repeated runs once', () => {
    const spring = source({ schedule: '0 15 2 * * *', timeZone: 'Australia/Lord_Howe' });
    assert.deepEqual(dayOf(spring, '2026-10-03T00:00:00Z', '2026-10-04T12:00:00Z', 'Australia/Lord_Howe'), [
      '2026-10-03T15:30:00.000Z = 2026-10-04 02:30:00+11:00',
    ]);
    const fall = source({ schedule: '0 45 1 * * *', timeZone: 'Australia/Lord_Howe' });
    assert.deepEqual(dayOf(fall, '2026-04-04T00:00:00Z', '2026-04-05T12:00:00Z', 'Australia/Lord_Howe'), [
      '2026-04-04T14:45:00.000Z = 2026-04-05 01:45:00+11:00',
    ]);
  });

  it('America/Santiago (midnight transitions): @daily runs at 01:00 when midnight is skipped', () => {
    const src = source({ schedule: '@daily', timeZone: 'America/Santiago' });
    assert.deepEqual(dayOf(src, '2026-09-04T12:00:00Z', '2026-09-07T12:00:00Z', 'America/Santiago'), [
      '2026-09-05T04:00:00.000Z = 2026-09-05 00:00:00-04:00',
      '2026-09-06T04:00:00.000Z = 2026-09-06 01:00:00-03:00',
      '2026-09-07T03:00:00.000Z = 2026-09-07 00:00:00-03:00',
    ]);
    assert.deepEqual(dayOf(src, '2026-04-03T12:00:00Z', '2026-04-06T12:00:00Z', 'America/Santiago'), [
      '2026-04-04T03:00:00.000Z = 2026-04-04 00:00:00-03:00',
      '2026-04-05T04:00:00.000Z = 2026-04-05 00:00:00-04:00',
      '2026-04-06T04:00:00.000Z = 2026-04-06 00:00:00-04:00',
    ]);
  });
});

describe('DST: H follows the rule of its resolved expression', () => {
  const at = (src: ReturnType<typeof source>, fromIso: string, untilIso: string, zone: string): string[] =>
    slotsBetween(src, ms(fromIso), ms(untilIso)).map((s) => local(s, zone));

  it('default/nightly "H H H(2-3) * * *" = "11 35 2 * * *" in Europe/Berlin: a fixed time (gap at 03:00, repeat once)', () => {
    const src = source({ schedule: 'H H H(2-3) * * *', timeZone: 'Europe/Berlin' }, undefined, undefined, 'default/nightly');
    assert.deepEqual(at(src, '2026-03-28T00:00:00Z', '2026-03-30T00:00:00Z', 'Europe/Berlin'), [
      '2026-03-28 02:35:11+01:00',
      '2026-03-29 03:00:00+02:00',
    ]);
    assert.deepEqual(at(src, '2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z', 'Europe/Berlin'), [
      '2026-10-25 02:35:11+02:00',
      '2026-10-26 02:35:11+01:00',
    ]);
  });

  it('default/nightly "H H/30 * * * *" = "11 5-59/30 * * * *" in America/New_York: a wildcard hour follows the wall clock', () => {
    const src = source({ schedule: 'H H/30 * * * *', timeZone: 'America/New_York' }, undefined, undefined, 'default/nightly');
    assert.deepEqual(at(src, '2026-11-01T04:45:00Z', '2026-11-01T07:00:00Z', 'America/New_York'), [
      '2026-11-01 01:05:11-04:00',
      '2026-11-01 01:35:11-04:00',
      '2026-11-01 01:05:11-05:00',
      '2026-11-01 01:35:11-05:00',
    ]);
  });
});
