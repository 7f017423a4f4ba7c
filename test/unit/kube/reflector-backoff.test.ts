// The reflector against a misbehaving API server (a local HTTP server playing one): it backs off
// after a 410, after watches that close at once with nothing in them, and as long as Retry-After says.
import assert from 'node:assert/strict';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, test } from 'node:test';

import { Agent } from 'undici';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import { createLogger } from '../../../src/log.js';
import { Reflector } from '../../../src/kube/reflector.js';
import { KubeRest } from '../../../src/kube/rest.js';
import type { KubeObject } from '../../../src/kube/types.js';

type Handler = (kind: 'list' | 'watch', req: IncomingMessage, res: ServerResponse) => void;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** Starts a fake API server and a reflector on a FakeClock; returns when each request arrived (fake ms). */
async function scenario(handler: Handler): Promise<{ clock: FakeClock; arrivals: { kind: 'list' | 'watch'; atMs: number }[] }> {
  const clock = new FakeClock({ monoStartMs: 0 });
  const arrivals: { kind: 'list' | 'watch'; atMs: number }[] = [];
  const server: Server = createServer((req, res) => {
    const kind = new URL(req.url ?? '/', 'http://x').searchParams.get('watch') ? 'watch' : 'list';
    arrivals.push({ kind, atMs: clock.mono.nowMs() });
    handler(kind, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const dispatcher = new Agent();
  const reflector = new Reflector<KubeObject>({
    name: 'test',
    rest: new KubeRest({ server: `http://127.0.0.1:${port}`, source: 'test', credentials: async () => ({ headers: {}, dispatcher }) }),
    path: '/api/v1/configmaps',
    log: createLogger({ level: 'error' }),
    mono: clock.mono,
    timers: clock.timers,
    random: () => 0.5,
  });
  reflector.start();
  cleanups.push(async () => {
    reflector.stop();
    server.closeAllConnections();
    server.close();
    await dispatcher.close();
  });
  return { clock, arrivals };
}

const EMPTY_LIST = JSON.stringify({ metadata: { resourceVersion: '10' }, items: [] });

/**
 * Moves fake time from one reflector sleep to the next; time stands still while a request is out, so
 * every watch here "lasts" 0 ms whatever the machine's load.
 */
async function run(clock: FakeClock, untilMs: number): Promise<void> {
  while (clock.mono.nowMs() < untilMs) {
    // Armed: the watchdog, plus the reflector's sleep once it is waiting for its next attempt.
    for (let i = 0; clock.armedCount < 2; i++) {
      assert.ok(i < 2_000, 'the reflector never went to sleep');
      await sleep(1);
    }
    clock.runNext();
  }
}

test('a watch that closes at once with no events is a failure: the re-watches back off', async () => {
  const { clock, arrivals } = await scenario((kind, _req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(kind === 'list' ? EMPTY_LIST : '');
  });
  await run(clock, 4_000);
  const watches = arrivals.filter((a) => a.kind === 'watch').map((a) => a.atMs);
  const gaps = watches.slice(1).map((t, i) => t - (watches[i] as number));
  assert.ok(watches.length >= 3 && watches.length <= 5, `4 s of instantly closed watches: ${watches.length} watches at ${watches.join(', ')} ms`);
  assert.ok((gaps[0] ?? 0) >= 250, `first pause at least 250 ms, was ${gaps[0]}`);
  assert.ok(gaps.every((g, i) => i === 0 || g > (gaps[i - 1] as number)), `pauses grow: ${gaps.join(', ')}`);
});

test('410 Gone: relist after a backoff, not at once', async () => {
  const { clock, arrivals } = await scenario((kind, _req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    if (kind === 'list') res.end(EMPTY_LIST);
    else res.end(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } }) + '\n');
  });
  await run(clock, 3_000);
  const lists = arrivals.filter((a) => a.kind === 'list').map((a) => a.atMs);
  assert.ok(lists.length >= 2, `relisted after 410: lists at ${lists.join(', ')} ms`);
  assert.ok(lists.length <= 4, `but not in a loop: ${lists.length} lists in 3 s (${lists.join(', ')} ms)`);
  assert.ok((lists[1] as number) - (lists[0] as number) >= 250, `first relist ${(lists[1] as number) - (lists[0] as number)} ms after the first list`);
});

test('Retry-After on a list (429) is honoured', async () => {
  let answered = 0;
  const { clock, arrivals } = await scenario((_kind, _req, res) => {
    if (answered++ === 0) {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(EMPTY_LIST);
  });
  await run(clock, 4_000);
  const lists = arrivals.filter((a) => a.kind === 'list').map((a) => a.atMs);
  assert.ok(lists.length >= 2, `listed again: ${lists.join(', ')}`);
  assert.ok((lists[1] as number) - (lists[0] as number) >= 3_000, `second list ${(lists[1] as number) - (lists[0] as number)} ms after the 429 with Retry-After: 3`);
});

test('Retry-After beyond the longest backoff is capped: a proxy saying 3600 s does not freeze the cache for an hour', async () => {
  let answered = 0;
  const { clock, arrivals } = await scenario((_kind, _req, res) => {
    if (answered++ === 0) {
      res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '3600' });
      res.end('proxy busy');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(EMPTY_LIST);
  });
  await run(clock, 31_000);
  const lists = arrivals.filter((a) => a.kind === 'list').map((a) => a.atMs);
  assert.equal(lists.length, 2, `listed again within the 30 s backoff cap: ${lists.join(', ')}`);
  assert.equal((lists[1] as number) - (lists[0] as number), 30_000);
});
