// The pure plan, table-tested the way upstream tests syncCronJob: never ran / is due / past deadline /
// still active × Allow / Forbid / Replace × suspended × an outstanding create.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Job, SecondCronJobSpec, SecondCronJobStatus } from '../../../../src/controller/api.js';
import { SlotLedger } from '../../../../src/controller/slots/ledger.js';
import { type Plan, plan } from '../../../../src/controller/slots/plan.js';
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
  templateInvalid?: boolean;
  /** Seconds after 10:00:00. */
  now: number;
}

function run(c: Case): Plan {
  const resource = { ...scj(c.spec ?? {}), ...(c.status ? { status: c.status } : {}) };
  const compiled = compileSchedule({ intervalSeconds: resource.spec.intervalSeconds, schedule: resource.spec.schedule }, T(0), T(c.now), 'ns/hb');
  assert.ok(compiled.ok);
  const ledger = new SlotLedger();
  if (c.decided !== undefined) ledger.scheduleChanged(T(c.decided));
  if (c.create) {
    ledger.decide({ supersede: false, decidedThroughMs: T(c.create.slot), create: { slotMs: T(c.create.slot), deadlineMs: T(c.create.slot) + 60_000 }, replace: [] });
    if (c.create.sent) ledger.createSent();
    else if (!c.create.nothingStored) ledger.createRetrying(false);
  }
  return plan({ scj: resource, source: compiled.source, templateInvalid: c.templateInvalid ?? false, jobs: c.jobs ?? [], ledger, nowMs: T(c.now) });
}

const summary = (p: Plan): Record<string, unknown> => ({
  create: p.create ? (p.create.slotMs - T(0)) / 1000 : null,
  replace: p.replace.map((j) => j.metadata.name),
  missed: p.missed.map((m) => `${m.reason}:${m.count}`),
  decided: (p.decidedThroughMs - T(0)) / 1000,
  supersede: p.supersede,
});

const cases: [string, Case, Record<string, unknown>][] = [
  ['never ran, not yet due', { now: 0.5 }, { create: null, replace: [], missed: [], decided: -Infinity, supersede: false }],
  ['never ran, due', { now: 1.2 }, { create: 1, replace: [], missed: [], decided: 0.999, supersede: false }],
  ['three due at once: the latest runs, two late', { now: 3.2 }, { create: 3, replace: [], missed: ['late:2'], decided: 2.999, supersede: false }],
  ['already decided', { decided: 3, now: 3.5 }, { create: null, replace: [], missed: [], decided: 3, supersede: false }],
  ['status says a previous leader ran slot 5', { status: { lastScheduleTime: '2026-12-02T10:00:05Z' }, now: 6.1 }, { create: 6, replace: [], missed: [], decided: 5.999, supersede: false }],
  ['nextScheduleTime: decided before it', { status: { observedGeneration: 1, nextScheduleTime: '2026-12-02T10:00:05Z' }, now: 5.1 }, { create: 5, replace: [], missed: [], decided: 4.999, supersede: false }],
  ['nextScheduleTime of an older generation says nothing', { status: { observedGeneration: 0, nextScheduleTime: '2026-12-02T10:00:05Z' }, now: 5.1 }, { create: 5, replace: [], missed: ['late:4'], decided: 4.999, supersede: false }],
  ['a Job of slot 4 exists', { jobs: [done(4)], now: 5.1 }, { create: 5, replace: [], missed: [], decided: 4.999, supersede: false }],
  ['Allow with a running Job', { jobs: [running(1)], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, supersede: false }],
  ['Forbid with a running Job', { spec: { concurrencyPolicy: 'Forbid' }, jobs: [running(1)], decided: 1, now: 2.1 }, { create: null, replace: [], missed: ['forbid:1'], decided: 2, supersede: false }],
  ['Forbid with a finished Job', { spec: { concurrencyPolicy: 'Forbid' }, jobs: [done(1)], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, supersede: false }],
  ['Forbid, two due, running Job', { spec: { concurrencyPolicy: 'Forbid' }, jobs: [running(1)], decided: 1, now: 3.1 }, { create: null, replace: [], missed: ['late:1', 'forbid:1'], decided: 3, supersede: false }],
  ['Replace with a running Job', { spec: { concurrencyPolicy: 'Replace' }, jobs: [running(1)], decided: 1, now: 2.1 }, { create: 2, replace: ['hb-1'], missed: [], decided: 1.999, supersede: false }],
  ['Replace with a finished Job', { spec: { concurrencyPolicy: 'Replace' }, jobs: [done(1)], decided: 1, now: 2.1 }, { create: 2, replace: [], missed: [], decided: 1.999, supersede: false }],
  ['past the starting deadline', { spec: { intervalSeconds: 10, startingDeadlineSeconds: 2 }, decided: 0, now: 22.5 }, { create: null, replace: [], missed: ['late:1', 'deadline:1'], decided: 20, supersede: false }],
  ['at the starting deadline', { spec: { intervalSeconds: 10, startingDeadlineSeconds: 2 }, decided: 0, now: 12 }, { create: 10, replace: [], missed: [], decided: 9.999, supersede: false }],
  ['no deadline: lateness alone never skips', { decided: 1, now: 2.9 }, { create: 2, replace: [], missed: [], decided: 1.999, supersede: false }],
  ['suspended: due slots decided, not counted', { spec: { suspend: true }, decided: 1, now: 5.5 }, { create: null, replace: [], missed: [], decided: 5.5, supersede: false }],
  ['template invalid: counted as error', { templateInvalid: true, decided: 1, now: 2.1 }, { create: null, replace: [], missed: ['error:1'], decided: 2, supersede: false }],
  ['Forbid, create on the wire: nothing newer decided', { spec: { concurrencyPolicy: 'Forbid' }, create: { slot: 1, sent: true, nothingStored: true }, now: 3.1 }, { create: null, replace: [], missed: [], decided: 1, supersede: false }],
  ['Replace, unknown outcome retrying: nothing newer decided', { spec: { concurrencyPolicy: 'Replace' }, create: { slot: 1, sent: false, nothingStored: false }, now: 3.1 }, { create: null, replace: [], missed: [], decided: 1, supersede: false }],
  ['Allow, create on the wire: nothing newer decided until its answer', { create: { slot: 1, sent: true, nothingStored: true }, now: 3.1 }, { create: null, replace: [], missed: [], decided: 1, supersede: false }],
  ['429 retrying: superseded by the newer slot', { create: { slot: 1, sent: false, nothingStored: true }, now: 3.1 }, { create: 3, replace: [], missed: ['late:1', 'late:1'], decided: 2.999, supersede: true }],
  ['429 retrying, no newer slot: keeps retrying', { create: { slot: 1, sent: false, nothingStored: true }, now: 1.9 }, { create: null, replace: [], missed: [], decided: 1, supersede: false }],
  ['Forbid, 429 retrying, newer slot: superseded, then created', { spec: { concurrencyPolicy: 'Forbid' }, create: { slot: 1, sent: false, nothingStored: true }, now: 2.1 }, { create: 2, replace: [], missed: ['late:1'], decided: 1.999, supersede: true }],
  ['clock stepped back behind decided slots', { decided: 10, now: 7.5 }, { create: null, replace: [], missed: [], decided: 10, supersede: false }],
];

for (const [name, c, want] of cases) {
  test(`plan: ${name}`, () => assert.deepEqual(summary(run(c)), want));
}

test('plan: history limits prune the oldest finished Jobs, also with no slot due, and skip Jobs being deleted', () => {
  const p = run({ spec: { successfulJobsHistoryLimit: 1, intervalSeconds: 3600 }, jobs: [done(1), done(2), done(3)], now: 4 });
  assert.deepEqual(p.prune.map((j) => j.metadata.name).sort(), ['hb-1', 'hb-2']);
});

test('plan: an every-second schedule after a day of downtime: one create, the rest counted', () => {
  const p = run({ spec: { schedule: '* * * * * *', intervalSeconds: undefined }, decided: 0, now: 86_400.5 });
  assert.deepEqual(summary(p), { create: 86_400, replace: [], missed: ['late:86399'], decided: 86_399.999, supersede: false });
});
