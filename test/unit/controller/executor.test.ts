// The defects of issue 32, each reproduced on the real Controller (fake clock, fake API server) before
// the one-executor rewrite and passing after it: what runs is what plan() decided.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER, type Job } from '../../../src/api/resources.js';
import { scheduleHash } from '../../../src/controller/slots/schedule-hash.js';
import { ApiError } from '../../../src/kube/api-error.js';
import type { RequestOptions } from '../../../src/kube/rest.js';
import { ControllerHarness, JOBS_PATH, sec } from './controller-harness.js';
import { job, scj } from './fixtures.js';

const withFinalizer = (spec = {}, meta = {}) => scj(spec, { finalizers: [FINALIZER], ...meta });
const isCreate = (r: RequestOptions): boolean => r.verb === 'create' && r.path === JOBS_PATH && r.query?.dryRun === undefined;
/** Seconds after 10:00:00 of every create sent, in order. */
const sentSlots = (h: ControllerHarness): number[] => h.rest.requests.filter(isCreate).map((r) => Number((r.body as Job).metadata.name.split('-')[1]) - sec(0));
const total = (m: Record<string, number>): number => Object.values(m).reduce((a, b) => a + b, 0);
/** The missed counts that are not zero. */
async function missed(h: ControllerHarness): Promise<Record<string, number>> {
  return Object.fromEntries(Object.entries(await h.missed()).filter(([, n]) => n > 0));
}

/** Creates answered by `answer` after `delayMs` of fake time; the stored ones are kept by name. */
function delayedCreates(h: ControllerHarness, answer: (slot: number, attempt: number) => { delayMs: number; error?: ApiError }): Map<string, number> {
  const stored = new Map<string, number>();
  const attempts = new Map<number, number>();
  h.rest.on('create', JOBS_PATH, (req) => {
    if (req.query?.dryRun) return {};
    const body = req.body as Job;
    const slot = Number(body.metadata.name.split('-')[1]) - sec(0);
    const attempt = attempts.get(slot) ?? 0;
    attempts.set(slot, attempt + 1);
    const a = answer(slot, attempt);
    return new Promise((resolve, reject) =>
      h.clock.timers.set(a.delayMs, () => {
        if (a.error) return reject(a.error);
        stored.set(body.metadata.name, (stored.get(body.metadata.name) ?? 0) + 1);
        resolve({ metadata: { ...body.metadata, uid: `u-${body.metadata.name}-${attempt}`, creationTimestamp: new Date(h.clock.wall.nowMs()).toISOString() } });
      }),
    );
  });
  return stored;
}

test('a 429 answered after the next slot is due: the superseded create is never sent again, the newer slot runs (I4)', async () => {
  const h = new ControllerHarness();
  // Slot 1's first create is answered 429 after 1.5 s (APF's queue wait timed out), Retry-After 200 ms.
  const stored = delayedCreates(h, (slot, attempt) => (slot === 1 && attempt === 0 ? { delayMs: 1_500, error: new ApiError(429, 'TooManyRequests', 'queue wait timed out', 200) } : { delayMs: 5 }));
  await h.apply(withFinalizer());
  await h.advance(4_700);
  const slots = sentSlots(h);
  assert.deepEqual(slots.filter((s) => s === 1), [1], `slot 1 sent once: ${slots.join(' ')}`);
  assert.ok(slots.includes(2), `the newer slot 2 runs at once when the 429 arrives: ${slots.join(' ')}`);
  for (let i = 1; i < slots.length; i++) assert.ok((slots[i] as number) >= (slots[i - 1] as number), `never an older slot after a newer one: ${slots.join(' ')}`);
  assert.deepEqual([...stored.keys()].map((n) => Number(n.split('-')[1]) - sec(0)), [2, 3, 4, 5]);
  assert.deepEqual(await missed(h), { late: 1 }, 'slot 1 counted once');
});

test('Forbid: a late 429 with a lagging watch never lets two Jobs run at once', async () => {
  const h = new ControllerHarness();
  const stored = delayedCreates(h, (slot, attempt) => (slot === 1 && attempt === 0 ? { delayMs: 1_500, error: new ApiError(429, 'TooManyRequests', 'queue wait timed out', 200) } : { delayMs: 5 }));
  await h.apply(withFinalizer({ concurrencyPolicy: 'Forbid' }));
  await h.advance(4_700); // no Job ever finishes, and the watch shows none of them
  assert.equal(stored.size, 1, `one Job at most: ${[...stored.keys()].join(' ')}`);
});

test('suspending cancels a create waiting to retry after a 429: it is never sent again (I6)', async () => {
  const h = new ControllerHarness();
  delayedCreates(h, () => ({ delayMs: 5, error: new ApiError(429, 'TooManyRequests', 'slow down', 3_000) }));
  await h.apply(withFinalizer({ intervalSeconds: 3600 }, { creationTimestamp: '2026-12-02T09:00:01Z' }));
  await h.advance(600); // slot 10:00:01 fell due: sent, 429, retry in 3 s
  assert.equal(sentSlots(h).length, 1);
  await h.apply(withFinalizer({ intervalSeconds: 3600, suspend: true }, { creationTimestamp: '2026-12-02T09:00:01Z', generation: 2, resourceVersion: '2' }));
  await h.advance(60_000);
  assert.equal(sentSlots(h).length, 1, 'not sent again while suspended');
  assert.deepEqual(await missed(h), { late: 1 }, 'its slot is counted once');
});

test('an expected Job the cache never shows is looked up (MissingJob): a create that stored nothing does not block Forbid', async () => {
  const h = new ControllerHarness();
  // The first create times out (nothing stored), leadership is lost while it waits to retry and comes
  // back: the Job it may have stored must not block Forbid once a GET shows it is not there.
  let n = 0;
  h.rest.on('create', JOBS_PATH, (req) => {
    if (req.query?.dryRun) return {};
    if (n++ === 0) throw new ApiError(0, 'Timeout', 'timed out');
    return { metadata: { ...(req.body as Job).metadata, uid: `u-${n}` } };
  });
  h.rest.on('get', /^\/apis\/batch\/v1\/namespaces\/ns\/jobs\//, () => {
    throw new ApiError(404, 'NotFound', 'not found');
  });
  await h.apply(withFinalizer({ concurrencyPolicy: 'Forbid' }));
  await h.advance(550); // slot 1: timeout, retry pending
  h.leadership.leader = false;
  h.leadership.fresh = false;
  h.controller.stoppedLeading();
  h.leadership.leader = true;
  h.leadership.fresh = true;
  h.controller.startedLeading();
  // This harness's watch shows no Job, so every created Job is looked up too (3 s after its answer).
  await h.advance(10_000);
  const slots = sentSlots(h).filter((s) => s > 1);
  assert.ok(slots.length >= 2 && (slots[0] as number) <= 5, `new Jobs within seconds, not after a relist: ${sentSlots(h).join(' ')}`);
});

test('AlreadyExists is adopted only after a GET shows the Job is ours; a foreign Job of that name is an error Event', async () => {
  const h = new ControllerHarness();
  h.rest.on('create', JOBS_PATH, (req) => {
    if (req.query?.dryRun) return {};
    throw new ApiError(409, 'AlreadyExists', 'exists');
  });
  const foreign = job(`hb-${sec(1)}`, { slot: '2026-12-02T10:00:01Z', ownerUid: 'someone-else' });
  h.rest.on('get', `${JOBS_PATH}/hb-${sec(1)}`, () => foreign);
  await h.apply(withFinalizer({ intervalSeconds: 3600 }, { creationTimestamp: '2026-12-02T09:00:01Z' }));
  await h.advance(1_000);
  assert.equal(h.rest.sent('get', `${JOBS_PATH}/hb-${sec(1)}`).length, 1, 'looked up once');
  assert.ok(h.events.includes('FailedCreate'), h.events.join(' '));
  assert.deepEqual(await missed(h), { error: 1 });
});

test('a Job being deleted is active until it is gone: Forbid waits for it (as upstream)', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({ concurrencyPolicy: 'Forbid' }));
  await h.jobSeen({ ...job(`hb-${sec(0)}`, { slot: '2026-12-02T10:00:00Z' }), metadata: { ...job(`hb-${sec(0)}`, { slot: '2026-12-02T10:00:00Z' }).metadata, deletionTimestamp: '2026-12-02T10:00:00Z' } });
  await h.advance(2_000);
  assert.deepEqual(sentSlots(h), []);
  assert.equal(total(await h.missed()), 2);
});

test('a schedule edit seen by a new leader counts only the old schedule\'s slots after what its predecessor decided', async () => {
  const h = new ControllerHarness();
  h.clock.advance(100_000); // 10:01:40.5; a previous leader decided through 10:01:40 (its status says so)
  const old = withFinalizer({ intervalSeconds: 1 });
  const status = { lastScheduleTime: '2026-12-02T10:01:40Z', nextScheduleTime: '2026-12-02T10:01:41Z', scheduleHash: scheduleHash(old) };
  h.leadership.leader = false; // a follower sees the old spec first
  await h.apply({ ...old, status });
  h.leadership.leader = true;
  h.controller.startedLeading();
  await h.apply({ ...withFinalizer({ intervalSeconds: 5 }, { generation: 2, resourceVersion: '2' }), status });
  await h.advance(100);
  assert.deepEqual(await missed(h), {}, 'nothing of the old schedule was due and undecided');
});
