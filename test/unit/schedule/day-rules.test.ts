import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dayRuleDifference } from '../../../src/schedule/day-rules.js';
import { formatDuration, formatInZone } from '../../../src/schedule/format.js';

test('a step in one day field with the other restricted: Vixie ANDs, robfig/cron ORs', () => {
  const d = dayRuleDifference('0 0 */2 * 1-5');
  assert.equal(d?.secondcron, 'both');
  assert.equal(d?.cronJob, 'either');
  assert.match(d?.message ?? '', /day-of-month "\*\/2" with day-of-week "1-5"/);
  assert.equal(dayRuleDifference('0 0 0 * * */2')?.cronJob, undefined, 'day-of-month "*": both AND everywhere');
  assert.equal(dayRuleDifference('0 0 1 * */2')?.secondcron, 'both');
  // A list holding "*" is a star to robfig but not to Vixie (first character).
  assert.deepEqual([dayRuleDifference('0 0 1,* * MON')?.secondcron, dayRuleDifference('0 0 1,* * MON')?.cronJob], ['either', 'both']);
});

test('no warning where both agree or the expression has no restricted day pair', () => {
  for (const e of ['*/5 * * * *', '0 0 1 * MON', '0 0 * * MON', '0 0 1-15 * *', '@daily', '0 0 */1 * MON', 'not cron']) {
    assert.equal(dayRuleDifference(e), undefined, e);
  }
});

test('formatInZone prints the wall time and offset the slot math uses, across DST', () => {
  assert.equal(formatInZone(Date.parse('2026-03-29T00:59:59Z'), 'Europe/Berlin'), '2026-03-29T01:59:59+01:00');
  assert.equal(formatInZone(Date.parse('2026-03-29T01:00:00Z'), 'Europe/Berlin'), '2026-03-29T03:00:00+02:00');
  assert.equal(formatInZone(Date.parse('2026-12-02T10:00:05.900Z')), '2026-12-02T10:00:05Z');
  assert.equal(formatInZone(Date.parse('2026-12-02T10:00:05Z'), 'Asia/Kolkata'), '2026-12-02T15:30:05+05:30');
  assert.equal(formatInZone(Date.parse('2026-12-02T10:00:05Z'), 'America/St_Johns'), '2026-12-02T06:30:05-03:30');
  assert.equal(formatDuration(3_723_000), '1h2m3s');
  assert.equal(formatDuration(59_400), '59s');
  assert.equal(formatDuration(61_000), '1m1s');
});
