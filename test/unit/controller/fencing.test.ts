// Every write the leader makes passes the fence when it is sent, not when it was queued, and no
// request may outlive the leader's lease.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER } from '../../../src/api/resources.js';
import { ControllerHarness, JOBS_PATH, SCJ_PATH } from './controller-harness.js';
import { job, scj } from './fixtures.js';

test('writes queued while leading are not sent once the fence has closed', async () => {
  // One token a second: two schedules due together leave a create waiting for a token, and
  // housekeeping (here a history deletion) yields to it.
  const h = new ControllerHarness({ qps: 1, burst: 1 });
  await h.apply(scj({ successfulJobsHistoryLimit: 0 }, { finalizers: [FINALIZER] }));
  await h.apply(scj({}, { name: 'other', uid: 'uid-other', finalizers: [FINALIZER] }));
  await h.advance(600); // slot 1 of both: one create sent, the other waits for the next token
  const before = h.rest.requests.length;
  await h.jobSeen(job('hb-old', { slot: '2026-12-02T10:00:00Z', outcome: 'Complete' })); // a history deletion is due
  assert.deepEqual(h.rest.requests.slice(before).map((r) => r.verb), [], 'the deletion yields to the waiting create');
  h.leadership.fresh = false; // the renew deadline passed; the elector's own timer has not run yet
  await h.advance(2_000);
  const late = h.rest.requests.slice(before);
  assert.deepEqual(late.map((r) => `${r.verb} ${r.path}`), [], 'no create, delete, status patch or finalizer edit after the fence closed');
});

test('a create is not sent with a timeout longer than what is left of the lease', async () => {
  const h = new ControllerHarness();
  h.leadership.remainingMs = 1_500;
  await h.apply(scj({}, { finalizers: [FINALIZER] }));
  await h.advance(1_000);
  const creates = h.rest.sent('create', JOBS_PATH).filter((r) => !r.query?.dryRun);
  assert.ok(creates.length > 0);
  for (const c of creates) assert.ok((c.timeoutMs ?? Infinity) <= 1_500, `create timeout ${c.timeoutMs} ms`);
  const patches = h.rest.sent('patch', SCJ_PATH);
  for (const p of patches) assert.ok((p.timeoutMs ?? Infinity) <= 1_500, `patch timeout ${p.timeoutMs} ms`);
});
