import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createLogger } from '../../src/log.js';
import { type CacheRunnable, type Election, Manager, type Runnable } from '../../src/manager.js';

function harness() {
  const order: string[] = [];
  const manager = new Manager({ log: createLogger({ level: 'error' }), stopTimeoutMs: 1_000, syncPollMs: 1 });
  const cache = (name: string): CacheRunnable & { synced: boolean } => ({
    name,
    synced: false,
    get hasSynced() {
      return this.synced;
    },
    start: () => order.push(`start ${name}`),
    stop: () => void order.push(`stop ${name}`),
  });
  const runnable = (name: string): Runnable => ({ name, start: () => order.push(`start ${name}`), stop: () => void order.push(`stop ${name}`) });
  return { order, manager, cache, runnable };
}

test('caches start stage by stage, each synced before the next; then runnables; then the leader group', async () => {
  const { order, manager, cache, runnable } = harness();
  const jobs = cache('jobs');
  const scjs = cache('scjs');
  manager.addCacheStage([jobs]);
  manager.addCacheStage([scjs]);
  manager.add(runnable('scheduler'));
  manager.addLeaderOnly(runnable('leader work'));
  const started = manager.syncCaches();
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(order, ['start jobs'], 'the second stage waits for the first to sync');
  jobs.synced = true;
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(order, ['start jobs', 'start scjs']);
  assert.equal(manager.cachesSynced, false);
  scjs.synced = true;
  await started;
  manager.startRunnables(undefined);
  assert.deepEqual(order, ['start jobs', 'start scjs', 'start scheduler', 'start leader work'], 'no election: led at once, the same path as a won election');
  await manager.stop();
  assert.deepEqual(order.slice(4), ['stop scheduler', 'stop leader work', 'stop scjs', 'stop jobs']);
});

test('with an election the leader group follows its hooks, and shutdown releases the Lease after the runnables stop', async () => {
  const { order, manager, runnable } = harness();
  manager.add(runnable('scheduler'));
  manager.addLeaderOnly(runnable('leader work'));
  const election: Election = {
    start: () => order.push('election start'),
    release: async () => {
      order.push('release');
      manager.leaderHooks.onStoppedLeading();
    },
    stop: () => order.push('stop election'),
  };
  await manager.syncCaches();
  manager.startRunnables(election);
  assert.deepEqual(order, ['start scheduler', 'election start']);
  manager.leaderHooks.onStartedLeading();
  manager.leaderHooks.onStartedLeading();
  assert.deepEqual(order.slice(2), ['start leader work'], 'started once');
  await manager.stop();
  assert.deepEqual(order.slice(3), ['stop scheduler', 'release', 'stop leader work']);
});

test('a runnable that does not stop within the shutdown timeout: the Lease is left to expire, not handed back', async () => {
  const { order, manager } = harness();
  // A create still on the wire when the timeout ends could land after a follower took over at its
  // next retry; an expiring Lease keeps every follower out for the lease duration instead.
  manager.add({ name: 'job creator', start: () => {}, stop: () => new Promise<void>(() => {}) });
  const election: Election = {
    start: () => order.push('election start'),
    release: async () => void order.push('release'),
    stop: () => order.push('stop election'),
  };
  await manager.syncCaches();
  manager.startRunnables(election);
  manager.leaderHooks.onStartedLeading();
  await manager.stop();
  assert.deepEqual(order, ['election start', 'stop election']);
});
