// The writes around the slots: history deletions, finalizers, the Job cache's relists. Each test here
// failed on the controller before the one decision path (main at 376fc8f).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER } from '../../../src/api/resources.js';
import { JobIndex } from '../../../src/controller/job-index.js';
import { ApiError } from '../../../src/kube/api-error.js';
import { ControllerHarness, JOBS_PATH, SCJ_PATH, sec } from './controller-harness.js';
import { job, scj } from './fixtures.js';

const withFinalizer = (spec = {}, meta = {}) => scj(spec, { finalizers: [FINALIZER], ...meta });

test('history: one failed delete does not stop the others, and it is retried', async () => {
  const h = new ControllerHarness();
  let failFirst = true;
  h.rest.on('delete', /^\/apis\/batch\/v1\/namespaces\/ns\/jobs\//, (req) => {
    if (req.path.endsWith('/hb-1') && failFirst) {
      failFirst = false;
      throw new ApiError(500, 'InternalError', 'etcd is sad');
    }
    return {};
  });
  await h.apply({ ...withFinalizer({ intervalSeconds: 3600, successfulJobsHistoryLimit: 0 }), status: { lastScheduleTime: '2026-12-02T10:00:09Z' } });
  await h.jobSeen(job('hb-1', { slot: '2026-12-02T10:00:01Z', outcome: 'Complete' }));
  await h.jobSeen(job('hb-2', { slot: '2026-12-02T10:00:02Z', outcome: 'Complete' }));
  assert.ok(h.rest.sent('delete').some((r) => r.path.endsWith('/hb-2')), 'hb-2 deleted although hb-1 failed');
  await h.advance(1_000); // the key's backoff
  assert.equal(h.rest.sent('delete').filter((r) => r.path.endsWith('/hb-1')).length, 2, 'the failed delete was retried');
  assert.equal(h.events.filter((e) => e === 'SuccessfulDelete').length, 2);
});

test('a fenced-off delete is not reported as a successful one', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({ intervalSeconds: 3600, successfulJobsHistoryLimit: 0 }));
  h.leadership.fresh = false;
  await h.jobSeen(job('hb-1', { slot: '2026-12-02T10:00:01Z', outcome: 'Complete' }));
  assert.deepEqual(h.rest.sent('delete'), []);
  assert.ok(!h.events.includes('SuccessfulDelete'), `events: ${h.events.join(' ')}`);
});

test('finalized once: our own Job deletions queue the key again, but the finalizer is not removed twice', async () => {
  const h = new ControllerHarness();
  h.rest.on('list', JOBS_PATH, () => ({ metadata: { resourceVersion: '9' }, items: [job('hb-1', { slot: '2026-12-02T10:00:01Z' })] }));
  await h.apply(withFinalizer({ intervalSeconds: 3600 }));
  const deleting = withFinalizer({ intervalSeconds: 3600 }, { deletionTimestamp: '2026-12-02T10:00:01Z', resourceVersion: '2' });
  await h.apply(deleting);
  // The watch shows our deletion of hb-1 before it shows the SecondCronJob gone.
  await h.jobSeen(job('hb-1', { slot: '2026-12-02T10:00:01Z' }));
  h.controller.jobEvents().deleted(job('hb-1', { slot: '2026-12-02T10:00:01Z' }));
  await h.advance(1_000);
  const finalizerEdits = h.rest.sent('patch', SCJ_PATH).filter((r) => r.path === SCJ_PATH);
  assert.equal(finalizerEdits.length, 1, 'removed once (it already had the finalizer), not again for the queued reconcile');
});

test("a relist of one namespace's Jobs does not drop another namespace's just-created Jobs", async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({ concurrencyPolicy: 'Forbid' }));
  await h.advance(600); // slot 1 created; the watch has not shown it yet
  h.controller.jobEvents('elsewhere').relisted?.(h.clock.mono.nowMs() + 1);
  await h.advance(1_000); // slot 2: slot 1's Job still runs
  assert.deepEqual(h.creates(), [`hb-${sec(1)}`]);
  assert.equal((await h.missed()).forbid, 1);
});

test('a relabelled Job leaves its old owner', () => {
  const index = new JobIndex();
  const j = job('hb-1', { slot: '2026-12-02T10:00:01Z' });
  assert.equal(index.put(j).key, 'ns/hb');
  const moved = { ...j, metadata: { ...j.metadata, labels: { 'secondcron.io/secondcronjob': 'other' } } };
  assert.deepEqual(index.put(moved), { key: 'ns/other', previousKey: 'ns/hb' });
  assert.deepEqual(index.jobsOf('ns/hb'), []);
  assert.deepEqual(index.jobsOf('ns/other').map((x) => x.metadata.name), ['hb-1']);
  const unlabelled = { ...j, metadata: { ...j.metadata, labels: {} } };
  assert.deepEqual(index.put(unlabelled), { key: undefined, previousKey: 'ns/other' });
  assert.equal(index.size, 0);
});

test('history: a Job the watch shows gone before its delete is answered is not remembered as deleting (make soak found the set growing ~10 per second)', async () => {
  const h = new ControllerHarness();
  const gone = job('hb-1', { slot: '2026-12-02T10:00:01Z', outcome: 'Complete' });
  // The API server's watch is often faster than its answer: DELETED arrives before the 200.
  h.rest.on('delete', /^\/apis\/batch\/v1\/namespaces\/ns\/jobs\//, (req) => {
    if (req.path.endsWith('/hb-1')) h.controller.jobEvents().deleted(gone);
    return {};
  });
  await h.apply({ ...withFinalizer({ intervalSeconds: 3600, successfulJobsHistoryLimit: 0 }), status: { lastScheduleTime: '2026-12-02T10:00:09Z' } });
  await h.jobSeen(gone);
  await h.advance(1_000);
  assert.equal(h.rest.sent('delete').filter((r) => r.path.endsWith('/hb-1')).length, 1);
  assert.deepEqual([h.controller.mapSizes().jobs, h.controller.mapSizes().deleting_jobs], [0, 0]);
  // The answer first, then the watch: remembered until the watch shows it gone.
  const later = job('hb-2', { slot: '2026-12-02T10:00:02Z', outcome: 'Complete' });
  h.rest.on('delete', /^\/apis\/batch\/v1\/namespaces\/ns\/jobs\//, () => ({}));
  await h.jobSeen(later);
  assert.deepEqual([h.controller.mapSizes().jobs, h.controller.mapSizes().deleting_jobs], [1, 1]);
  h.controller.jobEvents().deleted(later);
  assert.deepEqual([h.controller.mapSizes().jobs, h.controller.mapSizes().deleting_jobs], [0, 0]);
});
