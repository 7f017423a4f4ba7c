import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import type { JobManifest } from '../../../src/controller/api.js';
import { buildJob } from '../../../src/controller/job-builder.js';
import { JobCreator } from '../../../src/controller/job-creator.js';
import { WritePriority } from '../../../src/controller/write-priority.js';
import { ApiError } from '../../../src/kube/api-error.js';
import { TokenBucket } from '../../../src/kube/token-bucket.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { FakeRest, flush } from '../fakes/fake-rest.js';
import { scj } from './fixtures.js';

const JOBS = '/apis/batch/v1/namespaces/ns/jobs';

function harness(opts: { qps?: number; burst?: number; maxConcurrent?: number } = {}) {
  const clock = new FakeClock({ wallStartMs: Date.parse('2026-12-02T10:00:01Z') });
  const rest = new FakeRest();
  rest.on('create', JOBS, (req) => ({ metadata: { ...(req.body as JobManifest).metadata, uid: 'u', resourceVersion: '1', creationTimestamp: '2026-12-02T10:00:01Z' } }));
  const fence = { ok: true };
  const creator = new JobCreator({
    rest,
    maxConcurrent: opts.maxConcurrent ?? 2,
    bucket: new TokenBucket(opts.qps ?? 100, opts.burst ?? 100, clock.mono),
    wall: clock.wall,
    timers: clock.timers,
    random: () => 1,
    metrics: new Metrics(false),
    fenceRemainingMs: () => (fence.ok ? Number.POSITIVE_INFINITY : 0),
    priority: new WritePriority(clock.timers),
  });
  const slot = Date.parse('2026-12-02T10:00:01Z');
  return { clock, rest, creator, fence, job: buildJob(scj(), slot), slot };
}

test('a create is sent once and acknowledged', async () => {
  const h = harness();
  const outcome = await h.creator.create(h.job, h.slot + 10_000);
  assert.equal(outcome.result, 'created');
  assert.equal(h.rest.sent('create').length, 1);
});

test('AlreadyExists is the exactly-once lock, not an error', async () => {
  const h = harness();
  h.rest.on('create', JOBS, () => {
    throw new ApiError(409, 'AlreadyExists', 'exists');
  });
  assert.equal((await h.creator.create(h.job, h.slot + 10_000)).result, 'already_exists');
});

test('429 is retried after Retry-After, until the deadline', async () => {
  const h = harness();
  let throttled = 1;
  h.rest.on('create', JOBS, (req) => {
    if (throttled-- > 0) throw new ApiError(429, 'TooManyRequests', 'slow down', 2_000);
    return { metadata: { ...(req.body as JobManifest).metadata, uid: 'u' } };
  });
  const pending = h.creator.create(h.job, h.slot + 10_000);
  await flush();
  assert.equal(h.rest.sent('create').length, 1);
  h.clock.advance(1_999);
  await flush();
  assert.equal(h.rest.sent('create').length, 1, 'Retry-After honoured');
  h.clock.advance(1);
  await flush();
  assert.equal((await pending).result, 'created');
  assert.equal(h.rest.sent('create').length, 2);
});

test('a deposed leader sends nothing', async () => {
  const h = harness();
  h.fence.ok = false;
  assert.equal((await h.creator.create(h.job, h.slot + 10_000)).result, 'not_leader');
  assert.equal(h.rest.sent('create').length, 0);
});

test('a slot past its deadline is not sent', async () => {
  const h = harness();
  h.clock.advance(11_000);
  assert.equal((await h.creator.create(h.job, h.slot + 10_000)).result, 'deadline');
  assert.equal(h.rest.sent('create').length, 0);
});

// ---- a stalled API server (issue 11, item 1) ----------------------------------------------------

/** Three schedules, one slot a second each, while every create hangs until the API server answers. */
function stalled(deadlineS: number) {
  const h = harness({ qps: 10, burst: 10 });
  let answering = false;
  const hung: (() => void)[] = [];
  h.rest.on('create', JOBS, (req) => {
    const answer = { metadata: { ...(req.body as JobManifest).metadata, uid: 'u' } };
    if (answering) return answer;
    return new Promise((resolve) => hung.push(() => resolve(answer)));
  });
  const outcomes: { name: string; result: string }[] = [];
  const fire = (name: string, slotMs: number): void => {
    const job = buildJob(scj({}, { name, uid: `uid-${name}` }), slotMs);
    void h.creator.create(job, slotMs + deadlineS * 1000).then((o) => outcomes.push({ name: job.metadata.name, result: o.result }));
  };
  const thaw = async (): Promise<void> => {
    answering = true;
    for (const answer of hung.splice(0)) answer();
    await flush();
  };
  return { ...h, fire, thaw, outcomes };
}

test('after a stall, superseded slots leave the queue without a token or a request; a fresh slot goes at once', async () => {
  const h = stalled(60);
  for (let s = 0; s < 30; s++) {
    for (const name of ['a', 'b', 'c']) h.fire(name, h.slot + s * 1000);
    await flush();
    h.clock.advance(1_000);
  }
  await h.thaw();
  await h.clock.advance(100);
  await flush();
  const sentBefore = h.rest.sent('create').length;
  h.fire('a', h.slot + 30_000); // the next slot, right after the API server answers again
  await flush();
  h.clock.advance(200);
  await flush();
  const fresh = h.outcomes.find((o) => o.name === `a-${(h.slot + 30_000) / 1000}`);
  assert.equal(fresh?.result, 'created', `the fresh slot is created within 200 ms (${h.rest.sent('create').length - sentBefore} requests after the thaw)`);
  assert.ok(h.rest.sent('create').length <= 2 + 3 + 1, `${h.rest.sent('create').length} requests: the two stuck in flight, the newest slot of each schedule, the fresh one`);
  assert.ok(h.outcomes.filter((o) => o.result === 'superseded').length >= 80, 'older slots of each schedule were dropped as superseded');
});

test('after a stall, expired slots leave the queue without costing a token', async () => {
  const h = stalled(5);
  for (let s = 0; s < 30; s++) {
    h.fire('a', h.slot + s * 1000);
    await flush();
    h.clock.advance(1_000);
  }
  await h.thaw();
  await flush();
  const before = h.rest.sent('create').length;
  h.fire('b', h.slot + 30_000);
  await flush();
  assert.equal(h.outcomes.at(-1)?.name, `b-${(h.slot + 30_000) / 1000}`);
  assert.equal(h.outcomes.at(-1)?.result, 'created', 'sent at once: the expired entries took no tokens');
  assert.equal(h.rest.sent('create').length - before, 1);
});
