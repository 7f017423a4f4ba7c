// The controller's read-only view of what it keeps (secondcron_controller_entries; `make soak` checks
// that each entry returns to its level): counts as they are, and all of them back to zero once the
// schedule and its Jobs are gone.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER, type Job } from '../../../src/api/resources.js';
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
    upkeeps_waiting: 0,
    expected_jobs: 3,
    deleting_jobs: 0,
    written_statuses: 1,
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
    upkeeps_waiting: 0,
    expected_jobs: 0,
    deleting_jobs: 0,
    written_statuses: 0,
  });
});

test('mapSizes: a written status is kept only until the cache shows a newer version of the resource', async () => {
  const h = new ControllerHarness();
  const s = scj({ intervalSeconds: 3600 }, { finalizers: [FINALIZER] });
  await h.apply(s);
  await h.advance(1_000);
  assert.equal(h.statusPatches(), 1);
  assert.equal(h.controller.mapSizes().written_statuses, 1, 'our patch is not in the cache yet: the copy answers "unchanged"');
  const written = h.rest.sent('patch', '/apis/secondcron.io/v1/namespaces/ns/secondcronjobs/hb/status')[0]?.body as { status: Record<string, unknown> };
  await h.apply({ ...s, metadata: { ...s.metadata, resourceVersion: '2' }, status: written.status });
  await h.advance(1_000);
  assert.equal(h.controller.mapSizes().written_statuses, 0, 'the cache moved on: it is the truth, the copy is dropped');
  assert.equal(h.statusPatches(), 1, 'and nothing is written again');
});
