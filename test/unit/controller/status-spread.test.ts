// Issue 37: status writes of many 1 s schedules must not come as one burst. After an API freeze (or a
// takeover) every schedule's status changes at the same moment; written "at once after a quiet spell"
// and coalesced 4 s from there, 100 schedules patched their status within the same second every ~4.5 s
// (measured from the API server's audit log: 110 patches at +0 s, 100 at +4–5 s, 100 at +9–10 s after
// SIGCONT), at the moments the next slots' creates went out. Each schedule writes at a phase of its own
// in a 4 s cycle, outside the first 300 ms of a second (the slots' creates), and still never more
// than 5 s behind its Jobs (DESIGN §2).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER, type Job, type SecondCronJob } from '../../../src/api/resources.js';
import { ControllerHarness, JOBS_PATH, sec } from './controller-harness.js';
import { STATUS_CYCLE_MS, nextStatusWriteMs } from '../../../src/controller/status-phase.js';
import { scj } from './fixtures.js';

const SCHEDULES = 100;
const names = Array.from({ length: SCHEDULES }, (_, i) => `tick-${String(i).padStart(3, '0')}`);

function withStatus(name: string, i: number): SecondCronJob {
  const ready = { type: 'Ready', status: 'True' as const, reason: 'Scheduled', message: 'Scheduled: every 1 s', observedGeneration: 1, lastTransitionTime: '2026-12-02T09:00:00Z' };
  // A schedule that has run before (its status written by an earlier term), so nothing about its
  // verdict is new: only lastScheduleTime and friends change from here on.
  return { ...scj({}, { name, uid: `uid-${i}`, finalizers: [FINALIZER] }), status: { lastScheduleTime: '2026-12-02T09:59:30Z', conditions: [ready], observedGeneration: 1 } };
}

test('status of 100 one-second schedules whose slots changed at once: spread over the seconds, none in the creates\' first 300 ms, each within 5 s of its Jobs', async () => {
  const h = new ControllerHarness({ qps: 1_000, burst: 1_000 });
  for (const [i, name] of names.entries()) await h.apply(withStatus(name, i));
  const patchesAt: { atMs: number; name: string }[] = [];
  let seen = 0;
  let watched = 0;
  for (let step = 0; step < 200; step++) {
    await h.advance(100);
    // The Job watch shows each created Job (the harness's creates answer at once).
    const created = h.rest.sent('create', JOBS_PATH).filter((r) => r.query?.dryRun === undefined);
    for (const r of created.slice(watched)) {
      const body = r.body as Job;
      h.controller.jobEvents().added({ ...body, metadata: { ...body.metadata, uid: `w-${body.metadata.name}`, resourceVersion: '1', creationTimestamp: new Date(h.clock.wall.nowMs()).toISOString() }, status: {} });
    }
    watched = created.length;
    const sent = h.rest.sent('patch').filter((r) => r.path.endsWith('/status'));
    for (const r of sent.slice(seen)) {
      const name = r.path.split('/').at(-2) as string;
      patchesAt.push({ atMs: h.clock.wall.nowMs(), name });
    }
    seen = sent.length;
  }
  const perSecond = new Map<number, number>();
  for (const p of patchesAt) perSecond.set(Math.floor(p.atMs / 1000), (perSecond.get(Math.floor(p.atMs / 1000)) ?? 0) + 1);
  const busiest = Math.max(...perSecond.values());
  assert.ok(busiest <= 40, `at most 40 status patches in any second (100 schedules / 4 s ≈ 25), got ${busiest}: ${[...perSecond.values()].join(' ')}`);
  // The harness steps 100 ms: a patch noted at x.1 was sent in (x.0, x.1].
  const early = patchesAt.filter((p) => p.atMs % 1000 <= 300 && p.atMs % 1000 > 0);
  assert.deepEqual(early.map((p) => `${p.name} at ${new Date(p.atMs).toISOString()}`), [], 'no status patch in the first 300 ms of a second');
  const startMs = Date.parse('2026-12-02T10:00:00.500Z');
  for (const name of names) {
    const times = patchesAt.filter((p) => p.name === name).map((p) => p.atMs);
    assert.ok(times.length >= 4 && times.length <= 6, `${name}: ${times.length} status patches in 20 s`);
    const gaps = times.map((t, i) => t - (times[i - 1] ?? startMs));
    assert.ok(Math.max(...gaps) <= 5_000, `${name}: status written ${times.map((t) => new Date(t).toISOString().slice(17, 23)).join(' ')}: more than 5 s apart`);
  }
  assert.equal(h.creates().filter((n) => n.endsWith(`-${sec(20)}`)).length, SCHEDULES, 'every schedule created its Jobs meanwhile');
});

test('status phase: the first instant at or after the earliest one at the key\'s phase, within one cycle, between 300 and 800 ms of a second', () => {
  const t0 = Date.parse('2026-12-02T10:00:00Z');
  for (const key of names.map((n) => `ns/${n}`)) {
    for (const earliest of [t0, t0 + 1, t0 + 2_999, t0 + 3_999, t0 + 123_456]) {
      const at = nextStatusWriteMs(key, earliest);
      assert.ok(at >= earliest && at < earliest + STATUS_CYCLE_MS, `${key}: ${at - earliest} ms after ${earliest}`);
      assert.ok(at % 1000 >= 300 && at % 1000 < 800, `${key}: at ${at % 1000} ms of its second`);
      assert.equal(nextStatusWriteMs(key, at), at, 'stable: the phase instant itself');
    }
  }
  const seconds = new Set(names.map((n) => Math.floor(nextStatusWriteMs(`ns/${n}`, t0) / 1000)));
  assert.equal(seconds.size, STATUS_CYCLE_MS / 1000, 'the keys use every second of the cycle');
});
