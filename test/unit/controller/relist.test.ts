// The Jobs the controller judges (Forbid, Replace, status.active) converge to the API server's truth
// after a relist, including a Job it created itself whose watch event never came.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER, type Job } from '../../../src/api/resources.js';
import { ApiError } from '../../../src/kube/api-error.js';
import { Reflector } from '../../../src/kube/reflector.js';
import { createLogger } from '../../../src/log.js';
import { flush } from '../fakes/fake-rest.js';
import { ControllerHarness, JOBS_PATH, sec } from './controller-harness.js';
import { scj } from './fixtures.js';

test('a Job created and then deleted while the watch was down does not block Forbid after the relist', async () => {
  const h = new ControllerHarness();
  const listed: Job[] = [];
  h.rest.on('list', JOBS_PATH, () => ({ metadata: { resourceVersion: '50' }, items: listed }));
  const jobs = new Reflector<Job>({ name: 'jobs', rest: h.rest, path: JOBS_PATH, log: createLogger({ level: 'error' }), mono: h.clock.mono, timers: h.clock.timers, random: () => 0 });
  jobs.addEventHandler(h.controller.jobEvents());
  jobs.start();
  await flush();
  await h.apply(scj({ concurrencyPolicy: 'Forbid' }, { finalizers: [FINALIZER] }));
  await h.advance(600); // slot 1: created; its ADDED event is lost with the watch
  assert.deepEqual(h.creates(), [`hb-${sec(1)}`]);
  // The Job is deleted while the watch is down; the watch comes back with 410 Gone and a relist
  // (which no longer contains it) follows.
  h.rest.openWatch(JOBS_PATH)?.fail(new ApiError(410, 'Expired', 'too old resource version'));
  await flush();
  await h.advance(1_000); // slot 2
  assert.deepEqual(h.creates(), [`hb-${sec(1)}`, `hb-${sec(2)}`], 'slot 2 runs: nothing is active any more');
  assert.equal((await h.missed()).forbid, 0);
  jobs.stop();
});
