import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER } from '../../../src/api/resources.js';
import { ApiError } from '../../../src/kube/api-error.js';
import { ControllerHarness, JOBS_PATH, SCJ_PATH, sec } from './controller-harness.js';
import { job, scj } from './fixtures.js';

const withFinalizer = (spec = {}, meta = {}) => scj(spec, { finalizers: [FINALIZER], ...meta });

test('leader: a new SecondCronJob gets its finalizer, a template dry run and a status; slots become Jobs', async () => {
  const h = new ControllerHarness();
  await h.apply(scj());
  const patch = h.rest.sent('patch', SCJ_PATH).find((r) => r.path === SCJ_PATH);
  assert.deepEqual((patch?.body as { op: string; value: unknown }[]).at(-1), { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] });
  assert.equal(h.rest.sent('create', JOBS_PATH).filter((r) => r.query?.dryRun === 'All').length, 1);
  assert.equal(h.statusPatches(), 1);
  await h.advance(2_600);
  assert.deepEqual(h.creates(), [`hb-${sec(1)}`, `hb-${sec(2)}`, `hb-${sec(3)}`]);
});

test('status of a 1 s schedule is coalesced: a patch every ~4–5 s, never more than 5 s behind its Jobs', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({}, { status: undefined }));
  for (let s = 1; s <= 20; s++) {
    await h.advance(1_000);
    const patches = h.rest.sent('patch', `${SCJ_PATH}/status`);
    const written = (patches.at(-1)?.body as { status: { lastScheduleTime?: string } } | undefined)?.status.lastScheduleTime;
    // The Job of slot s - 5 was created 5 s ago: status must show it (or a newer one) by now.
    if (s > 5) assert.ok(Date.parse(written ?? '') >= sec(s - 5) * 1000, `after ${s} s: status says ${written}, Jobs ${h.creates().join(' ')}`);
  }
  assert.equal(h.creates().length, 20);
  const patches = h.statusPatches();
  assert.ok(patches >= 4 && patches <= 6, `${patches} status patches in 20 s`);
});

test('status of a schedule that fires every 10 s is written as it changes, not coalesced', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({ intervalSeconds: 10 }, { status: undefined }));
  await h.advance(30_000);
  assert.equal(h.creates().length, 3);
  const times = h.rest.sent('patch', `${SCJ_PATH}/status`).map((r) => (r.body as { status: { lastScheduleTime?: string } }).status.lastScheduleTime);
  for (const name of h.creates()) {
    const slot = new Date(Number(name.slice('hb-'.length)) * 1000).toISOString().replace('.000Z', 'Z');
    assert.ok(times.includes(slot), `a patch for slot ${slot} (written: ${times.join(', ')})`);
  }
});

test('a follower keeps its scheduler warm but writes nothing; leading starts the writes', async () => {
  const h = new ControllerHarness();
  h.leadership.leader = false;
  h.leadership.fresh = false;
  await h.apply(scj());
  await h.advance(3_000);
  assert.deepEqual(h.rest.requests, []);
  assert.ok(h.controller.scheduler.has('ns/hb'));
  h.leadership.leader = true;
  h.leadership.fresh = true;
  h.controller.startedLeading();
  await h.advance(1_000);
  assert.ok(h.rest.sent('patch', SCJ_PATH).length >= 2, 'finalizer and status');
  assert.equal(h.creates().length, 2, 'the latest missed slot (catch-up) and the next one');
});

test('deletion: owned Jobs are listed from the API and deleted, then the finalizer removed', async () => {
  const h = new ControllerHarness();
  h.rest.on('list', JOBS_PATH, () => ({ metadata: { resourceVersion: '9' }, items: [job('hb-1', { slot: '2026-12-02T10:00:01Z' }), job('other', { slot: '2026-12-02T10:00:01Z', ownerUid: 'someone-else' })] }));
  await h.apply(withFinalizer());
  await h.apply(withFinalizer({}, { deletionTimestamp: '2026-12-02T10:00:01Z', resourceVersion: '2' }));
  assert.deepEqual(h.rest.sent('delete').map((r) => r.path), [`${JOBS_PATH}/hb-1`]);
  const last = h.rest.sent('patch', SCJ_PATH).at(-1);
  assert.equal(last?.path, SCJ_PATH);
  assert.deepEqual((last?.body as { value: unknown }[]).at(-1), { op: 'add', path: '/metadata/finalizers', value: [] });
  await h.advance(2_000);
  assert.deepEqual(h.creates(), [], 'no Job for a resource being deleted');
});

test('a deletion that arrives while the finalizer patch is in flight is not lost', async () => {
  const h = new ControllerHarness();
  let release: () => void = () => {};
  h.rest.on('patch', SCJ_PATH, () => new Promise((resolve) => (release = () => resolve({ metadata: {} }))));
  await h.apply(scj());
  // The user deletes the resource; the watch delivers it before the add-finalizer answer arrives.
  await h.apply(scj({}, { finalizers: [FINALIZER], deletionTimestamp: '2026-12-02T10:00:00Z', resourceVersion: '3' }));
  h.rest.on('patch', SCJ_PATH, () => ({ metadata: {} }));
  release();
  await h.advance(100);
  const finalizerEdits = h.rest.sent('patch', SCJ_PATH).filter((r) => r.path === SCJ_PATH);
  assert.equal(finalizerEdits.length, 2, 'the finalizer was added, then removed for the deletion');
  assert.deepEqual((finalizerEdits[1]?.body as { value: unknown }[]).at(-1), { op: 'add', path: '/metadata/finalizers', value: [] });
});

test('history limits: finished Jobs beyond the limit are deleted once', async () => {
  const h = new ControllerHarness();
  // The status a leader wrote covers the slots (a Job is pruned only then, I11).
  await h.apply({ ...withFinalizer({ successfulJobsHistoryLimit: 1 }), status: { lastScheduleTime: '2026-12-02T10:00:09Z' } });
  for (const s of [1, 2, 3]) await h.jobSeen(job(`hb-${s}`, { slot: `2026-12-02T10:00:0${s}Z`, outcome: 'Complete' }));
  await h.advance(100);
  assert.deepEqual(h.rest.sent('delete').map((r) => r.path).sort(), [`${JOBS_PATH}/hb-1`, `${JOBS_PATH}/hb-2`]);
});

test('a failed finalizer patch is retried with backoff, not dropped', async () => {
  const h = new ControllerHarness();
  let fail = 2;
  h.rest.on('patch', SCJ_PATH, () => {
    if (fail-- > 0) throw new Error('422 test failed');
    h.scjs.set('ns/hb', withFinalizer()); // what the watch will deliver
    return { metadata: {} };
  });
  await h.apply(scj());
  await h.advance(1_000);
  assert.equal(h.rest.sent('patch', SCJ_PATH).filter((r) => r.path === SCJ_PATH).length, 3);
});

test('the template dry run uses a generated name, and a dry run that fails holds back neither history nor status', async () => {
  const h = new ControllerHarness();
  h.rest.on('create', JOBS_PATH, (req) => {
    if (!req.query?.dryRun) return { metadata: { name: 'x' } };
    throw new ApiError(503, 'ServiceUnavailable', 'try later');
  });
  await h.apply({ ...withFinalizer({ successfulJobsHistoryLimit: 0 }), status: { lastScheduleTime: '2026-12-02T10:00:09Z' } });
  await h.jobSeen(job('hb-0', { slot: '2026-12-02T10:00:00Z', outcome: 'Complete' }));
  const dryRun = h.rest.sent('create', JOBS_PATH).find((r) => r.query?.dryRun === 'All');
  const metadata = (dryRun?.body as { metadata: { name?: string; generateName?: string } }).metadata;
  assert.equal(metadata.name, undefined, 'a slot name may already exist: AlreadyExists is no verdict');
  assert.equal(metadata.generateName, 'hb-');
  assert.ok(h.statusPatches() >= 1, 'status written');
  assert.deepEqual(h.rest.sent('delete').map((r) => r.path), [`${JOBS_PATH}/hb-0`], 'history applied');
  await h.advance(1_000);
  assert.ok(h.rest.sent('create', JOBS_PATH).filter((r) => r.query?.dryRun === 'All').length >= 2, 'the dry run is retried with backoff');
});
