// secondcron_schedules (Controller.counts): counted again after every change it is counted from —
// a SecondCronJob added, edited (suspend, schedule) or deleted, a schedule compiled, a timer armed or
// dropped — and not in between. `active` means what an outsider would sign as "scheduled": the
// cached generation compiled and its timer armed; a resource the cache holds but no reconcile has
// compiled yet is pending (issue 36: the bench's ready_s was cache-sync time).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER } from '../../../src/api/resources.js';
import { ControllerHarness } from './controller-harness.js';
import { scj } from './fixtures.js';

const none = { active: 0, pending: 0, suspended: 0, invalid: 0, ended: 0 };

test('counts: active, suspended, invalid follow every edit and the delete', async () => {
  const h = new ControllerHarness();
  const s = scj({ intervalSeconds: 3600 }, { finalizers: [FINALIZER] });
  await h.apply(s);
  await h.advance(500);
  assert.deepEqual(h.controller.counts(), { ...none, active: 1 });
  const suspended = { ...s, metadata: { ...s.metadata, resourceVersion: '2', generation: 2 }, spec: { ...s.spec, suspend: true } };
  await h.apply(suspended);
  assert.deepEqual(h.controller.counts(), { ...none, suspended: 1 }, 'counted from the cache at once');
  const invalid = { ...s, metadata: { ...s.metadata, resourceVersion: '3', generation: 3 }, spec: { ...s.spec, intervalSeconds: undefined, schedule: '61 * * * * *' } };
  await h.apply(invalid);
  await h.advance(500);
  assert.deepEqual(h.controller.counts(), { ...none, invalid: 1 }, 'after the reconcile compiled it');
  // A copy each time: a caller cannot change the next answer.
  const c = h.controller.counts();
  c.invalid = 99;
  assert.deepEqual(h.controller.counts(), { ...none, invalid: 1 });
  h.scjs.delete('ns/hb');
  h.controller.scjEvents.deleted(invalid);
  assert.deepEqual(h.controller.counts(), none);
});

test('counts: a cached SecondCronJob that no reconcile compiled is pending, not active, until its timer is armed', async () => {
  const h = new ControllerHarness();
  const s = scj({ intervalSeconds: 3600 }, { finalizers: [FINALIZER] });
  // In the cache (listed at start-up), its event not handled yet: nothing compiled, no timer.
  h.scjs.set('ns/hb', s);
  assert.deepEqual(h.controller.counts(), { ...none, pending: 1 });
  assert.equal(h.controller.scheduler.has('ns/hb'), false);
  h.controller.scjEvents.added(s);
  await h.advance(500);
  assert.equal(h.controller.scheduler.has('ns/hb'), true);
  assert.deepEqual(h.controller.counts(), { ...none, active: 1 }, 'compiled and armed');
});

test('counts: a new generation in the cache is pending until it is compiled', async () => {
  const h = new ControllerHarness();
  const s = scj({ intervalSeconds: 3600 }, { finalizers: [FINALIZER] });
  await h.apply(s);
  await h.advance(500);
  assert.deepEqual(h.controller.counts(), { ...none, active: 1 });
  const edited = { ...s, metadata: { ...s.metadata, resourceVersion: '2', generation: 2 }, spec: { ...s.spec, intervalSeconds: 60 } };
  h.scjs.set('ns/hb', edited); // the cache has it; the update event is not handled yet
  h.controller.scjEvents.added(edited); // (any cache event invalidates the counts)
  assert.deepEqual(h.controller.counts(), { ...none, pending: 1 }, 'generation 2 not compiled yet');
  await h.advance(500);
  assert.deepEqual(h.controller.counts(), { ...none, active: 1 });
});

test('counts: a schedule whose window is over has no timer to arm: ended, not pending or active', async () => {
  const h = new ControllerHarness();
  await h.apply(scj({ intervalSeconds: 1, notAfter: '2026-12-02T10:00:02Z' }, { finalizers: [FINALIZER] }));
  await h.advance(500);
  assert.deepEqual(h.controller.counts(), { ...none, active: 1 }, 'armed while slots are left');
  await h.advance(3_000);
  assert.equal(h.controller.scheduler.has('ns/hb'), false);
  assert.deepEqual(h.controller.counts(), { ...none, ended: 1 });
});
