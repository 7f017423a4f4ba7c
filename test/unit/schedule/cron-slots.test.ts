import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstSlots, iso, ms, slotsBetween, source } from './helpers.js';

describe('cron slots (UTC)', () => {
  it('fires every second without gaps, and next() on a slot returns the following one', () => {
    const src = source({ schedule: '* * * * * *' });
    assert.equal(iso(src.next(ms('2026-05-01T10:00:00Z'))), '2026-05-01T10:00:01.000Z');
    assert.equal(iso(src.next(ms('2026-05-01T10:00:00.999Z'))), '2026-05-01T10:00:01.000Z');
    assert.equal(iso(src.next(ms('2026-05-01T10:00:00.001Z'))), '2026-05-01T10:00:01.000Z');
    const slots = slotsBetween(src, ms('2026-12-31T23:59:00Z'), ms('2027-01-01T00:01:00Z'));
    assert.equal(slots.length, 120);
    slots.forEach((s, i) => assert.equal(s, ms('2026-12-31T23:59:01Z') + i * 1000));
  });

  it('does not fire 1/2 in day-of-week on Sunday (Mon, Wed, Fri only)', () => {
    const src = source({ schedule: '0 0 0 * * 1/2' });
    assert.deepEqual(firstSlots(src, '2026-01-08T12:00:00Z', 4), [
      '2026-01-09T00:00:00.000Z',
      '2026-01-12T00:00:00.000Z',
      '2026-01-14T00:00:00.000Z',
      '2026-01-16T00:00:00.000Z',
    ]);
  });

  it('fires on the last day of each month with L', () => {
    const src = source({ schedule: '0 0 12 L * *' });
    assert.deepEqual(firstSlots(src, '2026-01-01T00:00:00Z', 4), [
      '2026-01-31T12:00:00.000Z',
      '2026-02-28T12:00:00.000Z',
      '2026-03-31T12:00:00.000Z',
      '2026-04-30T12:00:00.000Z',
    ]);
    assert.equal(iso(src.next(ms('2027-02-01T00:00:00Z'))), '2027-02-28T12:00:00.000Z');
    assert.equal(iso(src.next(ms('2028-02-01T00:00:00Z'))), '2028-02-29T12:00:00.000Z');
    assert.equal(iso(src.next(ms('2026-12-31T12:00:00Z'))), '2027-01-31T12:00:00.000Z');
  });

  it('finds Feb 29 years ahead, and skips 2100 (not a leap year)', () => {
    const src = source({ schedule: '0 0 0 29 2 *' });
    assert.equal(iso(src.next(ms('2026-03-01T00:00:00Z'))), '2028-02-29T00:00:00.000Z');
    assert.equal(iso(src.next(ms('2028-02-29T00:00:00Z'))), '2032-02-29T00:00:00.000Z');
    assert.equal(iso(src.next(ms('2097-01-01T00:00:00Z'))), '2104-02-29T00:00:00.000Z');
  });

  it('matches a day when EITHER dom or dow matches if both are restricted (Vixie)', () => {
    // 13th of the month OR a Friday; 2026-02: Fri 6, 13 (both), 20, 27; 2026-03: Fri 6, Fri 13, ...
    const src = source({ schedule: '0 0 0 13 * FRI' });
    assert.deepEqual(firstSlots(src, '2026-02-01T00:00:00Z', 6), [
      '2026-02-06T00:00:00.000Z',
      '2026-02-13T00:00:00.000Z',
      '2026-02-20T00:00:00.000Z',
      '2026-02-27T00:00:00.000Z',
      '2026-03-06T00:00:00.000Z',
      '2026-03-13T00:00:00.000Z',
    ]);
    // L or Monday: 2026-04 Mondays 6, 13, 20, 27 and the 30th (a Thursday).
    assert.deepEqual(firstSlots(source({ schedule: '0 0 0 L * MON' }), '2026-04-20T00:00:00Z', 3), [
      '2026-04-27T00:00:00.000Z',
      '2026-04-30T00:00:00.000Z',
      '2026-05-04T00:00:00.000Z',
    ]);
  });

  it('requires BOTH when either dom or dow starts with * or ?', () => {
    // Mondays only.
    assert.deepEqual(firstSlots(source({ schedule: '0 0 0 * * MON' }), '2026-01-01T00:00:00Z', 2), [
      '2026-01-05T00:00:00.000Z',
      '2026-01-12T00:00:00.000Z',
    ]);
    // Odd days of month that are also Mondays: Jan 5, Jan 19, then Feb 9 (Feb 2 and 16 are even).
    assert.deepEqual(firstSlots(source({ schedule: '0 0 0 */2 * 1' }), '2026-01-01T00:00:00Z', 3), [
      '2026-01-05T00:00:00.000Z',
      '2026-01-19T00:00:00.000Z',
      '2026-02-09T00:00:00.000Z',
    ]);
    // The 1st only (? in dow).
    assert.deepEqual(firstSlots(source({ schedule: '0 0 0 1 * ?' }), '2026-01-15T00:00:00Z', 2), [
      '2026-02-01T00:00:00.000Z',
      '2026-03-01T00:00:00.000Z',
    ]);
  });

  it('handles names, steps, ranges and 5-field expressions', () => {
    assert.deepEqual(firstSlots(source({ schedule: '*/15 9-17 * * MON-FRI' }), '2026-01-02T17:44:00Z', 3), [
      '2026-01-02T17:45:00.000Z', // Friday
      '2026-01-05T09:00:00.000Z', // Monday
      '2026-01-05T09:15:00.000Z',
    ]);
    assert.deepEqual(firstSlots(source({ schedule: '10-30/10 0 0 1 JAN,jul *' }), '2026-01-01T00:00:10Z', 3), [
      '2026-01-01T00:00:20.000Z',
      '2026-01-01T00:00:30.000Z',
      '2026-07-01T00:00:10.000Z',
    ]);
    assert.deepEqual(firstSlots(source({ schedule: '*/5 * * * * 7' }), '2026-01-03T23:59:55Z', 2), [
      '2026-01-04T00:00:00.000Z', // Sunday (7)
      '2026-01-04T00:00:05.000Z',
    ]);
  });

  it('expands macros', () => {
    const from = '2026-05-15T10:20:30Z';
    const expected: Record<string, string> = {
      '@yearly': '2027-01-01T00:00:00.000Z',
      '@annually': '2027-01-01T00:00:00.000Z',
      '@monthly': '2026-06-01T00:00:00.000Z',
      '@weekly': '2026-05-17T00:00:00.000Z', // Sunday
      '@daily': '2026-05-16T00:00:00.000Z',
      '@midnight': '2026-05-16T00:00:00.000Z',
      '@hourly': '2026-05-15T11:00:00.000Z',
    };
    for (const [macro, next] of Object.entries(expected)) {
      assert.deepEqual(firstSlots(source({ schedule: macro }), from, 1), [next], macro);
    }
  });

  it('carries across minute, hour, day, month and year boundaries', () => {
    const src = source({ schedule: '59 59 23 31 12 *' });
    assert.equal(iso(src.next(ms('2026-12-31T23:59:59Z'))), '2027-12-31T23:59:59.000Z');
    assert.equal(iso(src.next(ms('2026-06-01T00:00:00Z'))), '2026-12-31T23:59:59.000Z');
  });

  it('applies a fixed-offset zone (Etc/GMT-14 is UTC+14)', () => {
    const src = source({ schedule: '0 0 0 * * *', timeZone: 'Etc/GMT-14' });
    assert.equal(iso(src.next(ms('2026-05-01T00:00:00Z'))), '2026-05-01T10:00:00.000Z');
  });
});
