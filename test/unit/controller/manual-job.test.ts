// Jobs started by hand (`kubectl secondcron run`): a name no slot can have, and the controller's
// pure rules (status, concurrency policy, history limits) treat them like any owned Job.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ANNOTATION_SCHEDULED_AT, type Job } from '../../../src/api/resources.js';
import { jobsToPrune } from '../../../src/controller/history.js';
import { buildManualJob, jobName, manualJobName } from '../../../src/controller/job-builder.js';
import { isOwnedBy } from '../../../src/controller/job-state.js';
import { SlotLedger } from '../../../src/controller/slots/ledger.js';
import { plan } from '../../../src/controller/slots/plan.js';
import { compileSchedule } from '../../../src/schedule/index.js';
import { desiredStatus } from '../../../src/controller/status.js';
import { job, scj } from './fixtures.js';

/** A seeded generator, so failures reproduce. */
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

test('manual names end in a part that starts with a letter: never "<any name>-<digits>", at most 63 characters', () => {
  const random = seeded(7);
  for (const name of ['hb', 'a-b', 'x'.repeat(52), `${'y'.repeat(49)}-zz`]) {
    for (let i = 0; i < 500; i++) {
      const manual = manualJobName(name, random);
      assert.ok(manual.length <= 63, manual);
      assert.match(manual, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, `${manual} is a DNS label`);
      assert.doesNotMatch(manual, /-\d+$/, `${manual} could be a slot's name`);
      assert.match(manual.split('-').at(-1) as string, /^[bcdfghjklmnpqrstvwxz][bcdfghjklmnpqrstvwxz2456789]{4}$/);
    }
  }
  assert.match(manualJobName('hb', random), /^hb-manual-[a-z0-9]{5}$/);
  // Slot names are the contrast: all digits after the last dash.
  assert.match(jobName('hb-manual', 1_796_205_605_000), /-\d+$/);
});

test('a manual Job: the template, the owner label, instantiate=manual, a controller ownerReference, no slot annotation', () => {
  const owner = scj({ jobTemplate: { metadata: { labels: { app: 'x' } }, spec: { backoffLimit: 1, template: {} } } });
  const manual = buildManualJob(owner, seeded(1));
  assert.equal(manual.metadata.labels?.['secondcron.io/secondcronjob'], 'hb');
  assert.equal(manual.metadata.labels?.app, 'x');
  assert.equal(manual.metadata.annotations?.['secondcron.io/instantiate'], 'manual');
  assert.equal(manual.metadata.annotations?.[ANNOTATION_SCHEDULED_AT], undefined);
  assert.deepEqual(manual.metadata.ownerReferences?.map((r) => [r.uid, r.controller]), [['uid-1', true]]);
  assert.equal(manual.spec?.backoffLimit, 1);
});

function manualJob(name: string, created: string, outcome?: 'Complete' | 'Failed'): Job {
  const j = job(name, { slot: created, ...(outcome ? { outcome } : {}) });
  j.metadata.annotations = { 'secondcron.io/instantiate': 'manual' };
  return j;
}

test('status: a running manual Job is in the active list, in creation order; it is not a slot (lastScheduleTime)', () => {
  const owner = scj();
  const now = Date.parse('2026-12-02T10:00:20Z');
  const jobs = [job('hb-1796205612', { slot: '2026-12-02T10:00:12Z' }), manualJob('hb-manual-bcdfg', '2026-12-02T10:00:10Z'), job('hb-1796205605', { slot: '2026-12-02T10:00:05Z' })];
  assert.ok(jobs.every((j) => isOwnedBy(j, owner)));
  const ready = { status: 'True' as const, reason: 'Scheduled', message: '' };
  const s = desiredStatus({ scj: owner, ownedJobs: jobs, nextSlotMs: null, lastScheduledMs: undefined, resolvedSchedule: undefined, ready, readyGeneration: 1, nowMs: now });
  assert.deepEqual(s.active?.map((r) => r.name), ['hb-1796205605', 'hb-manual-bcdfg', 'hb-1796205612']);
  assert.equal(s.lastScheduleTime, '2026-12-02T10:00:12Z');
  const onlyManual = desiredStatus({ scj: scj(), ownedJobs: [manualJob('hb-manual-bcdfg', '2026-12-02T10:00:10Z')], nextSlotMs: null, lastScheduledMs: undefined, resolvedSchedule: undefined, ready, readyGeneration: 1, nowMs: now });
  assert.equal(onlyManual.lastScheduleTime, undefined);
  assert.equal(onlyManual.activeCount, 1);
});

test('Forbid skips and Replace replaces a running manual Job; history limits prune finished ones', () => {
  const running = manualJob('hb-manual-bcdfg', '2026-12-02T10:00:10Z');
  const slot = Date.parse('2026-12-02T10:00:15Z');
  const planned = (policy: 'Forbid' | 'Replace') => {
    const resource = scj({ concurrencyPolicy: policy });
    const compiled = compileSchedule({ intervalSeconds: 1 }, Date.parse(resource.metadata.creationTimestamp), slot, 'ns/hb');
    assert.ok(compiled.ok);
    const ledger = new SlotLedger();
    ledger.scheduleChanged(slot - 1);
    return plan({ scj: resource, source: compiled.source, templateInvalid: false, jobs: [running], ledger, nowMs: slot });
  };
  assert.deepEqual(planned('Forbid').missed.map((m) => m.reason), ['forbid']);
  assert.equal(planned('Replace').replace[0]?.metadata.name, 'hb-manual-bcdfg');
  const finished = [
    manualJob('hb-manual-old', '2026-12-02T10:00:01Z', 'Complete'),
    job('hb-1796205605', { slot: '2026-12-02T10:00:05Z', outcome: 'Complete' }),
    manualJob('hb-manual-new', '2026-12-02T10:00:09Z', 'Complete'),
  ];
  assert.deepEqual(jobsToPrune(finished, 1, 1).map((j) => j.metadata.name).sort(), ['hb-1796205605', 'hb-manual-old']);
});
