// The controller's read-only view of what it keeps (secondcron_controller_entries; `make soak` checks
// that each entry returns to its level): counts as they are, and all of them back to zero once the
// schedule and its Jobs are gone.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER, type Job } from '../../../src/controller/api.js';
import { ControllerHarness, sec } from './controller-harness.js';
import { job, scj } from './fixtures.js';

test('mapSizes: a schedule, its created Jobs before and after the cache shows them, and nothing once gone', async () => {
  const h = new ControllerHarness();
  const s = scj({}, { finalizers: [FINALIZER] });
  await h.apply(s);
  await h.advance(2_600);
  const created = h.creates();
  assert.equal(created.length, 3);
  assert.deepEqual(h.controller.mapSizes(), {
    records: 1,
    jobs: 0,
    scheduler_entries: 1,
    creates_outstanding: 0,
    reconciles_waiting: 0,
    expected_jobs: 3,
    deleting_jobs: 0,
  });
  const seen: Job[] = created.map((name, i) => job(name, { slot: new Date(sec(i + 1) * 1000).toISOString() }));
  for (const j of seen) await h.jobSeen(j);
  const sizes = h.controller.mapSizes();
  assert.equal(sizes.jobs, 3);
  assert.equal(sizes.expected_jobs, 0, 'the cache shows them: no longer expected');
  h.scjs.delete('ns/hb');
  h.controller.scjEvents.deleted(s);
  for (const j of seen) h.controller.jobEvents().deleted(j);
  await h.advance(1_000);
  assert.deepEqual(h.controller.mapSizes(), {
    records: 0,
    jobs: 0,
    scheduler_entries: 0,
    creates_outstanding: 0,
    reconciles_waiting: 0,
    expected_jobs: 0,
    deleting_jobs: 0,
  });
});
