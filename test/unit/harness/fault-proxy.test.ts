// The integration tests' fault-injecting proxy (test/cluster/fault-proxy.ts) against a local HTTPS
// upstream: requests pass through with their credentials, streams are forwarded as they come, Job
// creates are delayed or answered 429 without reaching the upstream, and every create is recorded; a
// create stored with its answer lost, and hidden Jobs left out of Job watches and lists.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Agent, createServer, request } from 'node:https';
import { after, before, test } from 'node:test';

import { selfSignedCertificate } from '../../../src/http/self-signed.js';
import { FaultProxy } from '../../cluster/fault-proxy.js';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
  atMs: number;
}

const upstreamCert = await selfSignedCertificate({ commonName: 'upstream', dnsNames: [], ipAddresses: ['127.0.0.1'], notBefore: new Date(Date.now() - 60_000), validDays: 1 });
const seen: Seen[] = [];
let releaseStream: (() => void) | undefined;
const upstream = createServer(upstreamCert, (req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body, atMs: Date.now() });
    if (req.url?.includes('watch=1')) {
      // A scripted Job watch: lines split across chunks (one inside a two-byte character), then the end.
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunks = splitAt(Buffer.from(WATCH_LINES.join('')), WATCH_CUTS);
      const next = (i: number): void => {
        if (i === chunks.length) return void res.end();
        res.write(chunks[i]);
        setTimeout(() => next(i + 1), 20);
      };
      next(0);
      return;
    }
    if (req.method === 'GET' && req.url?.startsWith(`${JOBS}?labelSelector`)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'JobList', metadata: { resourceVersion: '7' }, items: ['tick-1', 'hid-1', 'tick-2'].map((name) => ({ metadata: { name } })) }));
      return;
    }
    if (req.url?.includes('watch=true')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED"}\n');
      releaseStream = () => res.end('{"type":"DELETED"}\n');
      return;
    }
    res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ echo: body }));
  });
});
let proxy: FaultProxy;
let agent: Agent;

before(async () => {
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const address = upstream.address();
  assert.ok(address && typeof address === 'object');
  proxy = await FaultProxy.start({ upstream: `https://127.0.0.1:${address.port}`, upstreamCaPem: upstreamCert.cert });
  // The proxy's own certificate, as its kubeconfig carries it.
  agent = new Agent({ rejectUnauthorized: false });
});

after(async () => {
  agent.destroy();
  await proxy.stop();
  await new Promise<void>((r) => upstream.close(() => r()));
});

function send(method: string, path: string, body?: string): Promise<{ status: number; headers: IncomingMessage['headers']; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = request(`${proxy.url}${path}`, { method, agent, headers: { authorization: 'Bearer t0ken', 'content-type': 'application/json' } }, (res) =>
      resolve({ status: res.statusCode ?? 0, headers: res.headers, res }));
    req.on('error', reject);
    req.end(body);
  });
}

async function text(res: IncomingMessage): Promise<string> {
  let out = '';
  for await (const c of res) out += (c as Buffer).toString();
  return out;
}

const WATCH_LINES = [
  { type: 'ADDED', object: { metadata: { name: 'tick-1', annotations: { note: 'café' } } } },
  { type: 'ADDED', object: { metadata: { name: 'hid-1' } } },
  { type: 'MODIFIED', object: { metadata: { name: 'tick-1' } } },
  { type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } },
  { type: 'MODIFIED', object: { metadata: { name: 'hid-1', annotations: { note: 'café' } } } },
  { type: 'DELETED', object: { metadata: { name: 'tick-1' } } },
].map((e) => `${JSON.stringify(e)}\n`);
/** Byte offsets where the upstream cuts its stream into chunks: inside lines, and inside the "é" of the first. */
const WATCH_CUTS = [40, Buffer.from(WATCH_LINES[0] ?? '').indexOf('é') + 1, 150, 151, 260];

function splitAt(data: Buffer, cuts: readonly number[]): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...cuts, data.length]) {
    out.push(data.subarray(from, cut));
    from = cut;
  }
  return out;
}

const job = (slot: string): string => JSON.stringify({ metadata: { name: `tick-${Date.parse(slot) / 1000}`, labels: { 'secondcron.io/secondcronjob': 'tick' }, annotations: { 'secondcron.io/scheduled-at': slot } } });
const JOBS = '/apis/batch/v1/namespaces/ns1/jobs';

test('a GET passes through with its bearer token; a Job create is recorded with its owner and slot', async () => {
  const get = await send('GET', '/api/v1/namespaces');
  assert.equal(get.status, 200);
  await text(get.res);
  const post = await send('POST', JOBS, job('2026-12-03T16:00:01Z'));
  assert.equal(post.status, 201);
  assert.deepEqual(JSON.parse(await text(post.res)), { echo: job('2026-12-03T16:00:01Z') });
  assert.deepEqual(seen.slice(-2).map((s) => [s.method, s.url, s.authorization]), [['GET', '/api/v1/namespaces', 'Bearer t0ken'], ['POST', JOBS, 'Bearer t0ken']]);
  const rec = proxy.creates.at(-1);
  assert.equal(rec?.owner, 'tick');
  assert.equal(rec?.namespace, 'ns1');
  assert.equal(rec?.slotMs, Date.parse('2026-12-03T16:00:01Z'));
  assert.equal(rec?.status, 201);
  assert.equal(rec?.throttled, false);
});

test('throttled: creates answered 429 with Retry-After, never forwarded; dry runs and other writes pass', async () => {
  proxy.throttleCreatesUntilMs = Date.now() + 60_000;
  proxy.retryAfterSeconds = 2;
  try {
    const before = seen.length;
    const post = await send('POST', JOBS, job('2026-12-03T16:00:02Z'));
    assert.equal(post.status, 429);
    assert.equal(post.headers['retry-after'], '2');
    const status = JSON.parse(await text(post.res)) as { reason: string; code: number; details: { retryAfterSeconds: number } };
    assert.deepEqual([status.reason, status.code, status.details.retryAfterSeconds], ['TooManyRequests', 429, 2]);
    assert.equal(seen.length, before, 'the upstream never saw it');
    const dry = await send('POST', `${JOBS}?dryRun=All`, job('2026-12-03T16:00:03Z'));
    assert.equal(dry.status, 201);
    await text(dry.res);
    const lease = await send('PUT', '/apis/coordination.k8s.io/v1/namespaces/ns1/leases/l', '{}');
    assert.equal(lease.status, 200);
    await text(lease.res);
    assert.equal(seen.length, before + 2);
    assert.equal(proxy.creates.at(-1)?.throttled, true, 'the dry run is not recorded; the throttled create is');
  } finally {
    proxy.clearFaults();
  }
});

test('delayed: a create reaches the upstream only after the delay, and is in flight meanwhile', async () => {
  proxy.createDelayMs = 300;
  try {
    const sent = Date.now();
    const pending = send('POST', JOBS, job('2026-12-03T16:00:04Z'));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(proxy.inFlightCreates().length, 1);
    const post = await pending;
    await text(post.res);
    assert.ok((seen.at(-1)?.atMs ?? 0) - sent >= 290, 'forwarded after the delay');
    assert.equal(proxy.inFlightCreates().length, 0);
  } finally {
    proxy.clearFaults();
  }
});

test('late answers: creates held 150–250 ms, then answered 429 and 503 in turn with Retry-After, never forwarded', async () => {
  proxy.lateAnswerCreatesUntilMs = Date.now() + 60_000;
  proxy.lateAnswer = { minMs: 150, maxMs: 250, statuses: [429, 503] };
  proxy.retryAfterSeconds = 1;
  try {
    const before = seen.length;
    const answers: { status: number; retryAfter: string | undefined; reason: string; tookMs: number }[] = [];
    for (const slot of ['2026-12-03T16:00:05Z', '2026-12-03T16:00:06Z']) {
      const sent = Date.now();
      const post = await send('POST', JOBS, job(slot));
      const body = JSON.parse(await text(post.res)) as { reason: string };
      answers.push({ status: post.status, retryAfter: post.headers['retry-after'], reason: body.reason, tookMs: Date.now() - sent });
    }
    assert.deepEqual(answers.map((a) => [a.status, a.retryAfter, a.reason]), [[429, '1', 'TooManyRequests'], [503, '1', 'ServiceUnavailable']]);
    assert.ok(answers.every((a) => a.tookMs >= 145), `answered late (${answers.map((a) => a.tookMs).join(', ')} ms)`);
    assert.equal(seen.length, before, 'the upstream never saw them');
    const recs = proxy.creates.slice(-2);
    assert.deepEqual(recs.map((r) => [r.status, r.throttled, r.forwarded]), [[429, true, false], [503, true, false]]);
    assert.ok(recs.every((r) => (r.answeredMs ?? 0) - r.receivedMs >= 145));
  } finally {
    proxy.clearFaults();
  }
  const post = await send('POST', JOBS, job('2026-12-03T16:00:07Z'));
  await text(post.res);
  assert.deepEqual([post.status, proxy.creates.at(-1)?.forwarded], [201, true], 'cleared: forwarded again, with the upstream\'s code');
});

test('a watch streams through: the first event arrives while the upstream still holds the stream open', async () => {
  const watch = await send('GET', `${JOBS}?watch=true`);
  const first = await new Promise<string>((resolve) => watch.res.once('data', (c: Buffer) => resolve(c.toString())));
  assert.equal(first, '{"type":"ADDED"}\n');
  releaseStream?.();
  assert.equal(await text(watch.res), '{"type":"DELETED"}\n');
});

test('a lost answer: the create is forwarded and stored, the client\'s connection destroyed instead of the answer, once', async () => {
  const name = `tick-${Date.parse('2026-12-03T16:00:08Z') / 1000}`;
  proxy.loseCreateAnswer = { match: (c) => c.name === name, hide: true };
  try {
    const before = seen.length;
    await assert.rejects(send('POST', JOBS, job('2026-12-03T16:00:08Z')), /socket hang up|ECONNRESET/);
    assert.equal(seen.length, before + 1, 'the upstream got (and stored) it');
    const rec = proxy.creates.at(-1);
    assert.deepEqual([rec?.name, rec?.status, rec?.forwarded, rec?.answerLost], [name, 201, true, true]);
    assert.equal(proxy.loseCreateAnswer, undefined, 'matched once');
    assert.ok(proxy.hiddenJobNames.has(name), 'hidden before it was forwarded');
    const again = await send('POST', JOBS, job('2026-12-03T16:00:09Z'));
    await text(again.res);
    assert.deepEqual([again.status, proxy.creates.at(-1)?.answerLost], [201, false], 'the next create is answered');
  } finally {
    proxy.clearFaults();
  }
  assert.equal(proxy.hiddenJobNames.size, 0, 'cleared');
});

test('hidden Jobs: their watch events are dropped and the rest of the stream passed on byte for byte; lists leave them out; reads by name pass and are recorded', async () => {
  proxy.hiddenJobNames.add('hid-1');
  try {
    const hiddenBefore = proxy.hidden.length;
    const watch = await send('GET', `${JOBS}?labelSelector=secondcron.io%2Fsecondcronjob&watch=1`);
    const got = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      watch.res.on('data', (c: Buffer) => chunks.push(c));
      watch.res.once('end', () => resolve(Buffer.concat(chunks)));
      watch.res.once('error', reject);
    });
    assert.equal(got.toString('utf8'), WATCH_LINES.filter((l) => !l.includes('hid-1')).join(''));
    assert.deepEqual(proxy.hidden.slice(hiddenBefore).map((h) => [h.name, h.type]), [['hid-1', 'ADDED'], ['hid-1', 'MODIFIED']]);

    const list = await send('GET', `${JOBS}?labelSelector=secondcron.io%2Fsecondcronjob&limit=500`);
    const body = await text(list.res);
    const items = (JSON.parse(body) as { items: { metadata: { name: string } }[]; metadata: { resourceVersion: string } });
    assert.deepEqual(items.items.map((i) => i.metadata.name), ['tick-1', 'tick-2']);
    assert.equal(items.metadata.resourceVersion, '7');
    assert.equal(list.headers['content-length'], String(Buffer.byteLength(body)), 'the length of what was sent');
    assert.deepEqual(proxy.hidden.at(-1)?.type, 'LIST');

    const read = await send('GET', `${JOBS}/hid-1`);
    assert.equal(read.status, 200);
    await text(read.res);
    assert.deepEqual([proxy.reads.at(-1)?.name, proxy.reads.at(-1)?.status], ['hid-1', 200]);
  } finally {
    proxy.clearFaults();
  }
  const watch = await send('GET', `${JOBS}?watch=1`);
  assert.equal(await text(watch.res), WATCH_LINES.join(''), 'nothing hidden: the stream unchanged');
});
