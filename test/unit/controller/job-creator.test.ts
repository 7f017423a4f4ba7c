import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import type { JobManifest } from '../../../src/api/resources.js';
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
  const priority = new WritePriority(clock.timers, clock.mono);
  const creator = new JobCreator({
    rest,
    maxConcurrent: opts.maxConcurrent ?? 2,
    bucket: new TokenBucket(opts.qps ?? 100, opts.burst ?? 100, clock.mono),
    wall: clock.wall,
    timers: clock.timers,
    random: () => 1,
    metrics: new Metrics(false),
    fenceRemainingMs: () => (fence.ok ? Number.POSITIVE_INFINITY : 0),
    priority,
  });
  /** Every step the listener heard, as "key step". */
  const heard: string[] = [];
  creator.listen({
    sent: (key) => void heard.push(`${key} sent`),
    retrying: (key, _slot, nothingStored) => void heard.push(`${key} retrying ${nothingStored ? 'nothing-stored' : 'unknown'}`),
    ended: (key, _slot, answer) => void heard.push(`${key} ${answer.kind}${answer.kind === 'failed' ? ` ${answer.reason}` : ''}`),
  });
  const slot = Date.parse('2026-12-02T10:00:01Z');
  const submit = (name = 'hb', slotMs = slot, deadlineMs = slot + 10_000): void => {
    creator.submit(`ns/${name}`, { build: () => buildJob(scj({}, { name, uid: `uid-${name}` }), slotMs), slotMs, deadlineMs, supersededAtMs: Number.POSITIVE_INFINITY });
  };
  return { clock, rest, creator, fence, heard, submit, slot, priority };
}

test('a create is sent once and acknowledged', async () => {
  const h = harness();
  h.submit();
  await flush();
  assert.deepEqual(h.heard, ['ns/hb sent', 'ns/hb created']);
  assert.equal(h.rest.sent('create').length, 1);
  assert.equal(h.creator.size, 0);
});

test('AlreadyExists is the exactly-once lock, not an error', async () => {
  const h = harness();
  h.rest.on('create', JOBS, () => {
    throw new ApiError(409, 'AlreadyExists', 'exists');
  });
  h.submit();
  await flush();
  assert.deepEqual(h.heard, ['ns/hb sent', 'ns/hb already_exists']);
});

test('429 is retried after Retry-After (nothing stored), until the deadline', async () => {
  const h = harness();
  let throttled = 1;
  h.rest.on('create', JOBS, (req) => {
    if (throttled-- > 0) throw new ApiError(429, 'TooManyRequests', 'slow down', 2_000);
    return { metadata: { ...(req.body as JobManifest).metadata, uid: 'u' } };
  });
  h.submit();
  await flush();
  assert.equal(h.rest.sent('create').length, 1);
  h.clock.advance(1_999);
  await flush();
  assert.equal(h.rest.sent('create').length, 1, 'Retry-After honoured');
  h.clock.advance(1);
  await flush();
  assert.deepEqual(h.heard, ['ns/hb sent', 'ns/hb retrying nothing-stored', 'ns/hb sent', 'ns/hb created']);
});

test('a 500 or a timeout leaves the outcome unknown; a 4xx ends the create', async () => {
  const h = harness();
  let answers = [new ApiError(500, 'InternalError', 'etcd timeout'), new ApiError(0, 'Timeout', 'timed out'), new ApiError(422, 'Invalid', 'bad')];
  h.rest.on('create', JOBS, () => {
    const [next, ...rest] = answers;
    answers = rest;
    throw next;
  });
  h.submit();
  for (let i = 0; i < 10; i++) {
    h.clock.advance(1_000);
    await flush();
  }
  assert.deepEqual(h.heard, ['ns/hb sent', 'ns/hb retrying unknown', 'ns/hb sent', 'ns/hb retrying unknown', 'ns/hb sent', 'ns/hb failed error']);
});

test('a deposed leader sends nothing', async () => {
  const h = harness();
  h.fence.ok = false;
  h.submit();
  await flush();
  assert.deepEqual(h.heard, ['ns/hb not_leader']);
  assert.equal(h.rest.sent('create').length, 0);
});

test('a slot past its deadline is not sent', async () => {
  const h = harness();
  h.clock.advance(11_000);
  h.submit();
  await flush();
  assert.deepEqual(h.heard, ['ns/hb failed deadline']);
  assert.equal(h.rest.sent('create').length, 0);
});

test('one create per schedule: a second submit for the same key is a bug', () => {
  const h = harness({ qps: 1, burst: 1 });
  h.submit('a');
  assert.throws(() => h.submit('a', h.slot + 1_000), /already outstanding/);
});

test('cancel drops a create waiting for a token or a retry, silently; one on the wire is not cancelled', async () => {
  const h = harness({ qps: 1, burst: 1 });
  let hang: ((v: unknown) => void) | undefined;
  h.rest.on('create', JOBS, () => new Promise((resolve) => (hang = resolve)));
  h.submit('a'); // takes the only token, hangs on the wire
  h.submit('b'); // waits for a token
  await flush();
  assert.equal(h.priority.pending, 1, 'b holds other writers back while it waits to be sent');
  assert.equal(h.creator.cancel('ns/a'), false, 'on the wire');
  assert.equal(h.creator.cancel('ns/b'), true);
  assert.equal(h.priority.pending, 0);
  h.clock.advance(5_000);
  await flush();
  assert.equal(h.rest.sent('create').length, 1, 'b was never sent');
  hang?.({ metadata: { name: 'a' } });
  await flush();
  assert.deepEqual(h.heard, ['ns/a sent', 'ns/a created']);
});

test('a create sleeping before a retry holds no other writer back', async () => {
  const h = harness();
  h.rest.on('create', JOBS, () => {
    throw new ApiError(500, 'InternalError', 'admission webhook down');
  });
  h.submit();
  await flush();
  assert.equal(h.creator.size, 1);
  assert.equal(h.priority.pending, 0);
  assert.equal(h.priority.yieldMs(), 0);
});

test('after a stall, expired creates leave the queue without costing a token', async () => {
  const h = harness({ qps: 10, burst: 10, maxConcurrent: 1 });
  let answering = false;
  const hung: (() => void)[] = [];
  h.rest.on('create', JOBS, (req) => {
    const answer = { metadata: { ...(req.body as JobManifest).metadata, uid: 'u' } };
    if (answering) return answer;
    return new Promise((resolve) => hung.push(() => resolve(answer)));
  });
  h.submit('stuck', h.slot, h.slot + 60_000); // takes the only concurrency slot and hangs
  for (const name of ['a', 'b', 'c']) h.submit(name, h.slot, h.slot + 5_000);
  h.clock.advance(30_000);
  answering = true;
  for (const answer of hung.splice(0)) answer();
  await flush();
  assert.equal(h.rest.sent('create').length, 1, 'the expired ones were never sent');
  assert.deepEqual(h.heard.filter((x) => x.includes('failed')).sort(), ['ns/a failed deadline', 'ns/b failed deadline', 'ns/c failed deadline']);
  h.submit('fresh', h.slot + 30_000, h.slot + 40_000);
  await flush();
  assert.equal(h.heard.at(-1), 'ns/fresh created', 'sent at once: the expired entries took no tokens');
});

test('a create answered 429 after its next slot fell due is not sent again: superseded (I4, whenever the answer arrives)', async () => {
  const h = harness();
  let hang: ((err: unknown) => void) | undefined;
  h.rest.on('create', JOBS, () => new Promise((_resolve, reject) => (hang = reject)));
  h.creator.submit('ns/hb', { build: () => buildJob(scj(), h.slot), slotMs: h.slot, deadlineMs: Number.POSITIVE_INFINITY, supersededAtMs: h.slot + 1_000 });
  await flush();
  h.clock.advance(1_500); // the next slot fell due while the create was on the wire
  hang?.(new ApiError(429, 'TooManyRequests', 'slow down', 200));
  await flush();
  h.clock.advance(5_000);
  await flush();
  assert.equal(h.rest.sent('create').length, 1, 'never sent again');
  assert.deepEqual(h.heard, ['ns/hb sent', 'ns/hb retrying nothing-stored', 'ns/hb superseded']);
});

test('the listener hears a retry only once the create is off the wire: it can be cancelled from there', async () => {
  const h = harness();
  h.rest.on('create', JOBS, () => {
    throw new ApiError(503, 'ServiceUnavailable', 'busy', 200);
  });
  const dropped: boolean[] = [];
  h.creator.listen({ sent: () => {}, retrying: (key) => void dropped.push(h.creator.cancel(key)), ended: () => {} });
  h.submit();
  await flush();
  h.clock.advance(5_000);
  await flush();
  assert.deepEqual(dropped, [true]);
  assert.equal(h.rest.sent('create').length, 1, 'the cancelled retry was never sent');
  assert.equal(h.creator.size, 0);
});

test('an unknown outcome is retried for its own slot even after the next slot is due (the Job may exist)', async () => {
  const h = harness();
  let n = 0;
  h.rest.on('create', JOBS, (req) => {
    if (n++ === 0) throw new ApiError(500, 'InternalError', 'etcd timeout');
    return { metadata: { ...(req.body as JobManifest).metadata, uid: 'u' } };
  });
  h.creator.submit('ns/hb', { build: () => buildJob(scj(), h.slot), slotMs: h.slot, deadlineMs: Number.POSITIVE_INFINITY, supersededAtMs: h.slot + 50 });
  await flush();
  h.clock.advance(1_000);
  await flush();
  assert.deepEqual(h.heard, ['ns/hb sent', 'ns/hb retrying unknown', 'ns/hb sent', 'ns/hb created']);
});

test('without a starting deadline a throttled create is retried past a minute (no fixed give-up); a full quota too', async () => {
  const h = harness();
  let until = h.slot + 120_000;
  h.rest.on('create', JOBS, (req) => {
    if (h.clock.wall.nowMs() < until) throw new ApiError(403, 'Forbidden', 'jobs "x" is forbidden: exceeded quota: q, requested: count/jobs.batch=1', undefined, 'exceeded quota: q');
    return { metadata: { ...(req.body as JobManifest).metadata, uid: 'u' } };
  });
  h.creator.submit('ns/hb', { build: () => buildJob(scj(), h.slot), slotMs: h.slot, deadlineMs: Number.POSITIVE_INFINITY, supersededAtMs: Number.POSITIVE_INFINITY });
  for (let i = 0; i < 130; i++) {
    h.clock.advance(1_000);
    await flush();
  }
  until = 0;
  assert.equal(h.heard.at(-1), 'ns/hb created', h.heard.slice(-3).join(', '));
  assert.ok(h.heard.includes('ns/hb retrying nothing-stored'), 'a quota refusal proves nothing was stored');
});

test('while draining, a retryable answer ends the create instead of sending it again', async () => {
  const h = harness();
  let hang: ((err: unknown) => void) | undefined;
  h.rest.on('create', JOBS, () => new Promise((_resolve, reject) => (hang = reject)));
  h.submit();
  await flush();
  const drained = h.creator.drain();
  hang?.(new ApiError(0, 'Timeout', 'timed out'));
  await drained;
  h.clock.advance(10_000);
  await flush();
  assert.equal(h.rest.sent('create').length, 1, 'not re-sent during the drain');
  assert.deepEqual(h.heard, ['ns/hb sent', 'ns/hb not_leader']);
});

test('the manifest is built when the create is sent: a retry after a template edit sends the edited template', async () => {
  const h = harness();
  let image = 'v1';
  let n = 0;
  h.rest.on('create', JOBS, (req) => {
    if (n++ === 0) throw new ApiError(429, 'TooManyRequests', 'slow down', 100);
    return { metadata: { ...(req.body as JobManifest).metadata, uid: 'u' } };
  });
  // The template as edited between the tries (a label stands for any field of it).
  const build = (): JobManifest => buildJob(scj({ jobTemplate: { metadata: { labels: { image } }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image }] } } } } }), h.slot);
  h.creator.submit('ns/hb', { build, slotMs: h.slot, deadlineMs: Number.POSITIVE_INFINITY, supersededAtMs: Number.POSITIVE_INFINITY });
  await flush();
  image = 'v2';
  h.clock.advance(1_000);
  await flush();
  const images = h.rest.sent('create').map((r) => (r.body as JobManifest).metadata.labels?.image);
  assert.deepEqual(images, ['v1', 'v2']);
});
