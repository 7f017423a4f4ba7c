// The promise users rely on, tried through the controller as a whole (fake clock, fake API server):
// each slot at most once, the concurrency policy held, only the latest missed slot run, and every slot
// without a Job counted once — also when creates are slow, throttled or fail, the clock steps, the spec
// changes or the schedule is suspended. Each test here failed on the controller that decided outside
// the per-key reconcile (main at 376fc8f).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER, type Job } from '../../../src/api/resources.js';
import { ApiError } from '../../../src/kube/api-error.js';
import type { RequestOptions } from '../../../src/kube/rest.js';
import { ControllerHarness, JOBS_PATH, sec } from './controller-harness.js';
import { job, scj } from './fixtures.js';

const withFinalizer = (spec = {}, meta = {}) => scj(spec, { finalizers: [FINALIZER], ...meta });
const total = (m: Record<string, number>): number => Object.values(m).reduce((a, b) => a + b, 0);
const slotOf = (name: string): number => Number(name.slice(name.lastIndexOf('-') + 1));
const isCreate = (r: RequestOptions): boolean => r.verb === 'create' && r.path === JOBS_PATH && r.query?.dryRun === undefined;

/** Answers Job creates after `delayMs` of fake time (a slow or stalled API server). */
function slowCreates(h: ControllerHarness, delayMs: number): void {
  let uid = 0;
  h.rest.on('create', JOBS_PATH, (req) => {
    if (req.query?.dryRun) return {};
    const body = req.body as Job;
    return new Promise((resolve) =>
      h.clock.timers.set(delayMs, () => resolve({ metadata: { ...body.metadata, uid: `slow-${++uid}`, creationTimestamp: new Date(h.clock.wall.nowMs()).toISOString() } })),
    );
  });
}

test('Forbid: a create slower than the period is active; the next slots are skipped, not created beside it', async () => {
  const h = new ControllerHarness();
  slowCreates(h, 2_500);
  await h.apply(withFinalizer({ concurrencyPolicy: 'Forbid' }));
  await h.advance(2_000); // slot 1's create is in flight; slot 2 fell due meanwhile
  assert.deepEqual(h.creates(), [`hb-${sec(1)}`], 'no second create while the first is in flight');
  await h.advance(3_000); // slot 1 answered at 3.5: its Job is active, so 2..5 get no Job
  assert.deepEqual(h.creates(), [`hb-${sec(1)}`]);
  // Slots 2..5 fell due with slot 1 in flight or active: each is counted once.
  assert.equal(total(await h.missed()), 4, JSON.stringify(await h.missed()));
});

test('creates answered 429 are superseded by the newer slot: no backfill after the throttled window, every slot counted', async () => {
  const h = new ControllerHarness();
  let throttled = true;
  const ok: number[] = [];
  h.rest.on('create', JOBS_PATH, (req) => {
    if (req.query?.dryRun) return {};
    if (throttled) throw new ApiError(429, 'TooManyRequests', 'slow down', 1_000);
    ok.push(slotOf((req.body as Job).metadata.name) - sec(0));
    return { metadata: { ...(req.body as Job).metadata, uid: `u-${(req.body as Job).metadata.name}` } };
  });
  await h.apply(withFinalizer());
  await h.advance(5_300); // slots 1..5 throttled
  throttled = false;
  await h.advance(2_000); // slots 6, 7 run
  assert.ok(ok.filter((s) => s <= 5).length <= 1, `at most one Job for the throttled slots 1..5: ${ok.join(' ')}`);
  assert.deepEqual(ok.filter((s) => s > 5), [6, 7]);
  // Slots 1..7 fell due; every one without a Job is counted once.
  assert.equal(total(await h.missed()), 7 - ok.length, `Jobs for ${ok.join(' ')}; counted ${JSON.stringify(await h.missed())}`);
});

test('a create answered 429 is not sent again for its own slot once a newer slot is due', async () => {
  const h = new ControllerHarness();
  const until = Date.parse('2026-12-02T10:00:04.500Z');
  h.rest.on('create', JOBS_PATH, (req) => {
    if (req.query?.dryRun) return {};
    if (h.clock.wall.nowMs() < until) throw new ApiError(429, 'TooManyRequests', 'slow down', 1_200);
    return { metadata: { ...(req.body as Job).metadata, uid: `u-${(req.body as Job).metadata.name}` } };
  });
  await h.apply(withFinalizer());
  await h.advance(6_000);
  const sent = h.rest.requests.filter(isCreate).map((r) => slotOf((r.body as Job).metadata.name) - sec(0));
  for (let i = 1; i < sent.length; i++) {
    assert.ok((sent[i] as number) >= (sent[i - 1] as number), `creates never go back to an older slot: ${sent.join(' ')}`);
  }
  assert.ok(sent.includes(5) || sent.includes(6), `the newest slots are tried: ${sent.join(' ')}`);
});

test('a wall-clock step backwards never re-runs a slot whose Job was already pruned', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({ successfulJobsHistoryLimit: 0 }));
  await h.advance(5_000); // slots 1..5 created
  for (const name of h.creates()) {
    const s = slotOf(name) - sec(0);
    const finished = job(name, { slot: `2026-12-02T10:00:0${s}Z`, outcome: 'Complete' });
    await h.jobSeen(finished);
    h.controller.jobEvents().deleted(finished); // pruned by the history limit
  }
  h.clock.stepWall(-3_000);
  await h.advance(4_000);
  const names = h.creates();
  assert.equal(new Set(names).size, names.length, `no slot created twice: ${names.join(' ')}`);
  assert.equal(total(await h.missed()), 0);
});

test('a wall-clock step forwards runs only the latest skipped slot and counts the others once', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer());
  await h.advance(2_000); // slots 1, 2
  h.clock.stepWall(10_000);
  await h.advance(1_000);
  assert.deepEqual(h.creates().map((n) => slotOf(n) - sec(0)), [1, 2, 13]);
  assert.equal((await h.missed()).late, 10, 'slots 3..12 counted once');
});

test('slots that fall while suspended are neither run nor counted on resume', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer());
  await h.advance(1_000);
  await h.apply(withFinalizer({ suspend: true }, { generation: 2, resourceVersion: '2' }));
  await h.advance(10_000);
  await h.apply(withFinalizer({ suspend: false }, { generation: 3, resourceVersion: '3' }));
  await h.advance(1_500); // resumed at 11.5 s: slots 12 and 13 run
  assert.equal(total(await h.missed()), 0, JSON.stringify(await h.missed()));
  assert.ok(!h.events.includes('MissedSchedule'), `events: ${h.events.join(' ')}`);
  assert.deepEqual(h.creates().map((n) => slotOf(n) - sec(0)), [1, 12, 13], 'no Job for a suspended slot');
});

test('after a spec edit is seen, no slot of the old schedule fires', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer());
  await h.advance(1_000);
  // The edit is in the cache; its watch event has not been handled yet when the next slot fires.
  h.scjs.set('ns/hb', withFinalizer({ intervalSeconds: 10 }, { generation: 2, resourceVersion: '2' }));
  await h.advance(3_000);
  assert.deepEqual(h.creates(), [`hb-${sec(1)}`], 'slots 2..4 belong to the old schedule');
});

test('Forbid and deadline skips are decided once: a failover catch-up does not count them again', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({ concurrencyPolicy: 'Forbid' }));
  await h.advance(1_000); // slot 1: a Job that keeps running
  await h.advance(3_000); // slots 2..4: Forbid
  assert.equal((await h.missed()).forbid, 3);
  h.leadership.leader = false;
  h.leadership.fresh = false;
  await h.advance(100);
  h.leadership.leader = true;
  h.leadership.fresh = true;
  h.controller.startedLeading();
  await h.advance(100);
  assert.equal(total(await h.missed()), 3, `counted once: ${JSON.stringify(await h.missed())}`);
});

test('lowering a history limit prunes at once, without waiting for another Job to finish', async () => {
  const h = new ControllerHarness();
  await h.apply({ ...withFinalizer({ intervalSeconds: 3600, successfulJobsHistoryLimit: 10 }), status: { lastScheduleTime: '2026-12-02T10:00:09Z' } });
  for (const s of [1, 2, 3, 4, 5]) await h.jobSeen(job(`hb-${s}`, { slot: `2026-12-02T10:00:0${s}Z`, outcome: 'Complete' }));
  await h.advance(100);
  assert.deepEqual(h.rest.sent('delete'), []);
  await h.apply({ ...withFinalizer({ intervalSeconds: 3600, successfulJobsHistoryLimit: 2 }, { generation: 2, resourceVersion: '2' }), status: { lastScheduleTime: '2026-12-02T10:00:09Z' } });
  await h.advance(100);
  assert.deepEqual(h.rest.sent('delete').map((r) => r.path).sort(), [1, 2, 3].map((s) => `${JOBS_PATH}/hb-${s}`));
});

test('Replace: the running Job is deleted (and the delete accepted) before the new Job is created; a failed delete creates nothing', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({ concurrencyPolicy: 'Replace' }));
  await h.advance(1_000); // slot 1: a running Job
  await h.jobSeen(job(`hb-${sec(1)}`, { slot: '2026-12-02T10:00:01Z' }));
  await h.advance(1_000); // slot 2 replaces it
  const order = h.rest.requests.filter((r) => isCreate(r) || r.verb === 'delete').map((r) => `${r.verb} ${r.path.split('/').pop() ?? ''}${r.verb === 'create' ? ` ${(r.body as Job).metadata.name}` : ''}`);
  assert.deepEqual(order, [`create jobs hb-${sec(1)}`, `delete hb-${sec(1)}`, `create jobs hb-${sec(2)}`]);
  // Slot 3: the delete of slot 2's Job fails: no create.
  await h.jobSeen(job(`hb-${sec(2)}`, { slot: '2026-12-02T10:00:02Z' }));
  h.rest.on('delete', /^\/apis\/batch\/v1\/namespaces\/ns\/jobs\//, () => {
    throw new ApiError(500, 'InternalError', 'etcd is sad');
  });
  await h.advance(1_000);
  assert.ok(!h.creates().includes(`hb-${sec(3)}`), 'no create while the running Job could not be deleted');
});

test("one schedule's failing creates do not delay another schedule's writes", async () => {
  const h = new ControllerHarness();
  h.rest.on('patch', /\/secondcronjobs\/other$/, () => ({ metadata: {} }));
  h.rest.on('create', JOBS_PATH, (req) => {
    if (req.query?.dryRun) return {};
    throw new ApiError(500, 'InternalError', 'admission webhook is down');
  });
  await h.apply(withFinalizer());
  await h.advance(1_050); // hb's slot 1 create fails and waits to retry
  const before = h.rest.requests.length;
  await h.apply(scj({}, { name: 'other', uid: 'uid-other' }));
  const finalizer = h.rest.requests.slice(before).find((r) => r.verb === 'patch' && r.path.endsWith('/secondcronjobs/other'));
  assert.ok(finalizer, 'the new schedule got its finalizer at once, not after the write-priority wait');
});

test('deleting a SecondCronJob cancels its creates waiting to retry', async () => {
  const h = new ControllerHarness();
  h.rest.on('create', JOBS_PATH, (req) => {
    if (req.query?.dryRun) return {};
    throw new ApiError(429, 'TooManyRequests', 'slow down', 5_000);
  });
  await h.apply(withFinalizer({ intervalSeconds: 3600, startingDeadlineSeconds: 60 }, { creationTimestamp: '2026-12-02T09:00:00Z' }));
  await h.advance(100);
  const sent = h.creates().length;
  h.scjs.delete('ns/hb');
  h.controller.scjEvents.deleted(withFinalizer());
  await h.advance(10_000);
  assert.equal(h.creates().length, sent, 'no create after the SecondCronJob was deleted');
});

test('Allow: with creates slower than the period the next due slot is sent as soon as the answer is in', async () => {
  const h = new ControllerHarness();
  slowCreates(h, 1_400);
  await h.apply(withFinalizer());
  await h.advance(10_000); // slots 1..10, each create answered 1.4 s after it was sent
  h.rest.on('create', JOBS_PATH, (req) => ({ metadata: { ...(req.body as Job).metadata, uid: `u-${(req.body as Job).metadata.name}` } }));
  await h.advance(3_000); // fast again: slots 11..13
  const slots = h.creates().map((n) => slotOf(n) - sec(0));
  assert.equal(new Set(slots).size, slots.length, `each slot once: ${slots.join(' ')}`);
  for (let i = 1; i < slots.length; i++) assert.ok((slots[i] as number) > (slots[i - 1] as number), `in slot order: ${slots.join(' ')}`);
  // One on the wire at a time, and the answer's reconcile runs the due slot: slot 2 goes the moment slot 1 is answered
  // (at 2.4 s), not 1.4 s later as a missed slot's catch-up would.
  assert.deepEqual(slots.slice(0, 3), [1, 2, 3]);
  const sent = h.rest.requests.filter(isCreate);
  assert.ok(sent.length >= 8, `most slots ran: ${slots.join(' ')}`);
  // Every slot without a Job is counted once.
  assert.equal(total(await h.missed()), 13 - slots.length, `Jobs for ${slots.join(' ')}; counted ${JSON.stringify(await h.missed())}`);
});

test("upkeep apart: status patches and history deletes that hang never keep a slot's decision waiting (30 schedules × 1 s)", async () => {
  const h = new ControllerHarness();
  // The API server answers creates at once, and never answers a status patch or a Job delete (a worker
  // that awaits one is held for good): on one queue, 30 schedules' upkeep held every worker.
  h.rest.on('patch', /\/secondcronjobs\/[^/]+\/status$/, () => new Promise(() => {}));
  h.rest.on('delete', /^\/apis\/batch\/v1\/namespaces\/ns\/jobs\//, () => new Promise(() => {}));
  const sentAt = new Map<string, number>();
  h.rest.on('create', JOBS_PATH, (req) => {
    const body = req.body as Job;
    if (!req.query?.dryRun) sentAt.set(body.metadata.name, h.clock.wall.nowMs());
    return { metadata: { ...body.metadata, uid: `u-${body.metadata.name}`, creationTimestamp: new Date(h.clock.wall.nowMs()).toISOString() } };
  });
  const names = Array.from({ length: 30 }, (_, i) => `s-${String(i).padStart(2, '0')}`);
  for (const name of names) await h.apply(withFinalizer({ successfulJobsHistoryLimit: 0 }, { name, uid: `uid-${name}` }));
  await h.advance(5_000); // slots 1..5
  for (const name of names) {
    const jobs = h.creates().filter((n) => n.startsWith(`${name}-`));
    assert.deepEqual(jobs, [1, 2, 3, 4, 5].map((s) => `${name}-${sec(s)}`), `${name}: one Job per slot, none missing`);
    for (const job of jobs) {
      const lateMs = (sentAt.get(job) ?? Number.POSITIVE_INFINITY) - slotOf(job) * 1000;
      assert.ok(lateMs >= 0 && lateMs < 1000, `${job} sent ${lateMs} ms after its slot`);
    }
  }
  assert.equal(total(await h.missed()), 0, `missed ${JSON.stringify(await h.missed())}`);
});

test('takeover: a slot that falls due is decided before the other schedules are reconciled, and every schedule is', async () => {
  // Before, every key was queued in the first tier at takeover, and a due one waited behind them all
  // (failed on main at d881158: hourly-0 … hourly-49 were reconciled before ns/hb).
  const h = new ControllerHarness();
  h.leadership.leader = false;
  h.leadership.fresh = false;
  const hourly = Array.from({ length: 50 }, (_, i) => `hourly-${i}`);
  for (const [i, name] of hourly.entries()) await h.apply(withFinalizer({ intervalSeconds: undefined, schedule: '0 0 * * * *' }, { name, uid: `uid-h${i}` }));
  await h.apply(withFinalizer()); // ns/hb, every second, listed last
  const reconciled: string[] = [];
  const get = h.scjs.get.bind(h.scjs);
  h.scjs.get = (key: string) => {
    reconciled.push(key);
    return get(key);
  };
  h.leadership.leader = true;
  h.leadership.fresh = true;
  h.controller.startedLeading();
  h.clock.advance(600); // hb's slot at 10:00:01 falls due before a worker has taken a key
  await h.advance(100);
  assert.equal(reconciled[0], 'ns/hb', `the due schedule first: ${reconciled.slice(0, 10).join(' ')}`);
  assert.deepEqual(new Set(reconciled), new Set(['ns/hb', ...hourly.map((n) => `ns/${n}`)]), 'every schedule reconciled at takeover');
  assert.deepEqual(h.creates(), [`hb-${sec(1)}`]);
});
