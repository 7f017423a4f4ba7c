// drain() at shutdown: waits for creates without spinning the event loop, and without waking the
// ones waiting for a rate-limit token (that would send them all at once, past the QPS limit).
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { after, before, test } from 'node:test';

import { Agent } from 'undici';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import type { JobManifest } from '../../../src/controller/api.js';
import { JobCreator } from '../../../src/controller/job-creator.js';
import { WritePriority } from '../../../src/controller/write-priority.js';
import { KubeRest } from '../../../src/kube/rest.js';
import { TokenBucket } from '../../../src/kube/token-bucket.js';
import { Metrics } from '../../../src/metrics/metrics.js';

let server: Server;
let port = 0;
const received: string[] = [];
const dispatcher = new Agent();

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const job = JSON.parse(body) as JobManifest;
      received.push(job.metadata.name);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ metadata: { ...job.metadata, uid: `uid-${job.metadata.name}`, resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
after(async () => {
  await dispatcher.close();
  server.close();
});

function job(name: string): JobManifest {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'ns' }, spec: { template: { spec: { containers: [], restartPolicy: 'Never' } } } } as unknown as JobManifest;
}

test('drain waits for rate-limited creates at the QPS pace, without busy-waiting', async () => {
  const clock = new FakeClock();
  const rest = new KubeRest({ server: `http://127.0.0.1:${port}`, source: 'test', credentials: async () => ({ headers: {}, dispatcher }) });
  const creator = new JobCreator({
    rest,
    maxConcurrent: 10,
    bucket: new TokenBucket(1, 1, clock.mono), // one create per second
    wall: clock.wall,
    timers: clock.timers,
    random: () => 0.5,
    metrics: new Metrics(false),
    fenceRemainingMs: () => Number.POSITIVE_INFINITY,
    priority: new WritePriority(clock.timers),
  });
  const deadline = clock.wall.nowMs() + 60_000;
  const outcomes = ['a', 'b', 'c'].map((name) => creator.create(job(name), deadline));
  await waitUntil(() => received.length === 1);

  let drained = false;
  const drain = creator.drain().then(() => (drained = true));
  const before = performance.eventLoopUtilization();
  await sleep(200);
  const busy = performance.eventLoopUtilization(before).utilization;
  assert.deepEqual(received, ['a'], 'drain must not send the creates waiting for a token early');
  assert.equal(drained, false);
  assert.ok(busy < 0.5, `the event loop idles while draining (utilization ${busy.toFixed(2)})`);

  clock.advance(1000);
  await waitUntil(() => received.length === 2);
  assert.deepEqual(received, ['a', 'b']);
  clock.advance(1000);
  await drain;
  assert.deepEqual(received, ['a', 'b', 'c']);
  assert.deepEqual((await Promise.all(outcomes)).map((o) => o.result), ['created', 'created', 'created']);
});

async function waitUntil(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await sleep(10);
  assert.ok(cond(), 'condition not reached within 5 s');
}
