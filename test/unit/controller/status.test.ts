import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CONDITION_MESSAGE_MAX, desiredStatus, mergeCondition, statusEquals } from '../../../src/controller/status.js';
import { scheduleHash } from '../../../src/controller/slots/schedule-hash.js';
import { job, scj } from './fixtures.js';

const now = Date.parse('2026-12-02T10:00:10Z');
const ready = { status: 'True' as const, reason: 'Scheduled', message: 'Scheduled: every 1s' };

test('status is derived from the owned Jobs: active list, last schedule, last success, next', () => {
  const owner = scj();
  const jobs = [
    job('hb-1', { slot: '2026-12-02T10:00:05Z', outcome: 'Complete', completion: '2026-12-02T10:00:06Z' }),
    job('hb-2', { slot: '2026-12-02T10:00:08Z' }),
    job('hb-3', { slot: '2026-12-02T10:00:09Z' }),
  ];
  const s = desiredStatus({ scj: owner, ownedJobs: jobs, nextSlotMs: now + 1000, lastScheduledMs: undefined, resolvedSchedule: undefined, ready, readyGeneration: 1, nowMs: now });
  assert.equal(s.observedGeneration, 1);
  assert.equal(s.lastScheduleTime, '2026-12-02T10:00:09Z');
  assert.equal(s.lastSuccessfulTime, '2026-12-02T10:00:06Z');
  assert.equal(s.nextScheduleTime, '2026-12-02T10:00:11Z');
  assert.deepEqual(s.active?.map((r) => r.name), ['hb-2', 'hb-3']);
  assert.equal(s.activeCount, 2);
  assert.equal(s.conditions?.[0]?.reason, 'Scheduled');
});

test('a slot created moments ago counts before its Job reaches the cache; older status is never moved back', () => {
  const owner = scj({}, {});
  owner.status = { lastScheduleTime: '2026-12-02T10:00:30Z' };
  const s = desiredStatus({ scj: owner, ownedJobs: [], nextSlotMs: null, lastScheduledMs: Date.parse('2026-12-02T10:00:20Z'), resolvedSchedule: undefined, ready, readyGeneration: 1, nowMs: now });
  assert.equal(s.lastScheduleTime, '2026-12-02T10:00:30Z');
  assert.equal(s.nextScheduleTime, undefined);
  const s2 = desiredStatus({ scj: scj(), ownedJobs: [], nextSlotMs: null, lastScheduledMs: Date.parse('2026-12-02T10:00:20Z'), resolvedSchedule: undefined, ready, readyGeneration: 1, nowMs: now });
  assert.equal(s2.lastScheduleTime, '2026-12-02T10:00:20Z');
});

test('suspended: no nextScheduleTime; the first slot not decided is kept as suspendedNextScheduleTime, with the schedule hash', () => {
  const s = desiredStatus({ scj: scj({ suspend: true }), ownedJobs: [], nextSlotMs: null, suspendedNextSlotMs: now + 1000, lastScheduledMs: undefined, resolvedSchedule: undefined, ready, readyGeneration: 1, nowMs: now });
  assert.equal(s.nextScheduleTime, undefined);
  assert.equal(s.suspendedNextScheduleTime, '2026-12-02T10:00:11Z');
  assert.equal(s.scheduleHash, scheduleHash(scj({ suspend: true })));
  const resumed = desiredStatus({ scj: scj(), ownedJobs: [], nextSlotMs: now + 1000, lastScheduledMs: undefined, resolvedSchedule: undefined, ready, readyGeneration: 1, nowMs: now });
  assert.equal(resumed.suspendedNextScheduleTime, undefined);
  assert.equal(resumed.nextScheduleTime, '2026-12-02T10:00:11Z');
});

test('condition keeps lastTransitionTime while its status is unchanged', () => {
  const first = mergeCondition([], { type: 'Ready', ...ready }, 1, now);
  const same = mergeCondition(first, { type: 'Ready', status: 'True', reason: 'Suspended', message: 'm' }, 2, now + 5000);
  assert.equal(same[0]?.lastTransitionTime, first[0]?.lastTransitionTime);
  assert.equal(same[0]?.observedGeneration, 2);
  const flipped = mergeCondition(same, { type: 'Ready', status: 'False', reason: 'InvalidSchedule', message: 'bad' }, 3, now + 7000);
  assert.equal(flipped[0]?.lastTransitionTime, '2026-12-02T10:00:17Z');
  assert.equal(flipped.length, 1);
});

test('statusEquals ignores key order (the API server sorts keys) but sees real changes', () => {
  const a = desiredStatus({ scj: scj(), ownedJobs: [], nextSlotMs: now, lastScheduledMs: undefined, resolvedSchedule: undefined, ready, readyGeneration: 1, nowMs: now });
  const reordered = JSON.parse(JSON.stringify(a, Object.keys(a).sort().concat(['type', 'status', 'reason', 'message', 'lastTransitionTime', 'observedGeneration'])));
  assert.equal(statusEquals(reordered, a), true);
  assert.equal(statusEquals({ ...a, nextScheduleTime: '2030-01-01T00:00:00Z' }, a), false);
  assert.equal(statusEquals(undefined, a), false);
  assert.equal(statusEquals({ ...a, lastSuccessfulTime: undefined }, a), true, 'an undefined member is an absent one');
  assert.equal(statusEquals({ ...a, activeCount: 1, active: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', namespace: 'ns', uid: 'u' }] }, { ...a, activeCount: 1, active: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', namespace: 'ns', uid: 'v' }] }), false, 'nested changes count');
  assert.equal(statusEquals({ ...a, active: [] }, a), true, 'an empty active list is no list (the API server drops it)');
});

test('a condition message longer than metav1.Condition allows is cut to fit (in characters), a shorter one kept', () => {
  const long = 'é'.repeat(CONDITION_MESSAGE_MAX + 10);
  const [cut] = mergeCondition([], { type: 'Ready', status: 'False', reason: 'InvalidJobTemplate', message: long }, 1, now);
  assert.equal([...(cut?.message ?? '')].length, CONDITION_MESSAGE_MAX);
  assert.ok(cut?.message.endsWith('é…'));
  const exact = 'x'.repeat(CONDITION_MESSAGE_MAX);
  assert.equal(mergeCondition([], { type: 'Ready', status: 'False', reason: 'InvalidJobTemplate', message: exact }, 1, now)[0]?.message, exact);
});

test('resolvedSchedule is the cron schedule as it runs, and absent when there is none (interval, invalid)', () => {
  const hashed = desiredStatus({ scj: scj({ intervalSeconds: undefined, schedule: 'H * * * * *' }), ownedJobs: [], nextSlotMs: null, lastScheduledMs: undefined, resolvedSchedule: '49 * * * * *', ready, readyGeneration: 1, nowMs: now });
  assert.equal(hashed.resolvedSchedule, '49 * * * * *');
  const none = desiredStatus({ scj: scj(), ownedJobs: [], nextSlotMs: null, lastScheduledMs: undefined, resolvedSchedule: undefined, ready, readyGeneration: 1, nowMs: now });
  assert.equal(Object.hasOwn(none, 'resolvedSchedule'), false);
});
