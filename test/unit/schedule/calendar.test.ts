import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DAY_MS,
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  weekdayOfDays,
} from '../../../src/schedule/calendar.js';

describe('calendar arithmetic', () => {
  it('agrees with Date.UTC for every day from 1900 to 2200', () => {
    const first = Date.UTC(1900, 0, 1) / DAY_MS;
    const last = Date.UTC(2200, 11, 31) / DAY_MS;
    for (let days = first; days <= last; days++) {
      const date = new Date(days * DAY_MS);
      const civil = civilFromDays(days);
      if (
        civil.year !== date.getUTCFullYear() ||
        civil.month !== date.getUTCMonth() + 1 ||
        civil.day !== date.getUTCDate() ||
        weekdayOfDays(days) !== date.getUTCDay() ||
        daysFromCivil(civil.year, civil.month, civil.day) !== days
      ) {
        assert.fail(`mismatch at ${date.toISOString()}: ${JSON.stringify(civil)} weekday ${weekdayOfDays(days)}`);
      }
    }
  });

  it('knows month lengths, leap years included', () => {
    assert.equal(daysInMonth(2026, 2), 28);
    assert.equal(daysInMonth(2028, 2), 29);
    assert.equal(daysInMonth(2100, 2), 28);
    assert.equal(daysInMonth(2000, 2), 29);
    assert.equal(daysInMonth(2026, 4), 30);
    assert.equal(daysInMonth(2026, 12), 31);
  });
});
