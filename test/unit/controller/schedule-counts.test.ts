// secondcron_schedules (Controller.counts): counted again after every change it is counted from —
// a SecondCronJob added, edited (suspend, schedule) or deleted, a schedule compiled — and not in between.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER } from '../../../src/api/resources.js';
import { ControllerHarness } from './controller-harness.js';
import { scj } from './fixtures.js';

test('counts: active, suspended, invalid follow every edit and the delete', async () => {
  const h = new ControllerHarness();
  const s = scj({ intervalSeconds: 3600 }, { finalizers: [FINALIZER] });
  await h.apply(s);
  await h.advance(500);
  assert.deepEqual(h.controller.counts(), { active: 1, suspended: 0, invalid: 0 });
  const suspended = { ...s, metadata: { ...s.metadata, resourceVersion: '2', generation: 2 }, spec: { ...s.spec, suspend: true } };
  await h.apply(suspended);
  assert.deepEqual(h.controller.counts(), { active: 0, suspended: 1, invalid: 0 }, 'counted from the cache at once');
  const invalid = { ...s, metadata: { ...s.metadata, resourceVersion: '3', generation: 3 }, spec: { ...s.spec, intervalSeconds: undefined, schedule: '61 * * * * *' } };
  await h.apply(invalid);
  await h.advance(500);
  assert.deepEqual(h.controller.counts(), { active: 0, suspended: 0, invalid: 1 }, 'after the reconcile compiled it');
  // A copy each time: a caller cannot change the next answer.
  const c = h.controller.counts();
  c.invalid = 99;
  assert.deepEqual(h.controller.counts(), { active: 0, suspended: 0, invalid: 1 });
  h.scjs.delete('ns/hb');
  h.controller.scjEvents.deleted(invalid);
  assert.deepEqual(h.controller.counts(), { active: 0, suspended: 0, invalid: 0 });
});
