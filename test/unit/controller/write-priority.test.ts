import assert from 'node:assert/strict';
import { test } from 'node:test';

import { WritePriority } from '../../../src/controller/write-priority.js';
import { FakeClock } from '../../../src/clock/fake-clock.js';

/** Lets promise callbacks run; the fake clock itself never yields. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

test('write priority: no create pending -> other writes go at once', async () => {
  const clock = new FakeClock();
  const priority = new WritePriority(clock.timers, clock.mono, 1000);
  let went = false;
  void priority.calm().then(() => (went = true));
  await settle();
  assert.equal(went, true);
  assert.equal(clock.pendingTimers().length, 0, 'no timer is armed when nothing waits');
});

test('write priority: other writes wait until the last pending create ends', async () => {
  const clock = new FakeClock();
  const priority = new WritePriority(clock.timers, clock.mono, 1000);
  priority.begin();
  priority.begin();
  const order: string[] = [];
  void priority.calm().then(() => order.push('status'));
  void priority.calm().then(() => order.push('event'));
  clock.advance(300);
  await settle();
  assert.deepEqual(order, []);
  priority.end();
  await settle();
  assert.deepEqual(order, [], 'one create still pending');
  priority.end();
  await settle();
  assert.deepEqual(order, ['status', 'event']);
  assert.equal(priority.pending, 0);
  assert.equal(clock.pendingTimers().length, 0, 'the deferral timers were cleared');
});

test('write priority: under constant create load a write is delayed by at most maxDeferMs', async () => {
  const clock = new FakeClock();
  const priority = new WritePriority(clock.timers, clock.mono, 1000);
  priority.begin();
  let went = false;
  void priority.calm().then(() => (went = true));
  clock.advance(999);
  await settle();
  assert.equal(went, false);
  clock.advance(1);
  await settle();
  assert.equal(went, true);
  priority.end(); // a late end() must not resolve anything twice or go negative
  priority.end();
  assert.equal(priority.pending, 0);
});

test('write priority: yieldMs tells a writer that must not wait how long the backlog may still hold it', () => {
  const clock = new FakeClock();
  const priority = new WritePriority(clock.timers, clock.mono, 1000);
  assert.equal(priority.yieldMs(), 0);
  priority.begin();
  assert.equal(priority.yieldMs(), 1000);
  clock.advance(400);
  priority.begin(); // the backlog goes on: its start does not move
  assert.equal(priority.yieldMs(), 600);
  clock.advance(600);
  assert.equal(priority.yieldMs(), 0, 'a backlog older than maxDeferMs holds nobody back');
  priority.end();
  priority.end();
  assert.equal(priority.yieldMs(), 0);
});
