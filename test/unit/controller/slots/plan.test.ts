// The pure plan, table-tested the way upstream tests syncCronJob: never ran / is due / past deadline /
// still active × Allow / Forbid / Replace × suspended × an outstanding create.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Job, SecondCronJobSpec, SecondCronJobStatus } from '../../../../src/api/resources.js';
import { SlotLedger } from '../../../../src/controller/slots/ledger.js';
import { type Plan, type PlanInput, historyToPrune, plan } from '../../../../src/controller/slots/plan.js';
import { scheduleHash } from '../../../../src/controller/slots/schedule-hash.js';
import { compileSchedule } from '../../../../src/schedule/index.js';
import { job, scj } from '../fixtures.js';

const T = (s: number): number => Date.parse('2026-12-02T10:00:00Z') + s * 1000;
const running = (s: number): Job => job(`hb-${s}`, { slot: new Date(T(s)).toISOString() });
const done = (s: number): Job => job(`hb-${s}`, { slot: new Date(T(s)).toISOString(), outcome: 'Complete', completion: new Date(T(s) + 500).toISOString() });

interface Case {
  spec?: Partial<SecondCronJobSpec>;
  status?: SecondCronJobStatus;
  jobs?: Job[];
  /** Slot (seconds) this replica decided through; undefined = nothing decided yet. */
  decided?: number;
  create?: { slot: number; sent: boolean; nothingStored: boolean };
  /** The schedule changed (or resumed) at this second. */
  changed?: number;
  /** Enqueue: the slot (second) waiting for a free place. */
  queued?: number;
  templateInvalid?: boolean;
  /** Seconds after 10:00:00. */
  now: number;
}

function input(c: Case): PlanInput {
  const resource = { ...scj(c.spec ?? {}), ...(c.status ? { status: c.status } : {}) };
  const compiled = compileSchedule({ intervalSeconds: resource.spec.intervalSeconds, schedule: resource.spec.schedule }, T(0), T(c.now), 'ns/hb');
  assert.ok(compiled.ok);
  const ledger = new SlotLedger();
  if (c.decided !== undefined) ledger.decideThrough(T(c.decided));
  if (c.create) {
    ledger.createQueued(T(c.create.slot));
    if (c.create.sent) ledger.createSent();
    else if (!c.create.nothingStored) ledger.createRetrying(false);
  }
  if (c.changed !== undefined) ledger.scheduleChanged(T(c.changed));
  if (c.queued !== undefined) ledger.queue(T(c.queued));
  return { scj: resource, source: compiled.source, templateInvalid: c.templateInvalid ?? false, jobs: c.jobs ?? [], ledger, nowMs: T(c.now) };
}

const run = (c: Case): Plan => plan(input(c));
/** The names historyToPrune picks for the case. */
const pruned = (c: Case): string[] => historyToPrune(input(c)).map((j) => j.metadata.name);

const summary = (p: Plan): Record<string, unknown> => ({
  create: p.create ? (p.create.slotMs - T(0)) / 1000 : null,
  replace: p.replace.map((j) => j.metadata.name),
  missed: p.missed.map((m) => `${m.reason}:${m.count}`),
  decided: (p.decidedThroughMs - T(0)) / 1000,
  outstanding: p.outstanding,
  ...(p.queued !== undefined ? { queued: (p.queued - T(0)) / 1000 } : {}),
});

const cases: [string, Case, Record<string, unknown>][] = [
  ['never ran, not yet due', { now: 0.5 }, { create: null, replace: [], missed: [], decided: -Infinity, outstanding: 'keep' }],
  ['never ran, due', { now: 1.2 }, { create: 1, replace: [], missed: [], decided: 0.999, outstanding: 'keep' }],
  ['three due at once: the latest runs, two late', { now: 3.2 }, { create: 3, replace: [], missed: ['late:2'], decided: 2.999, outstanding: 'keep' }],
  ['already decided', { decided: 3, now: 3.5 }, { create: null, replace: [], missed: [], decided: 3, outstanding: 'keep' }],
  ['status says a previous leader ran slot 5', { status: { lastScheduleTime: '2026-12-02T10:00:05Z' }, now: 6.1 }, { create: 6, replace: [], missed: [], decided: 5.999, outstanding: 'keep' }],
  ['nextScheduleTime: decided before it', { status: { observedGeneration: 1, nextScheduleTime: '2026-12-02T10:00:05Z' }, now: 5.1 }, { create: 5, replace: [], missed: [], decided: 4.999, outstanding: 'keep' }],
  ['nextScheduleTime of an older generation says nothing', { status: { observedGeneration: 0, nextScheduleTime: '2026-12-02T10:00:05Z' }, now: 5.1 }, { create: 5, replace: [], missed: ['late:4'], decided: 4.999, outstanding: 'keep' }],
  ['nextScheduleTime of an older generation, same schedule hash (a template edit): trusted', { status: { observedGeneration: 0, nextScheduleTime: '2026-12-02T10:00:05Z', scheduleHash: scheduleHash(scj()) }, now: 5.1 }, { create: 5, replace: [], missed: [], decided: 4.999, outstanding: 'keep' }],
  ['nextScheduleTime of another schedule (hash differs): says nothing', { status: { observedGeneration: 1, nextScheduleTime: '2026-12-02T10:00:05Z', scheduleHash: scheduleHash(scj({ intervalSeconds: 2 })) }, now: 5.1 }, { create: 5, replace: [], missed: ['late:4'], decided: 4.999, outstanding: 'keep' }],
  ['a Job of slot 4 exists', { jobs: [done(4)], now: 5.1 }, { create: 5, replace: [], missed: [], decided: 4.999, outstanding: 'keep' }],
  ['Allow with a running Job', { jobs: [running(1)], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, outstanding: 'keep' }],
  ['Forbid with a running Job', { spec: { concurrencyPolicy: 'Forbid' }, jobs: [running(1)], decided: 1, now: 2.1 }, { create: null, replace: [], missed: ['forbid:1'], decided: 2, outstanding: 'keep' }],
  ['Forbid with a finished Job', { spec: { concurrencyPolicy: 'Forbid' }, jobs: [done(1)], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, outstanding: 'keep' }],
  ['Forbid, two due, running Job', { spec: { concurrencyPolicy: 'Forbid' }, jobs: [running(1)], decided: 1, now: 3.1 }, { create: null, replace: [], missed: ['late:1', 'forbid:1'], decided: 3, outstanding: 'keep' }],
  ['Replace with a running Job', { spec: { concurrencyPolicy: 'Replace' }, jobs: [running(1)], decided: 1, now: 2.1 }, { create: 2, replace: ['hb-1'], missed: [], decided: 1.999, outstanding: 'keep' }],
  ['Replace with a finished Job', { spec: { concurrencyPolicy: 'Replace' }, jobs: [done(1)], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, outstanding: 'keep' }],
  ['past the starting deadline', { spec: { intervalSeconds: 10, startingDeadlineSeconds: 2 }, decided: 0, now: 22.5 }, { create: null, replace: [], missed: ['late:1', 'deadline:1'], decided: 20, outstanding: 'keep' }],
  ['at the starting deadline', { spec: { intervalSeconds: 10, startingDeadlineSeconds: 2 }, decided: 0, now: 12 }, { create: 10, replace: [], missed: [], decided: 9.999, outstanding: 'keep' }],
  ['no deadline: lateness alone never skips', { decided: 1, now: 2.9 }, { create: 2, replace: [], missed: [], decided: 1.999, outstanding: 'keep' }],
  ['suspended: due slots neither decided nor counted (the resume skips them); what was decided stays', { spec: { suspend: true }, decided: 1, now: 5.5 }, { create: null, replace: [], missed: [], decided: 1, outstanding: 'keep' }],
  ['template invalid: counted as error', { templateInvalid: true, decided: 1, now: 2.1 }, { create: null, replace: [], missed: ['error:1'], decided: 2, outstanding: 'keep' }],
  ['Forbid, create on the wire: nothing newer decided', { spec: { concurrencyPolicy: 'Forbid' }, create: { slot: 1, sent: true, nothingStored: true }, now: 3.1 }, { create: null, replace: [], missed: [], decided: 1, outstanding: 'keep' }],
  ['Replace, unknown outcome retrying: nothing newer decided', { spec: { concurrencyPolicy: 'Replace' }, create: { slot: 1, sent: false, nothingStored: false }, now: 3.1 }, { create: null, replace: [], missed: [], decided: 1, outstanding: 'keep' }],
  ['Allow, create on the wire: nothing newer decided until its answer', { create: { slot: 1, sent: true, nothingStored: true }, now: 3.1 }, { create: null, replace: [], missed: [], decided: 1, outstanding: 'keep' }],
  ['429 retrying: superseded by the newer slot', { create: { slot: 1, sent: false, nothingStored: true }, now: 3.1 }, { create: 3, replace: [], missed: ['late:1', 'late:1'], decided: 2.999, outstanding: 'supersede' }],
  ['429 retrying, no newer slot: keeps retrying', { create: { slot: 1, sent: false, nothingStored: true }, now: 1.9 }, { create: null, replace: [], missed: [], decided: 1, outstanding: 'keep' }],
  ['Forbid, 429 retrying, newer slot: superseded, then created', { spec: { concurrencyPolicy: 'Forbid' }, create: { slot: 1, sent: false, nothingStored: true }, now: 2.1 }, { create: 2, replace: [], missed: ['late:1'], decided: 1.999, outstanding: 'supersede' }],
  ['Forbid with an unfinished Job being deleted: still active until it is gone', { spec: { concurrencyPolicy: 'Forbid' }, jobs: [{ ...running(1), metadata: { ...running(1).metadata, deletionTimestamp: '2026-12-02T10:00:01Z' } }], decided: 1, now: 2.1 }, { create: null, replace: [], missed: ['forbid:1'], decided: 2, outstanding: 'keep' }],
  ['Replace with a Job whose delete was accepted: not deleted again', { spec: { concurrencyPolicy: 'Replace' }, jobs: [{ ...running(1), metadata: { ...running(1).metadata, deletionTimestamp: '2026-12-02T10:00:01Z' } }], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, outstanding: 'keep' }],
  ['suspended with a 429 retrying: dropped, its slot counted late (I6)', { spec: { suspend: true }, create: { slot: 1, sent: false, nothingStored: true }, now: 1.5 }, { create: null, replace: [], missed: ['late:1'], decided: 1, outstanding: 'supersede' }],
  ['suspended with an unknown outcome retrying: settled by a lookup', { spec: { suspend: true }, create: { slot: 1, sent: false, nothingStored: false }, now: 1.5 }, { create: null, replace: [], missed: [], decided: 1, outstanding: 'settle' }],
  ['suspended with a create on the wire: its answer first', { spec: { suspend: true }, create: { slot: 1, sent: true, nothingStored: true }, now: 1.5 }, { create: null, replace: [], missed: [], decided: 1, outstanding: 'keep' }],
  ['a retrying create of the schedule before an edit: dropped (I7)', { create: { slot: 1, sent: false, nothingStored: true }, changed: 1.5, now: 1.6 }, { create: null, replace: [], missed: ['late:1'], decided: 1.5, outstanding: 'supersede' }],
  ['Forbid, maxConcurrency 2, one running: a second Job', { spec: { concurrencyPolicy: 'Forbid', maxConcurrency: 2 }, jobs: [running(1)], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, outstanding: 'keep' }],
  ['Forbid, maxConcurrency 2, two running: skipped', { spec: { concurrencyPolicy: 'Forbid', maxConcurrency: 2 }, jobs: [running(1), running(2)], decided: 2, now: 3.1 }, { create: null, replace: [], missed: ['forbid:1'], decided: 3, outstanding: 'keep' }],
  ['Enqueue with a running Job: the slot waits, nothing counted', { spec: { concurrencyPolicy: 'Enqueue' }, jobs: [running(1)], decided: 1, now: 2.1 }, { create: null, replace: [], missed: [], decided: 2, outstanding: 'keep', queued: 2 }],
  ['Enqueue with a free place: created at once', { spec: { concurrencyPolicy: 'Enqueue' }, jobs: [done(1)], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, outstanding: 'keep' }],
  ['Enqueue: the waiting slot runs once the Job finished, late but with its own slot', { spec: { concurrencyPolicy: 'Enqueue' }, jobs: [done(1)], decided: 2, queued: 2, now: 2.8 }, { create: 2, replace: [], missed: [], decided: 2, outstanding: 'keep' }],
  ['Enqueue: still full, the waiting slot keeps waiting', { spec: { concurrencyPolicy: 'Enqueue' }, jobs: [running(1)], decided: 2, queued: 2, now: 2.8 }, { create: null, replace: [], missed: [], decided: 2, outstanding: 'keep', queued: 2 }],
  ['Enqueue: a newer due slot takes the waiting one\'s place, which is counted late', { spec: { concurrencyPolicy: 'Enqueue' }, jobs: [running(1)], decided: 2, queued: 2, now: 3.1 }, { create: null, replace: [], missed: ['late:1'], decided: 3, outstanding: 'keep', queued: 3 }],
  ['Enqueue: the waiting slot past its starting deadline is missed', { spec: { concurrencyPolicy: 'Enqueue', intervalSeconds: 10, startingDeadlineSeconds: 2 }, jobs: [done(1)], decided: 10, queued: 10, now: 13 }, { create: null, replace: [], missed: ['deadline:1'], decided: 10, outstanding: 'keep' }],
  ['Enqueue, maxConcurrency 2, one running: created', { spec: { concurrencyPolicy: 'Enqueue', maxConcurrency: 2 }, jobs: [running(1)], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, outstanding: 'keep' }],
  ['Enqueue, suspended with a waiting slot: dropped and counted', { spec: { concurrencyPolicy: 'Enqueue', suspend: true }, jobs: [running(1)], decided: 2, queued: 2, now: 2.5 }, { create: null, replace: [], missed: ['late:1'], decided: 2, outstanding: 'keep' }],
  ['Enqueue: a slot a previous leader left waiting (status) is taken over', { spec: { concurrencyPolicy: 'Enqueue' }, status: { nextScheduleTime: '2026-12-02T10:00:03Z', queuedScheduleTime: '2026-12-02T10:00:02Z', scheduleHash: scheduleHash(scj({ concurrencyPolicy: 'Enqueue' })) }, jobs: [done(1)], now: 2.8 }, { create: 2, replace: [], missed: [], decided: -Infinity, outstanding: 'keep' }],
  ['clock stepped back behind decided slots', { decided: 10, now: 7.5 }, { create: null, replace: [], missed: [], decided: 10, outstanding: 'keep' }],
  ['suspended after a wall-clock step back: what the status kept while suspended stays decided', { spec: { suspend: true }, status: { suspendedNextScheduleTime: '2026-12-02T10:00:10Z', scheduleHash: scheduleHash(scj({ suspend: true })) }, now: 7.5 }, { create: null, replace: [], missed: [], decided: 9.999, outstanding: 'keep' }],
];

for (const [name, c, want] of cases) {
  test(`plan: ${name}`, () => assert.deepEqual(summary(run(c)), want));
}

test('history: history limits prune the oldest finished Jobs, also with no slot due, and skip Jobs being deleted', () => {
  assert.deepEqual(pruned({ spec: { successfulJobsHistoryLimit: 1, intervalSeconds: 3600 }, status: { lastScheduleTime: '2026-12-02T10:00:03Z' }, jobs: [done(1), done(2), done(3)], now: 4 }).sort(), ['hb-1', 'hb-2']);
});

test('history: history is by start time, as upstream: a long Job that finished last is still the oldest', () => {
  const long = { ...done(1), status: { ...done(1).status, startTime: new Date(T(1)).toISOString(), completionTime: new Date(T(9)).toISOString() } };
  const short = { ...done(2), status: { ...done(2).status, startTime: new Date(T(2)).toISOString(), completionTime: new Date(T(3)).toISOString() } };
  assert.deepEqual(pruned({ spec: { successfulJobsHistoryLimit: 1, intervalSeconds: 3600 }, status: { lastScheduleTime: '2026-12-02T10:00:02Z' }, jobs: [long, short], now: 10 }), ['hb-1']);
});

test('history: history limit 0 keeps a Job until the persisted status covers its slot (I11), and never prunes the outstanding slot', () => {
  const spec = { successfulJobsHistoryLimit: 0, intervalSeconds: 3600 };
  assert.deepEqual(pruned({ spec, jobs: [done(1), done(2)], now: 4 }), [], 'no status yet: a new leader would run both again');
  assert.deepEqual(pruned({ spec, status: { lastScheduleTime: '2026-12-02T10:00:01Z' }, jobs: [done(1), done(2)], now: 4 }), ['hb-1']);
  const retrying = pruned({ spec, status: { lastScheduleTime: '2026-12-02T10:00:02Z' }, jobs: [done(1), done(2)], create: { slot: 2, sent: false, nothingStored: false }, now: 4 });
  assert.deepEqual(retrying, ['hb-1'], "the retry of slot 2 would store a second Job once its first is pruned");
});

test('plan: without a starting deadline a create has none (retried until answered or superseded)', () => {
  const p = run({ now: 1.2 });
  assert.equal(p.create?.deadlineMs, Number.POSITIVE_INFINITY);
  assert.equal(p.create?.supersededAtMs, T(2));
});

test('plan: an every-second schedule after a day of downtime: one create, the rest counted', () => {
  const p = run({ spec: { schedule: '* * * * * *', intervalSeconds: undefined }, decided: 0, now: 86_400.5 });
  assert.deepEqual(summary(p), { create: 86_400, replace: [], missed: ['late:86399'], decided: 86_399.999, outstanding: 'keep' });
});
