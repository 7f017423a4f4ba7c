import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCron, type CronFields } from '../../../src/schedule/cron-expression.js';

function fields(expression: string): CronFields {
  const result = parseCron(expression);
  if (!result.ok) assert.fail(`expected ${expression} to parse: ${result.message}`);
  return result.fields;
}

/** The matching values of one field, as a sorted list. */
function valuesOf(set: readonly boolean[]): number[] {
  return set.flatMap((hit, value) => (hit ? [value] : []));
}

function errorOf(expression: string): string {
  const result = parseCron(expression);
  if (result.ok) assert.fail(`expected ${JSON.stringify(expression)} to be rejected`);
  return result.message;
}

describe('parseCron: accepted syntax', () => {
  it('reads single values, ranges, steps and lists', () => {
    const f = fields('5 1-3 */6 1,15,20-22 2-12/5 1-5');
    assert.deepEqual(valuesOf(f.seconds), [5]);
    assert.deepEqual(valuesOf(f.minutes), [1, 2, 3]);
    assert.deepEqual(valuesOf(f.hours), [0, 6, 12, 18]);
    assert.deepEqual(valuesOf(f.daysOfMonth), [1, 15, 20, 21, 22]);
    assert.deepEqual(valuesOf(f.months), [2, 7, 12]);
    assert.deepEqual(valuesOf(f.daysOfWeek), [1, 2, 3, 4, 5]);
  });

  it('reads a/n as "from a to the end, every n" and a-b/n within the range', () => {
    const f = fields('10/20 3-20/7 * * * *');
    assert.deepEqual(valuesOf(f.seconds), [10, 30, 50]);
    assert.deepEqual(valuesOf(f.minutes), [3, 10, 17]);
  });

  it('takes 5 fields as seconds = 0', () => {
    const f = fields('*/15 9-17 * * MON-FRI');
    assert.equal(f.normalized, '0 */15 9-17 * * MON-FRI');
    assert.deepEqual(valuesOf(f.seconds), [0]);
    assert.deepEqual(valuesOf(f.minutes), [0, 15, 30, 45]);
    assert.deepEqual(valuesOf(f.hours), [9, 10, 11, 12, 13, 14, 15, 16, 17]);
    assert.deepEqual(valuesOf(f.daysOfWeek), [1, 2, 3, 4, 5]);
  });

  it('reads month and day names in any case, also inside ranges', () => {
    const f = fields('0 0 0 * jan,Mar-MAY/2,dec sun,Wed-fri');
    assert.deepEqual(valuesOf(f.months), [1, 3, 5, 12]);
    assert.deepEqual(valuesOf(f.daysOfWeek), [0, 3, 4, 5]);
  });

  it('stops a/n in day-of-week at Saturday (7 would add Sunday, as */n stops at 6)', () => {
    assert.deepEqual(valuesOf(fields('0 0 0 * * 1/2').daysOfWeek), [1, 3, 5]);
    assert.deepEqual(valuesOf(fields('0 0 0 * * */2').daysOfWeek), [0, 2, 4, 6]);
    assert.deepEqual(valuesOf(fields('0 0 0 * * 0/3').daysOfWeek), [0, 3, 6]);
    assert.deepEqual(valuesOf(fields('0 0 0 * * 5-7/2').daysOfWeek), [0, 5]);
  });

  it('treats day-of-week 7 as Sunday', () => {
    assert.deepEqual(valuesOf(fields('0 0 0 * * 7').daysOfWeek), [0]);
    assert.deepEqual(valuesOf(fields('0 0 0 * * 5-7').daysOfWeek), [0, 5, 6]);
    assert.deepEqual(valuesOf(fields('0 0 0 * * *').daysOfWeek), [0, 1, 2, 3, 4, 5, 6]);
  });

  it('accepts ? in day-of-month and day-of-week, as *', () => {
    const f = fields('0 0 0 ? * ?');
    assert.equal(valuesOf(f.daysOfMonth).length, 31);
    assert.equal(valuesOf(f.daysOfWeek).length, 7);
    assert.equal(f.dayOfMonthStar, true);
    assert.equal(f.dayOfWeekStar, true);
  });

  it('reads L in day-of-month, alone or in a list', () => {
    const f = fields('0 0 12 L * *');
    assert.equal(f.lastDayOfMonth, true);
    assert.deepEqual(valuesOf(f.daysOfMonth), []);
    const g = fields('0 0 12 1,l * *');
    assert.equal(g.lastDayOfMonth, true);
    assert.deepEqual(valuesOf(g.daysOfMonth), [1]);
  });

  it('expands macros', () => {
    const expected: Record<string, string> = {
      '@yearly': '0 0 0 1 1 *',
      '@annually': '0 0 0 1 1 *',
      '@monthly': '0 0 0 1 * *',
      '@weekly': '0 0 0 * * 0',
      '@daily': '0 0 0 * * *',
      '@midnight': '0 0 0 * * *',
      '@hourly': '0 0 * * * *',
      '@DAILY': '0 0 0 * * *',
    };
    for (const [macro, normalized] of Object.entries(expected)) {
      assert.equal(fields(macro).normalized, normalized, macro);
    }
  });

  it('tolerates extra whitespace between fields', () => {
    assert.equal(fields('  0\t30   2 * * *  ').normalized, '0 30 2 * * *');
  });

  it('marks dom/dow as star only when the field starts with * or ?', () => {
    assert.equal(fields('0 0 0 */2 * 1').dayOfMonthStar, true);
    assert.equal(fields('0 0 0 1-31 * 1').dayOfMonthStar, false);
    assert.equal(fields('0 0 0 1 * ?').dayOfWeekStar, true);
    assert.equal(fields('0 0 0 1 * 0-6').dayOfWeekStar, false);
  });

  it('classifies wildcard (wall-clock) versus fixed-time schedules by minute and hour', () => {
    assert.equal(fields('* * * * * *').wallClockWildcard, true);
    assert.equal(fields('0 */30 * * * *').wallClockWildcard, true);
    assert.equal(fields('0 0 * * * *').wallClockWildcard, true); // hour *
    assert.equal(fields('0 */5 2 * * *').wallClockWildcard, true); // minute */5
    assert.equal(fields('* 30 2 * * *').wallClockWildcard, false); // only seconds vary
    assert.equal(fields('0 0-59 0-23 * * *').wallClockWildcard, false); // Vixie: only a leading * counts
    assert.equal(fields('@daily').wallClockWildcard, false);
    assert.equal(fields('@hourly').wallClockWildcard, true);
  });
});

describe('parseCron: rejected input names the problem and the field', () => {
  const cases: Array<[string, string]> = [
    ['* * *', 'schedule "* * *": expected 5 or 6 fields, got 3'],
    ['', 'schedule "": expected 5 or 6 fields, got 0'],
    ['* * * * * * *', 'expected 5 or 6 fields, got 7'],
    ['60 * * * * *', 'second field "60": value 60 is out of range 0-59'],
    ['0 60 * * * *', 'minute field "60": value 60 is out of range 0-59'],
    ['0 0 24 * * *', 'hour field "24": value 24 is out of range 0-23'],
    ['0 0 0 0 * *', 'day-of-month field "0": value 0 is out of range 1-31'],
    ['0 0 0 32 * *', 'day-of-month field "32": value 32 is out of range 1-31'],
    ['0 0 0 * 13 *', 'month field "13": value 13 is out of range 1-12'],
    ['0 0 0 * 0 *', 'month field "0": value 0 is out of range 1-12'],
    ['0 0 0 * * 8', 'day-of-week field "8": value 8 is out of range 0-7'],
    ['*/0 * * * * *', 'second field "*/0": step must be at least 1'],
    ['0 */x * * * *', 'minute field "*/x": step "x" is not a whole number'],
    ['0 0 5-1 * * *', 'hour field "5-1": range "5-1" is reversed (start is after end)'],
    ['0 0 0 * DEC-JAN *', 'month field "DEC-JAN": range "DEC-JAN" is reversed'],
    ['0 0 0 * FOO *', 'month field "FOO": invalid value "FOO" (expected a number or JAN-DEC)'],
    ['0 0 0 * * MONDAY', 'day-of-week field "MONDAY": invalid value "MONDAY" (expected a number or SUN-SAT)'],
    ['abc * * * * *', 'second field "abc": invalid value "abc"'],
    ['1,,2 * * * * *', 'second field "1,,2": empty list item'],
    ['0 1-2-3 * * * *', 'minute field "1-2-3": invalid value "2-3"'],
    ['0 -5 * * * *', 'minute field "-5": invalid value ""'],
    ['0 0 ? * * *', 'hour field "?": "?" is only allowed in the day-of-month and day-of-week fields'],
    ['0 0 0 * * L', 'day-of-week field "L": "L" is only allowed in the day-of-month field'],
    ['0 0 0 L/2 * *', 'day-of-month field "L/2": "L" cannot have a step'],
    ['0 0 0 1.5 * *', 'day-of-month field "1.5": invalid value "1.5"'],
    ['@every 5s', 'schedule "@every 5s": "@every" is not supported; for a fixed interval set spec.intervalSeconds (e.g. intervalSeconds: 5) instead of schedule'],
    ['@every 1m30s', 'set spec.intervalSeconds (e.g. intervalSeconds: 90)'],
    ['@daily extra', 'schedule "@daily extra": unexpected text "extra" after "@daily" (a macro stands alone)'],
    ['@hourly 5 * * *', 'unexpected text "5 * * *" after "@hourly"'],
    ['TZ=Europe/Berlin 0 0 * * *', 'schedule "TZ=Europe/Berlin 0 0 * * *": the "TZ=" prefix is not supported; set spec.timeZone: Europe/Berlin and schedule "0 0 * * *"'],
    ['CRON_TZ=UTC @daily', 'the "CRON_TZ=" prefix is not supported; set spec.timeZone: UTC and schedule "@daily"'],
  ];
  for (const [expression, expected] of cases) {
    it(`${JSON.stringify(expression)} → ${expected}`, () => {
      const message = errorOf(expression);
      assert.ok(message.includes(expected), `message was: ${message}`);
      assert.ok(message.startsWith(`schedule ${JSON.stringify(expression)}: `), `message was: ${message}`);
    });
  }
});
