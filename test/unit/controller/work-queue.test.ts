import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import { systemMonotonicClock, systemTimers } from '../../../src/clock/system-clock.js';
import { type ReconcileResult, WorkQueue } from '../../../src/controller/work-queue.js';
import { deferred, flush } from '../fakes/fake-rest.js';

function harness(reconcile: (key: string) => Promise<ReconcileResult | void>, workers = 4) {
  const clock = new FakeClock();
  const errors: { key: string; retryInMs: number }[] = [];
  const queue = new WorkQueue({
    reconcile,
    workers,
    mono: clock.mono,
    timers: clock.timers,
    random: () => 1, // backoff at the top of its jitter range: 100, 200, 400 ms …
    onError: (key, _err, retryInMs) => errors.push({ key, retryInMs }),
  });
  return { clock, queue, errors };
}

test('a key added many times while waiting runs once', async () => {
  const runs: string[] = [];
  const gate = deferred();
  // With a single worker busy on 'a', 'b' is added three times and must run once after it.
  const one = harness(async (key) => {
    runs.push(key);
    if (key === 'a') await gate.promise;
  }, 1);
  one.queue.add('a');
  one.queue.add('b');
  one.queue.add('b');
  one.queue.add('b');
  await Promise.resolve(); // the workers start on the next microtask
  assert.equal(one.queue.length, 1);
  gate.resolve(undefined);
  await one.queue.whenIdle();
  assert.deepEqual(runs, ['a', 'b']);
});

test('one worker per key: an add during a run queues one more run after it, never in parallel', async () => {
  let running = 0;
  let peak = 0;
  const gates = [deferred(), deferred()];
  let n = 0;
  const { queue } = harness(async () => {
    running++;
    peak = Math.max(peak, running);
    await (gates[n++] as ReturnType<typeof deferred>).promise;
    running--;
  });
  queue.add('k');
  await flush();
  queue.add('k'); // arrives while the first run is busy (a watch event during a finalizer patch)
  queue.add('k');
  await flush();
  assert.equal(running, 1);
  (gates[0] as ReturnType<typeof deferred>).resolve(undefined);
  await flush();
  assert.equal(n, 2, 'the event that came during the run is not lost');
  (gates[1] as ReturnType<typeof deferred>).resolve(undefined);
  await queue.whenIdle();
  assert.equal(peak, 1);
  assert.equal(n, 2, 'and the two adds during the run made one more run, not two');
});

test('workers bound the reconciles running at once, over all keys', async () => {
  let running = 0;
  let peak = 0;
  const gate = deferred();
  const { queue } = harness(async () => {
    running++;
    peak = Math.max(peak, running);
    await gate.promise;
    running--;
  }, 2);
  for (const k of ['a', 'b', 'c', 'd', 'e']) queue.add(k);
  await flush();
  assert.equal(running, 2);
  assert.equal(queue.length, 3);
  gate.resolve(undefined);
  await queue.whenIdle();
  assert.equal(peak, 2);
});

test('a failing key backs off exponentially per key, and a success resets it', async () => {
  let fail = 3;
  const runsAt: number[] = [];
  const { queue, clock, errors } = harness(async () => {
    runsAt.push(clock.mono.nowMs());
    if (fail-- > 0) throw new Error('boom');
  });
  queue.add('k');
  await flush();
  for (let i = 0; i < 3; i++) {
    clock.runNext();
    await flush();
  }
  assert.deepEqual(errors.map((e) => e.retryInMs), [100, 200, 400]);
  assert.deepEqual(runsAt, [0, 100, 300, 700]);
  fail = 1;
  queue.add('k');
  await flush();
  assert.equal(errors.at(-1)?.retryInMs, 100, 'the backoff starts over after a success');
});

test('requeueAfter runs the key again later; the earliest of several delays wins', async () => {
  const runsAt: number[] = [];
  let next: number | undefined = 1000;
  const { queue, clock } = harness(async () => {
    runsAt.push(clock.mono.nowMs());
    const r = next;
    next = undefined;
    return r === undefined ? undefined : { requeueAfterMs: r };
  });
  queue.add('k');
  await flush();
  queue.addAfter('k', 5000);
  queue.addAfter('k', 300);
  assert.equal(clock.armedCount, 1, 'one timer per key');
  clock.advance(300);
  await flush();
  assert.deepEqual(runsAt, [0, 300]);
  clock.advance(10_000);
  await flush();
  assert.deepEqual(runsAt, [0, 300], 'the later delays were folded into the earliest');
});

test('forget drops delayed adds and the backoff of a key whose object is gone', async () => {
  const runs: string[] = [];
  const { queue, clock } = harness(async (key) => {
    runs.push(key);
    throw new Error('boom');
  });
  queue.add('k');
  await flush();
  assert.equal(clock.armedCount, 1);
  queue.forget('k');
  assert.equal(clock.armedCount, 0);
  clock.advance(60_000);
  await flush();
  assert.deepEqual(runs, ['k']);
});

test('shutDown waits for running reconciles and takes no more work', async () => {
  const gate = deferred();
  let done = false;
  const { queue } = harness(async () => {
    await gate.promise;
    done = true;
  }, 1);
  queue.add('a');
  queue.add('b');
  await flush();
  const stopped = queue.shutDown();
  queue.add('c');
  gate.resolve(undefined);
  await stopped;
  assert.equal(done, true);
  assert.equal(queue.length, 0);
});

test('no reconcile runs inside an add: the caller returns first (a creator callback never runs a decision re-entrantly)', async () => {
  const runs: string[] = [];
  const { queue } = harness(async (key) => void runs.push(key));
  queue.addFirst('a');
  queue.add('b');
  assert.deepEqual(runs, [], 'nothing ran inside the calls');
  await queue.whenIdle();
  assert.deepEqual(runs, ['a', 'b']);
});

test('a long run of reconciles that await no I/O yields to the event loop: a timer that falls due meanwhile is served within a few ms, not after the run', async () => {
  // A takeover at 100,000 schedules queues every key, and a reconcile of a schedule that is not due
  // awaits nothing: without a yield the whole run goes on microtasks and no timer, socket read or
  // Lease renewal runs until it ends (~3 s there). Real clock and timers: this is about the event loop.
  const runs: string[] = [];
  const busyMs = 0.1;
  const queue = new WorkQueue({
    reconcile: async (key) => {
      const until = performance.now() + busyMs;
      while (performance.now() < until); // CPU only, like planning a slot that is not due
      runs.push(key);
    },
    workers: 8,
    mono: systemMonotonicClock,
    timers: systemTimers,
    random: () => 1,
  });
  const keys = 2000; // ≥ 200 ms of CPU in all
  for (let i = 0; i < keys; i++) queue.add(`idle-${i}`);
  const start = performance.now();
  const firedAfterMs = await new Promise<number>((resolve) =>
    setTimeout(() => {
      queue.addFirst('due');
      resolve(performance.now() - start);
    }, 5),
  );
  await queue.whenIdle();
  assert.equal(runs.length, keys + 1, 'every key ran once');
  const position = runs.indexOf('due');
  // Its turn came after at most a slice of reconciles (a few ms of them), not after all 2000.
  assert.ok(position < keys / 2, `the due key ran at position ${position} of ${keys + 1}, its timer fired ${firedAfterMs.toFixed(1)} ms after the adds`);
});

test('on a busy event loop the reconciles keep about half of it: a slice lasts as long as the loop\'s other work between two slices, from 5 to 50 ms', async () => {
  // Fake monotonic time, real turns of the event loop. Each reconcile takes 0.1 ms and awaits no I/O
  // (2,000 keys: 200 ms in all); each turn the loop also spends `otherMs` on other work (at a takeover
  // at 100,000 schedules: watch events and the answers to the start-up writes). With 5 ms slices alone
  // the reconciles got 5 ms of each turn whatever the rest took: 39 turns in every case here (the
  // scale bench at 100,000: the last schedule armed ~60 s after leading). 39 turns at 0 ms: 40 slices of 5 ms.
  assert.deepEqual([await turnsToDrain(0), await turnsToDrain(20), await turnsToDrain(200)], [39, 10, 4]);
});

test('a slice grown on a busy loop does not outlive it: the next run of reconciles starts with 5 ms slices again', async () => {
  // The first slice of a later run bounds what a timer due then waits for: 5 ms, not the 50 ms of the
  // last busy run. 2,000 reconciles of 0.1 ms with no other work take 39 turns from 5 ms slices.
  const busy = cpuOnlyQueue();
  assert.deepEqual([await turnsToDrain(200, busy), await turnsToDrain(0, busy)], [4, 39]);
});

/** A queue whose reconciles take 0.1 ms of fake time each and await no I/O. */
function cpuOnlyQueue(): { clock: FakeClock; queue: WorkQueue } {
  const { clock, queue } = harness(async () => void clock.advance(0.1), 8);
  return { clock, queue };
}

/** Turns of the event loop, each spending `otherMs` of fake time, until 2,000 reconciles are done. */
async function turnsToDrain(otherMs: number, { clock, queue } = cpuOnlyQueue()): Promise<number> {
  for (let i = 0; i < 2000; i++) queue.add(`idle-${i}`);
  let turns = 0;
  let drained = false;
  const otherWork = (): void => {
    if (drained) return;
    turns++;
    clock.advance(otherMs);
    setImmediate(otherWork);
  };
  setImmediate(otherWork);
  await queue.whenIdle();
  drained = true;
  await new Promise((resolve) => setImmediate(resolve)); // the queue's own last turn has come too
  return turns;
}
