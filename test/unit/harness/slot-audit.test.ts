// The failure tests' slot accounting (test/integration/helpers/slot-audit.ts, replica-counters.ts)
// must be able to fail: a missing tail, a gap in the middle and a miscount each produce a problem.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { auditSlots, describeAudit, nextMidSecond, perScheduleProblems, slotProblems } from '../../integration/helpers/slot-audit.js';
import { PER_SCHEDULE_MISSED, countedInNamespace, minus, parseCounts } from '../../integration/helpers/replica-counters.js';

const T0 = Date.parse('2026-12-03T16:00:00Z');
/** Slots T0+1s .. T0+n s, except the given offsets (in seconds). */
const every = (n: number, except: number[] = []): number[] =>
  Array.from({ length: n }, (_, i) => i + 1).filter((k) => !except.includes(k)).map((k) => T0 + k * 1000);

describe('auditSlots', () => {
  test('every slot with a Job: nothing without one, gap one period, no problem when nothing was counted', () => {
    const audit = auditSlots([{ name: 'a', jobSlots: every(20) }, { name: 'b', jobSlots: every(20) }], { fromMs: T0, toMs: T0 + 20_000 });
    assert.equal(audit.slots, 40);
    assert.equal(audit.withoutJob, 0);
    assert.equal(audit.largestGapMs, 1000);
    assert.equal(audit.longestRun, undefined);
    assert.deepEqual(slotProblems(audit, { maxGapMs: 1000, counted: 0, alreadyExists: 0 }), []);
  });

  test('the window is (fromMs, toMs]: the slot at fromMs and Jobs outside it are ignored, repeats count once', () => {
    const audit = auditSlots([{ name: 'a', jobSlots: [T0, ...every(5), T0 + 3000, T0 + 9000] }], { fromMs: T0 + 300, toMs: T0 + 5_700 });
    assert.equal(audit.slots, 5);
    assert.equal(audit.withoutJob, 0);
  });

  test('a missing tail (a leader that never creates another Job) is a gap up to the end of the window', () => {
    const audit = auditSlots([{ name: 'a', jobSlots: every(10) }], { fromMs: T0, toMs: T0 + 20_000 });
    assert.equal(audit.withoutJob, 10);
    assert.deepEqual(audit.longestRun, { schedule: 'a', firstMs: T0 + 11_000, slots: 10, atTail: true });
    assert.equal(audit.largestGapMs, 11_000);
    const problems = slotProblems(audit, { maxGapMs: 5_000, counted: 10 });
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /largest gap 11000 ms > 5000 ms: no Job for the last 10 slot\(s\) of a up to the end of the window/);
    // Even if every one of those slots was counted as missed, the gap still fails the test.
    assert.match(describeAudit(audit), /10 without a Job; largest gap 11000 ms/);
  });

  test('a gap in the middle, on one of several schedules', () => {
    const audit = auditSlots([{ name: 'a', jobSlots: every(20) }, { name: 'b', jobSlots: every(20, [5, 6, 7, 8]) }, { name: 'c', jobSlots: every(20, [12]) }], { fromMs: T0, toMs: T0 + 20_000 });
    assert.equal(audit.withoutJob, 5);
    assert.deepEqual(audit.withoutJobBySchedule, { a: 0, b: 4, c: 1 });
    assert.deepEqual(audit.missing.map((m) => `${m.schedule}+${(m.slotMs - T0) / 1000}`), ['b+5', 'b+6', 'b+7', 'b+8', 'c+12']);
    assert.deepEqual(audit.longestRun, { schedule: 'b', firstMs: T0 + 5_000, slots: 4, atTail: false });
    assert.equal(audit.largestGapMs, 5_000);
    assert.deepEqual(slotProblems(audit, { maxGapMs: 5_000, counted: 5 }), []);
    assert.match(slotProblems(audit, { maxGapMs: 4_000, counted: 5 }).join('\n'), /largest gap 5000 ms > 4000 ms: 4 slot\(s\) of b without a Job from 2026-12-03T16:00:05.000Z/);
  });

  test('a miscount fails both ways: over-counted and under-counted', () => {
    const audit = auditSlots([{ name: 'a', jobSlots: every(10, [3, 4]) }], { fromMs: T0, toMs: T0 + 10_000 });
    assert.equal(audit.withoutJob, 2);
    assert.deepEqual(slotProblems(audit, { maxGapMs: 10_000, counted: 2 }), []);
    assert.deepEqual(slotProblems(audit, { maxGapMs: 10_000, counted: 3 }), ['missed slots counted 3 != slots without a Job 2 (over-counted by 1)']);
    assert.deepEqual(slotProblems(audit, { maxGapMs: 10_000, counted: 0 }), ['missed slots counted 0 != slots without a Job 2 (under-counted by 2)']);
  });

  test('an AlreadyExists answer is flagged as two decisions for one slot', () => {
    const audit = auditSlots([{ name: 'a', jobSlots: every(5) }], { fromMs: T0, toMs: T0 + 5_000 });
    assert.deepEqual(slotProblems(audit, { maxGapMs: 1000, counted: 0, alreadyExists: 1 }), ['1 create(s) answered AlreadyExists: two decisions for one slot']);
  });

  test('another period: slots are its multiples', () => {
    const audit = auditSlots([{ name: 'a', jobSlots: [T0 + 2000, T0 + 6000] }], { fromMs: T0, toMs: T0 + 8_000, periodMs: 2000 });
    assert.equal(audit.slots, 4);
    assert.equal(audit.withoutJob, 2);
    assert.deepEqual(audit.longestRun, { schedule: 'a', firstMs: T0 + 4_000, slots: 1, atTail: false });
    assert.equal(audit.largestGapMs, 4_000);
  });

  test('a phase: once a minute at second 7', () => {
    const audit = auditSlots([{ name: 'a', jobSlots: [T0 + 67_000] }, { name: 'b', jobSlots: [] }], { fromMs: T0, toMs: T0 + 130_000, periodMs: 60_000, phaseMs: 7_000 });
    assert.equal(audit.slots, 6); // T0+7s, T0+67s, T0+127s for each
    assert.deepEqual(audit.withoutJobBySchedule, { a: 2, b: 3 });
  });
});

test('nextMidSecond: the next instant 500 ms past a whole second', () => {
  assert.equal(nextMidSecond(T0 + 100), T0 + 500);
  assert.equal(nextMidSecond(T0 + 500), T0 + 1_500);
  assert.equal(nextMidSecond(T0 + 999), T0 + 1_500);
});

test('parseCounts: missed summed over reasons, AlreadyExists creates alone', () => {
  const text = [
    '# HELP secondcron_triggers_missed_total Slots that did not produce a Job',
    'secondcron_triggers_missed_total{reason="deadline"} 2',
    'secondcron_triggers_missed_total{reason="late"} 3',
    'secondcron_triggers_missed_total{reason="forbid"} 0',
    'secondcron_jobs_created_total{result="created"} 40',
    'secondcron_jobs_created_total{result="already_exists"} 1',
    'secondcron_jobs_created_total{result="error"} 7',
    '',
  ].join('\n');
  assert.deepEqual(parseCounts(text), { missed: 5, alreadyExists: 1, missedBySchedule: {}, perScheduleExported: false });
  assert.deepEqual(minus(parseCounts(text), { missed: 1, alreadyExists: 1, missedBySchedule: {}, perScheduleExported: false }), { missed: 4, alreadyExists: 0, missedBySchedule: {}, perScheduleExported: false });
});

test('parseCounts: the per-schedule count by namespace/name, summed over its other labels', () => {
  const text = [
    `# TYPE ${PER_SCHEDULE_MISSED} counter`,
    `${PER_SCHEDULE_MISSED}{namespace="ns1",name="a",reason="late"} 3`,
    `${PER_SCHEDULE_MISSED}{namespace="ns1",name="a",reason="deadline"} 1`,
    `${PER_SCHEDULE_MISSED}{name="b",namespace="ns1"} 2`,
    `${PER_SCHEDULE_MISSED}{namespace="ns2",name="a"} 5`,
    '',
  ].join('\n');
  const counts = parseCounts(text);
  assert.deepEqual(counts.missedBySchedule, { 'ns1/a': 4, 'ns1/b': 2, 'ns2/a': 5 });
  assert.equal(counts.perScheduleExported, true);
  const later = parseCounts(text.replace('reason="late"} 3', 'reason="late"} 7'));
  assert.deepEqual(countedInNamespace(minus(later, counts), 'ns1'), { exported: true, bySchedule: { a: 4, b: 0 } });
});

test('perScheduleProblems: each schedule both ways, not the sum; a missing per-schedule count is a problem', () => {
  const audit = auditSlots([{ name: 'a', jobSlots: [T0 + 1_000] }, { name: 'b', jobSlots: [T0 + 1_000, T0 + 2_000] }], { fromMs: T0, toMs: T0 + 3_000 });
  assert.deepEqual(audit.withoutJobBySchedule, { a: 2, b: 1 });
  assert.deepEqual(perScheduleProblems(audit, { exported: true, bySchedule: { a: 2, b: 1 } }), []);
  // The same sum (3), wrong per schedule: both directions named.
  assert.deepEqual(perScheduleProblems(audit, { exported: true, bySchedule: { a: 3 } }), [
    'a: missed slots counted 3 != slots without a Job 2 (over-counted by 1)',
    'b: missed slots counted 0 != slots without a Job 1 (under-counted by 1)',
  ]);
  assert.equal(perScheduleProblems(audit, { exported: false, bySchedule: {} }).length, 1);
});
