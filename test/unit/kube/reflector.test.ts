import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import { ApiError } from '../../../src/kube/api-error.js';
import { Reflector } from '../../../src/kube/reflector.js';
import type { KubeObject } from '../../../src/kube/types.js';
import { createLogger } from '../../../src/log.js';
import { FakeRest, flush } from '../fakes/fake-rest.js';

const PATH = '/apis/batch/v1/namespaces/ns/jobs';
const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', uid: `u-${name}`, resourceVersion: rv, creationTimestamp: '2026-12-02T10:00:00Z' } });

function harness(listed: KubeObject[][]) {
  const clock = new FakeClock();
  const rest = new FakeRest();
  let lists = 0;
  rest.on('list', PATH, () => ({ metadata: { resourceVersion: String(100 + lists) }, items: listed[Math.min(lists++, listed.length - 1)] }));
  const seen: string[] = [];
  const reflector = new Reflector<KubeObject>({ name: 'jobs', rest, path: PATH, log: createLogger({ level: 'error' }), mono: clock.mono, timers: clock.timers, random: () => 0 });
  reflector.addEventHandler({
    added: (o) => seen.push(`added ${o.metadata.name}`),
    updated: (_old, o) => seen.push(`updated ${o.metadata.name}`),
    deleted: (o) => seen.push(`deleted ${o.metadata.name}`),
  });
  return { clock, rest, reflector, seen };
}

test('lists, syncs, then applies watch events from the list resourceVersion', async () => {
  const h = harness([[obj('a', '1')]]);
  h.reflector.start();
  await flush();
  assert.equal(h.reflector.hasSynced, true);
  const watch = h.rest.openWatch(PATH);
  assert.equal(watch?.query.resourceVersion, '100');
  watch?.onEvent('ADDED', obj('b', '101'));
  watch?.onEvent('MODIFIED', obj('a', '102'));
  watch?.onEvent('MODIFIED', obj('a', '102')); // same resourceVersion: no update
  watch?.onEvent('DELETED', obj('b', '103'));
  watch?.onEvent('BOOKMARK', { metadata: { resourceVersion: '104' } });
  assert.deepEqual(h.seen, ['added a', 'added b', 'updated a', 'deleted b']);
  assert.deepEqual([...h.reflector.list()].map((o) => o.metadata.name), ['a']);
  h.reflector.stop();
});

test('410 Gone relists and reports only the difference: gone objects deleted, changed ones updated', async () => {
  const h = harness([[obj('a', '1'), obj('b', '1')], [obj('a', '5'), obj('c', '6')]]);
  h.reflector.start();
  await flush();
  h.rest.openWatch(PATH)?.fail(new ApiError(410, 'Expired', 'too old'));
  await flush();
  h.clock.advance(1_000); // the relist waits out a short backoff
  await flush();
  assert.deepEqual(h.seen, ['added a', 'added b', 'deleted b', 'updated a', 'added c']);
  assert.equal(h.rest.openWatch(PATH)?.query.resourceVersion, '101');
  h.reflector.stop();
});

test('list errors back off and are retried; the cache syncs once the server answers', async () => {
  const h = harness([[obj('a', '1')]]);
  let failures = 2;
  h.rest.on('list', PATH, () => {
    if (failures-- > 0) throw new ApiError(503, 'ServiceUnavailable', 'down');
    return { metadata: { resourceVersion: '7' }, items: [obj('a', '1')] };
  });
  h.reflector.start();
  await flush();
  assert.equal(h.reflector.hasSynced, false);
  h.clock.advance(250); // first backoff: [250, 500] ms with random 0
  await flush();
  h.clock.advance(500);
  await flush();
  assert.equal(h.reflector.hasSynced, true);
  assert.deepEqual(h.seen, ['added a']);
  h.reflector.stop();
});

test('a paged relist whose continue token expires (410) falls back to one unpaged list, as client-go\'s ListPager does', async () => {
  const clock = new FakeClock();
  const rest = new FakeRest();
  rest.on('list', PATH, (req) => {
    if (req.query?.continue) throw new ApiError(410, 'Expired', 'The provided continue parameter is too old');
    if (req.query?.limit !== undefined) return { metadata: { resourceVersion: '10', continue: 'page-2' }, items: [obj('a', '1')] };
    return { metadata: { resourceVersion: '20' }, items: [obj('a', '1'), obj('b', '2'), obj('c', '3')] };
  });
  const reflector = new Reflector<KubeObject>({ name: 'jobs', rest, path: PATH, log: createLogger({ level: 'error' }), mono: clock.mono, timers: clock.timers, random: () => 0, pageSize: 1 });
  reflector.start();
  await flush();
  assert.equal(reflector.hasSynced, true, 'synced without waiting for a backoff');
  assert.deepEqual([...reflector.list()].map((o) => o.metadata.name), ['a', 'b', 'c']);
  assert.deepEqual(rest.sent('list').map((r) => [r.query?.limit, r.query?.continue]), [[1, undefined], [1, 'page-2'], [undefined, undefined]]);
  assert.equal(rest.openWatch(PATH)?.query.resourceVersion, '20', 'watching from the unpaged list');
  reflector.stop();
});

test('transform sees the cached version of the same key: on watch events and on a relist', async () => {
  const clock = new FakeClock();
  const rest = new FakeRest();
  let lists = 0;
  rest.on('list', PATH, () => ({ metadata: { resourceVersion: String(100 + lists++) }, items: lists === 1 ? [obj('a', '1')] : [obj('a', '7'), obj('c', '8')] }));
  const calls: string[] = [];
  const reflector = new Reflector<KubeObject>({
    name: 'jobs', rest, path: PATH, log: createLogger({ level: 'error' }), mono: clock.mono, timers: clock.timers, random: () => 0,
    transform: (o, cached) => {
      calls.push(`${o.metadata.name}@${o.metadata.resourceVersion} cached ${cached?.metadata.resourceVersion ?? 'none'}`);
      return o;
    },
  });
  reflector.start();
  await flush();
  const watch = rest.openWatch(PATH);
  watch?.onEvent('MODIFIED', obj('a', '5'));
  watch?.onEvent('ADDED', obj('b', '6'));
  watch?.fail(new ApiError(410, 'Expired', 'too old'));
  await flush();
  clock.advance(1_000);
  await flush();
  assert.deepEqual(calls, ['a@1 cached none', 'a@5 cached 1', 'b@6 cached none', 'a@7 cached 5', 'c@8 cached none']);
  reflector.stop();
});
