import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import { EventRecorder, SERIES_UPDATE_MS, SERIES_WINDOW_MS } from '../../../src/controller/events.js';
import { WritePriority } from '../../../src/controller/write-priority.js';
import { ApiError } from '../../../src/kube/api-error.js';
import type { RequestOptions } from '../../../src/kube/rest.js';
import type { KubeObject } from '../../../src/kube/types.js';
import { silentLogger } from '../../../src/log.js';
import { FakeRest } from '../fakes/fake-rest.js';

const scj: KubeObject = { apiVersion: 'secondcron.io/v1', kind: 'SecondCronJob', metadata: { name: 'tick', namespace: 'ns', uid: 'uid-1', resourceVersion: '7', creationTimestamp: '2026-12-03T09:00:00Z' } };

function setup(): { clock: FakeClock; rest: FakeRest; events: EventRecorder; dropped: () => number; flush: () => Promise<void> } {
  const clock = new FakeClock({ wallStartMs: Date.parse('2026-12-03T10:00:00Z') });
  const rest = new FakeRest().on('create', '/api/v1/namespaces/ns/events', () => ({})).on('patch', /^\/api\/v1\/namespaces\/ns\/events\//, () => ({}));
  let dropped = 0;
  const events = new EventRecorder({ rest, wall: clock.wall, timers: clock.timers, log: silentLogger, instance: 'me', priority: new WritePriority(clock.timers, clock.mono), onDropped: () => dropped++ });
  // Writes run on the event recorder's own queue: let its promises settle.
  const flush = async (): Promise<void> => {
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  };
  return { clock, rest, events, dropped: () => dropped, flush };
}

const body = (r: RequestOptions): Record<string, unknown> => r.body as Record<string, unknown>;

test('events: repeats of a reason are one series, written at most once per SERIES_UPDATE_MS', async () => {
  const { clock, rest, events, flush } = setup();
  events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-1');
  await flush();
  assert.equal(rest.sent('create').length, 1);
  assert.equal(body(rest.sent('create')[0] as RequestOptions).count, 1);
  for (let i = 2; i <= 60; i++) {
    clock.advance(1_000);
    events.record(scj, 'Normal', 'SuccessfulCreate', `Created job tick-${i}`);
    await flush();
  }
  assert.equal(rest.requests.length, 1, 'repeats only count in memory until the update is due');
  clock.advance(SERIES_UPDATE_MS - 59_000);
  await flush();
  const patches = rest.sent('patch');
  assert.equal(patches.length, 1);
  const p = patches[0] as RequestOptions;
  assert.match(p.path, /^\/api\/v1\/namespaces\/ns\/events\/tick\./);
  assert.deepEqual(body(p), { count: 60, message: '(combined from similar events): Created job tick-60', lastTimestamp: '2026-12-03T10:00:59.000Z' });
  clock.advance(5 * SERIES_UPDATE_MS);
  await flush();
  assert.equal(rest.sent('patch').length, 1, 'nothing new: nothing written');
});

test('events: the same message repeated keeps its message; other reasons and types are Events of their own', async () => {
  const { clock, rest, events, flush } = setup();
  for (let i = 0; i < 3; i++) {
    events.record(scj, 'Warning', 'FailedCreate', 'quota exceeded');
    events.record(scj, 'Normal', 'SuccessfulDelete', 'Deleted job tick-1 (history limit)');
    events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-4');
    await flush();
  }
  assert.deepEqual(rest.sent('create').map((r) => `${String(body(r).type)} ${String(body(r).reason)}`).sort(), ['Normal SuccessfulCreate', 'Normal SuccessfulDelete', 'Warning FailedCreate']);
  clock.advance(SERIES_UPDATE_MS);
  await flush();
  const warning = rest.sent('patch').map(body).find((b) => b.message === 'quota exceeded');
  assert.equal(warning?.count, 3);
});

test('events: a series quiet for the whole window starts a new Event', async () => {
  const { clock, rest, events, flush } = setup();
  events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-1');
  await flush();
  clock.advance(SERIES_WINDOW_MS);
  events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-2');
  await flush();
  assert.equal(rest.sent('create').length, 2);
  assert.equal(body(rest.sent('create')[1] as RequestOptions).message, 'Created job tick-2');
});

test('events: an Event gone from the API server (TTL) or never created is created again by the next repeat', async () => {
  const { clock, rest, events, flush } = setup();
  rest.on('create', '/api/v1/namespaces/ns/events', () => {
    throw new ApiError(500, 'InternalError', 'etcd busy');
  });
  events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-1');
  await flush();
  rest.on('create', '/api/v1/namespaces/ns/events', () => ({}));
  events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-2');
  await flush();
  assert.equal(rest.sent('create').length, 2, 'a failed create leaves no series behind');
  rest.on('patch', /^\/api\/v1\/namespaces\/ns\/events\//, () => {
    throw new ApiError(404, 'NotFound', 'gone');
  });
  events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-3');
  clock.advance(SERIES_UPDATE_MS);
  await flush();
  assert.equal(rest.sent('patch').length, 1);
  events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-4');
  await flush();
  assert.equal(rest.sent('create').length, 3);
  assert.equal(body(rest.sent('create')[2] as RequestOptions).message, 'Created job tick-4');
});

test('events: a failed update is tried again a period later, so the count still arrives', async () => {
  const { clock, rest, events, flush } = setup();
  events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-1');
  await flush();
  let fail = true;
  rest.on('patch', /^\/api\/v1\/namespaces\/ns\/events\//, () => {
    if (fail) throw new ApiError(503, 'ServiceUnavailable', 'busy');
    return {};
  });
  events.record(scj, 'Normal', 'SuccessfulCreate', 'Created job tick-2');
  clock.advance(SERIES_UPDATE_MS);
  await flush();
  fail = false;
  clock.advance(SERIES_UPDATE_MS);
  await flush();
  const patches = rest.sent('patch');
  assert.equal(patches.length, 2);
  assert.equal(body(patches[1] as RequestOptions).count, 2);
});

test('events: a series dropped on a full queue is created at its next occurrence, not counted silently', async () => {
  const { rest, events, dropped, flush } = setup();
  const hung: (() => void)[] = [];
  rest.on('create', '/api/v1/namespaces/ns/events', () => new Promise((resolve) => hung.push(() => resolve({}))));
  // Fill the queue: distinct objects, so each is its own series.
  for (let i = 0; i < 600; i++) events.record({ ...scj, metadata: { ...scj.metadata, uid: `uid-${i}` } }, 'Normal', 'SuccessfulCreate', `Created job ${i}`);
  events.record(scj, 'Warning', 'FailedCreate', 'Error creating job');
  assert.ok(dropped() > 0, 'the queue was full');
  rest.on('create', '/api/v1/namespaces/ns/events', () => ({}));
  for (const release of hung.splice(0)) release();
  for (let i = 0; i < 100; i++) await flush(); // the queued creates drain
  const before = rest.sent('create').length;
  events.record(scj, 'Warning', 'FailedCreate', 'Error creating job');
  await flush();
  const created = rest.sent('create').slice(before).map((r) => body(r).reason);
  assert.deepEqual(created, ['FailedCreate'], 'the dropped series is written when it happens again');
});
