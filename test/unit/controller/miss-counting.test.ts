// secondcron_triggers_missed_total pages people: each slot that got no Job is counted exactly once.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER } from '../../../src/api/resources.js';
import { ApiError } from '../../../src/kube/api-error.js';
import { ControllerHarness, JOBS_PATH } from './controller-harness.js';
import { scj } from './fixtures.js';

const total = (m: Record<string, number>): number => Object.values(m).reduce((a, b) => a + b, 0);

test('slots that failed until their deadline are not counted again by the catch-up after leadership returns', async () => {
  const h = new ControllerHarness();
  await h.apply(scj({ startingDeadlineSeconds: 2 }, { finalizers: [FINALIZER] }));
  await h.advance(3_000); // slots 1..3 created
  const failing = h.rest.on('create', JOBS_PATH, (req) => {
    if (req.query?.dryRun) return {};
    throw new ApiError(503, 'ServiceUnavailable', 'etcd is sad');
  });
  await h.advance(5_000); // slots 4..8 fail until their deadline
  h.leadership.leader = false; // lost the Lease for three slots (9..11): nobody runs them
  h.leadership.fresh = false;
  await h.advance(3_000);
  failing.on('create', JOBS_PATH, (req) => ({ metadata: { ...(req.body as { metadata: object }).metadata, uid: 'u' } }));
  h.leadership.leader = true;
  h.leadership.fresh = true;
  h.controller.startedLeading(); // catch-up: the latest missed slot runs, the older ones are missed
  await h.advance(2_500);
  assert.ok(h.creates().includes(`hb-${Date.parse('2026-12-02T10:00:11Z') / 1000}`), 'the latest missed slot ran');
  // Slots 1..3 got Jobs, every request for 4..8 failed, 9..11 had no leader, 11 ran as the catch-up
  // and 12..13 ran on time: 4..10 are the slots without a Job.
  const noJob = 7;
  const missed = await h.missed();
  assert.equal(total(missed), noJob, `slots without a Job: ${noJob}; counted ${JSON.stringify(missed)}`);
});

test('a leader frozen past its Lease that wakes up counts nothing and creates nothing', async () => {
  const h = new ControllerHarness();
  await h.apply(scj({}, { finalizers: [FINALIZER] }));
  await h.advance(2_000);
  const before = total(await h.missed());
  const creates = h.creates().length;
  // SIGSTOP for 8 s: another replica took over meanwhile. On waking, the renew deadline has passed
  // (not fresh) though the elector's own timer has not run yet (still "leader").
  h.leadership.fresh = false;
  h.clock.stall(8_000);
  await h.advance(100);
  assert.equal(total(await h.missed()) - before, 0, 'the slots the new leader handled are not counted here');
  assert.equal(h.creates().length, creates, 'and no create was even tried');
});
