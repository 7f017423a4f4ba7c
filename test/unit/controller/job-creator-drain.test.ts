// drain() at shutdown: creates not yet sent are dropped (the next leader decides their slots; sending
// them would put writes on the wire after the Lease is released), the one on the wire is waited for.
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';

import { Agent } from 'undici';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import type { JobManifest } from '../../../src/api/resources.js';
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

test('drain drops the creates waiting for a token and waits for the one on the wire, without busy-waiting', async () => {
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
    priority: new WritePriority(clock.timers, clock.mono),
  });
  const ended: string[] = [];
  creator.listen({ sent: () => {}, retrying: () => {}, ended: (key, _slot, answer) => ended.push(`${key} ${answer.kind}`) });
  const deadline = clock.wall.nowMs() + 60_000;
  for (const name of ['a', 'b', 'c']) creator.submit(`ns/${name}`, { build: () => job(name), slotMs: clock.wall.nowMs(), deadlineMs: deadline, supersededAtMs: Number.POSITIVE_INFINITY });
  let drained = false;
  const drain = creator.drain().then(() => (drained = true));
  assert.deepEqual(ended, ['ns/b not_leader', 'ns/c not_leader'], 'the two waiting for a token are dropped at once');
  assert.equal(drained, false, 'the create on the wire is still unanswered');
  await waitUntil(() => drained);
  await drain;
  assert.deepEqual(received, ['a'], 'only the create already on the wire reached the server');
  assert.deepEqual(ended, ['ns/b not_leader', 'ns/c not_leader', 'ns/a created']);
  assert.equal(creator.size, 0);
});

async function waitUntil(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await sleep(10);
  assert.ok(cond(), 'condition not reached within 5 s');
}
