import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileSchedule, type CompileResult, type ScheduleSpec } from '../../../src/schedule/index.js';
import { ms } from './helpers.js';

const NOW = ms('2026-12-02T10:00:00Z');
const ID = 'default/heartbeat';

function failure(spec: ScheduleSpec): Extract<CompileResult, { ok: false }> {
  const result = compileSchedule(spec, NOW, NOW, ID);
  if (result.ok) assert.fail(`expected ${JSON.stringify(spec)} to be rejected`);
  return result;
}

describe('compileSchedule', () => {
  // The timeout only turns an endless loop into a failure; it is not a speed assertion.
  it('rejects never-firing schedules instead of looping', { timeout: 30_000 }, () => {
    for (const schedule of ['0 0 0 30 2 *', '0 0 0 31 4 *', '0 0 0 31 2,4,6,9,11 *', '* * * 30 FEB ?']) {
      const result = failure({ schedule });
      assert.equal(result.reason, 'InvalidSchedule');
      assert.equal(result.message, `schedule "${schedule}": never fires (no matching time within 30 years)`);
    }
    const zoned = compileSchedule({ schedule: '0 0 0 31 4 *', timeZone: 'Europe/Berlin' }, NOW, NOW, ID);
    assert.equal(zoned.ok, false);
  });

  it('accepts an impossible dom when dow is also restricted (Vixie OR: fires on the weekday)', () => {
    const result = compileSchedule({ schedule: '0 0 0 30 2 MON' }, NOW, NOW, ID);
    assert.ok(result.ok);
    assert.equal(result.source.next(NOW), ms('2027-02-01T00:00:00Z'));
  });

  it('reports an unknown time zone', () => {
    const result = failure({ schedule: '* * * * * *', timeZone: 'Mars/Olympus' });
    assert.equal(result.reason, 'UnknownTimeZone');
    assert.equal(result.message, 'unknown time zone "Mars/Olympus"');
  });

  it('suggests the closest known zone for a misspelt one', () => {
    assert.equal(failure({ schedule: '@daily', timeZone: 'Europe/Berln' }).message, 'unknown time zone "Europe/Berln"; did you mean "Europe/Berlin"?');
    assert.equal(failure({ schedule: '@daily', timeZone: 'America/New York' }).message, 'unknown time zone "America/New York"; did you mean "America/New_York"?');
    assert.equal(failure({ schedule: '@daily', timeZone: 'Tokyo' }).message, 'unknown time zone "Tokyo"; did you mean "Asia/Tokyo"?');
  });

  it('checks the time zone before the expression, and reports parse errors as InvalidSchedule', () => {
    assert.equal(failure({ schedule: '* * *', timeZone: 'Nowhere/Land' }).reason, 'UnknownTimeZone');
    const result = failure({ schedule: '* * *' });
    assert.equal(result.reason, 'InvalidSchedule');
    assert.equal(result.message, 'schedule "* * *": expected 5 or 6 fields, got 3');
  });

  it('rejects inconsistent specs the CRD should have caught', () => {
    const cases: Array<[ScheduleSpec, string]> = [
      [{ schedule: '* * * * * *', intervalSeconds: 5 }, 'set exactly one of schedule, schedules or intervalSeconds, not schedule and intervalSeconds'],
      [{ schedule: '* * * * * *', schedules: ['0 * * * * *'] }, 'set exactly one of schedule, schedules or intervalSeconds, not schedule and schedules'],
      [{ schedules: ['0 * * * * *'], intervalSeconds: 5 }, 'set exactly one of schedule, schedules or intervalSeconds, not schedules and intervalSeconds'],
      [{}, 'set one of schedule, schedules or intervalSeconds'],
      [{ timeZone: 'UTC' }, 'set one of schedule, schedules or intervalSeconds'],
      [{ intervalSeconds: 0 }, 'intervalSeconds must be a whole number of at least 1, got 0'],
      [{ intervalSeconds: -3 }, 'intervalSeconds must be a whole number of at least 1, got -3'],
      [{ intervalSeconds: 1.5 }, 'intervalSeconds must be a whole number of at least 1, got 1.5'],
      [{ intervalSeconds: 5, timeZone: 'Europe/Berlin' }, 'timeZone applies to schedule and schedules only, not to intervalSeconds'],
    ];
    for (const [spec, message] of cases) {
      const result = failure(spec);
      assert.equal(result.reason, 'InvalidSchedule', JSON.stringify(spec));
      assert.equal(result.message, message, JSON.stringify(spec));
    }
  });

  it('defaults to UTC and describes the schedule', () => {
    const cron = compileSchedule({ schedule: '0 0 * * *' }, NOW, NOW, ID);
    assert.ok(cron.ok);
    assert.equal(cron.describe, 'cron "0 0 * * *" (0 0 0 * * *) in UTC');
    assert.equal(cron.source.next(NOW), ms('2026-12-03T00:00:00Z'));
    const zoned = compileSchedule({ schedule: '0 0 0 * * *', timeZone: 'Asia/Tokyo' }, NOW, NOW, ID);
    assert.ok(zoned.ok);
    assert.equal(zoned.describe, 'cron "0 0 0 * * *" in Asia/Tokyo');
    assert.equal(zoned.source.next(NOW), ms('2026-12-02T15:00:00Z'));
    const interval = compileSchedule({ intervalSeconds: 5 }, NOW, NOW, ID);
    assert.ok(interval.ok);
    assert.equal(interval.describe, 'every 5s from 2026-12-02T10:00:00.000Z');
  });
});
