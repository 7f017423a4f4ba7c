// I9, property-tested on the real JobCreator and WritePriority: one schedule's failing, throttled or
// slow creates never delay another schedule's writes. Schedule "bad" gets every kind of bad answer,
// slow or at once; schedule "good" is answered at once. Whatever the sequence: "good"'s create is on the
// wire as soon as a concurrency slot is free, and other writers are held back (WritePriority) only while
// some create really waits for a slot or a token — never by a create on the wire or sleeping before a retry.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import fc from 'fast-check';

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

type BadAnswer = 'throttled' | 'unavailable' | 'error' | 'timeout' | 'hang';
type Step = { kind: 'submit'; key: 'bad' | 'good' } | { kind: 'advance'; ms: number } | { kind: 'answerHung' } | { kind: 'cancel'; key: 'bad' | 'good' };

const MAX_CONCURRENT = 2;

async function run(bad: BadAnswer[], steps: Step[]): Promise<void> {
  const clock = new FakeClock({ wallStartMs: Date.parse('2026-12-02T10:00:00Z') });
  const rest = new FakeRest();
  const hung: (() => void)[] = [];
  let next = 0;
  rest.on('create', '/apis/batch/v1/namespaces/ns/jobs', (req) => {
    const body = req.body as JobManifest;
    const ok = { metadata: { ...body.metadata, uid: `u-${body.metadata.name}` } };
    if (!body.metadata.name.startsWith('bad-')) return ok;
    const answer = bad[next++ % bad.length];
    if (answer === 'throttled') throw new ApiError(429, 'TooManyRequests', 'slow down', 700);
    if (answer === 'unavailable') throw new ApiError(503, 'ServiceUnavailable', 'try later');
    if (answer === 'error') throw new ApiError(500, 'InternalError', 'etcd timeout');
    if (answer === 'timeout') throw new ApiError(0, 'Timeout', 'timed out');
    return new Promise((resolve) => hung.push(() => resolve(ok)));
  });
  const priority = new WritePriority(clock.timers, clock.mono);
  const creator = new JobCreator({
    rest,
    maxConcurrent: MAX_CONCURRENT,
    bucket: new TokenBucket(1_000, 1_000, clock.mono),
    wall: clock.wall,
    timers: clock.timers,
    random: () => 0.5,
    metrics: new Metrics(false),
    fenceRemainingMs: () => Number.POSITIVE_INFINITY,
    priority,
  });
  const state = new Map<string, 'queued' | 'wire' | 'sleeping'>();
  creator.listen({
    sent: (key) => void state.set(key, 'wire'),
    retrying: (key) => void state.set(key, 'sleeping'),
    ended: (key) => void state.delete(key),
  });
  let slot = Date.parse('2026-12-02T10:00:00Z');
  for (const s of steps) {
    if (s.kind === 'submit' && !state.has(`ns/${s.key}`)) {
      state.set(`ns/${s.key}`, 'queued');
      slot += 1000;
      creator.submit(`ns/${s.key}`, { build: () => buildJob(scj({}, { name: s.key, uid: `uid-${s.key}` }), slot), slotMs: slot, deadlineMs: slot + 60_000, supersededAtMs: Number.POSITIVE_INFINITY });
    } else if (s.kind === 'advance') {
      clock.advance(s.ms);
    } else if (s.kind === 'answerHung') {
      hung.shift()?.();
    } else if (s.kind === 'cancel') {
      if (creator.cancel(`ns/${s.key}`)) state.delete(`ns/${s.key}`);
    }
    await flush(2);
    const onWire = [...state.values()].filter((v) => v === 'wire').length;
    // A sleeping create woken by its retry timer is sent at once when a slot is free (it shows as 'wire').
    const waiting = [...state.values()].filter((v) => v === 'queued').length;
    if (onWire < MAX_CONCURRENT) {
      assert.equal(waiting, 0, `a create waits although only ${onWire} of ${MAX_CONCURRENT} are on the wire (${JSON.stringify([...state])})`);
      assert.equal(priority.pending, 0, `writers are held back with no create waiting (${JSON.stringify([...state])})`);
      assert.equal(priority.yieldMs(), 0);
    }
    if (state.get('ns/good') === 'queued') assert.equal(onWire, MAX_CONCURRENT, 'good waits only for a free concurrency slot');
  }
  for (const answer of hung.splice(0)) answer();
  await flush();
}

test("I9: one schedule's failing or slow creates never hold back another schedule's create or other writers", async () => {
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.constantFrom<'bad' | 'good'>('bad', 'good').map((key): Step => ({ kind: 'submit', key })),
    fc.integer({ min: 1, max: 1_500 }).map((ms): Step => ({ kind: 'advance', ms })),
    fc.constant<Step>({ kind: 'answerHung' }),
    fc.constantFrom<'bad' | 'good'>('bad', 'good').map((key): Step => ({ kind: 'cancel', key })),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(fc.constantFrom<BadAnswer>('throttled', 'unavailable', 'error', 'timeout', 'hang'), { minLength: 1, maxLength: 6 }), fc.array(step, { maxLength: 60 }), run),
    { numRuns: 300 },
  );
});
