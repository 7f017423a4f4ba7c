// Both ports bound every connection: a silent TCP connection, a TLS handshake followed by silence, a
// partial request line followed by silence and a request whose headers trickle in are each closed by
// the server within its timeout; at the cap the metrics port closes the new connection and keeps the
// ones held (a scraper's kept-alive one), while the health port serves the new one and closes the
// oldest not being answered (a request in progress never is), so probes are answered while either
// port is flooded. The timeouts are
// shortened so this runs in seconds; without them none of these connections would ever close.
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';

import { Registry } from 'prom-client';

import { type ConnectionLimits, applyLimits } from '../../../src/http/connection-limits.js';
import { type RunningServer, serveHealth, serveMetrics } from '../../../src/http/servers.js';
import { MetricsExposition } from '../../../src/metrics/exposition.js';
import { selfSignedCertificate } from '../../support/self-signed-cert.js';

const SHORT: ConnectionLimits = {
  headersTimeoutMs: 900,
  requestTimeoutMs: 1_800,
  inactivityTimeoutMs: 300,
  keepAliveTimeoutMs: 300,
  tlsHandshakeTimeoutMs: 400,
  maxHeaderBytes: 16 * 1024,
  maxHeadersCount: 64,
  maxConnections: 1_000,
};
/** What a timer may be late by on a loaded machine, beyond the timeout being checked. */
const SLACK_MS = 1_500;

interface Target {
  name: string;
  tls: boolean;
  /** A request this server answers 200 (authorized when secure). */
  request: string;
  start(limits: ConnectionLimits): Promise<RunningServer>;
}

const exposition = new MetricsExposition(new Registry(), undefined);
const pair = await selfSignedCertificate('127.0.0.1');
const checks = { healthz: [{ name: 'ok', run: () => undefined }], readyz: [] };
const TARGETS: Target[] = [
  { name: 'metrics (HTTP)', tls: false, request: 'GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n', start: (limits) => serveMetrics(0, exposition, { limits }) },
  {
    name: 'metrics (HTTPS)',
    tls: true,
    request: 'GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok\r\n\r\n',
    start: (limits) =>
      serveMetrics(0, exposition, {
        limits,
        secure: { certificate: { current: () => pair, watch: () => () => {} }, authorize: () => Promise.resolve({ status: 200 }) },
      }),
  },
  { name: 'health', tls: false, request: 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', start: (limits) => serveHealth(0, checks, limits) },
];

/** A TCP connection (no TLS), resolved once connected. */
function tcp(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = netConnect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

/** A connection that completed its TLS handshake (or plain TCP for an HTTP port). */
function session(port: number, tls: boolean): Promise<Socket> {
  if (!tls) return tcp(port);
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Milliseconds from now until the server closes `socket`; fails if it is still open after `withinMs`. */
function closedBy(socket: Socket, withinMs: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    socket.on('error', () => {}); // a reset is a close too
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after ${withinMs} ms`));
    }, withinMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(performance.now() - started);
    });
  });
}

/** The first response's status line (after writing `request`), or undefined if the server closed without one. */
function exchange(socket: Socket, request: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    let got = '';
    const onData = (chunk: Buffer): void => {
      got += chunk.toString('latin1');
      if (got.includes('\r\n')) {
        socket.off('data', onData);
        resolve(got.slice(0, got.indexOf('\r\n')));
      }
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(undefined));
    socket.on('error', () => {});
    socket.write(request);
  });
}

for (const target of TARGETS) {
  describe(`${target.name}: every connection is bounded`, () => {
    let server: RunningServer;
    before(async () => (server = await target.start(SHORT)));
    after(() => server.close());

    test(`a TCP connection that never sends a byte is closed (${target.tls ? 'TLS handshake' : 'inactivity'} timeout)`, async () => {
      const timeout = target.tls ? SHORT.tlsHandshakeTimeoutMs : SHORT.inactivityTimeoutMs;
      const ms = await closedBy(await tcp(server.port), timeout + SLACK_MS);
      assert.ok(ms >= timeout * 0.9, `closed after ${ms} ms, before the ${timeout} ms timeout`);
    });

    if (target.tls) {
      test('a TLS handshake followed by silence is closed (inactivity timeout)', async () => {
        const ms = await closedBy(await session(server.port, true), SHORT.inactivityTimeoutMs + SLACK_MS);
        assert.ok(ms >= SHORT.inactivityTimeoutMs * 0.9, `closed after ${ms} ms`);
      });
    }

    test('a partial request line followed by silence is closed', async () => {
      const socket = await session(server.port, target.tls);
      socket.write('GET / HTTP/1.1\r\n');
      const ms = await closedBy(socket, SHORT.inactivityTimeoutMs + SLACK_MS);
      assert.ok(ms >= SHORT.inactivityTimeoutMs * 0.9, `closed after ${ms} ms`);
    });

    test('headers trickling in faster than the inactivity timeout are cut off by the headers timeout', async () => {
      const socket = await session(server.port, target.tls);
      socket.write('GET /metrics HTTP/1.1\r\nHost: x\r\n');
      let n = 0;
      const trickle = setInterval(() => socket.writable && socket.write(`X-Trickle-${n++}: 1\r\n`), SHORT.inactivityTimeoutMs / 3);
      try {
        const ms = await closedBy(socket, SHORT.headersTimeoutMs + SLACK_MS);
        assert.ok(ms >= SHORT.headersTimeoutMs * 0.9, `closed after ${ms} ms, before the ${SHORT.headersTimeoutMs} ms headers timeout`);
      } finally {
        clearInterval(trickle);
      }
    });

    test('a kept-alive connection is closed after the keep-alive timeout', async () => {
      const socket = await session(server.port, target.tls);
      assert.equal(await exchange(socket, target.request), 'HTTP/1.1 200 OK');
      // Node closes a kept-alive socket a second after keepAliveTimeout (its race buffer).
      const ms = await closedBy(socket, SHORT.keepAliveTimeoutMs + 1_000 + SLACK_MS);
      assert.ok(ms >= SHORT.keepAliveTimeoutMs * 0.9, `closed after ${ms} ms`);
    });
  });
}

describe('the connection cap', () => {
  const CAP = 3;
  // Long timeouts here: the connections held must stay open while the cap is probed.
  const CAPPED: ConnectionLimits = { ...SHORT, inactivityTimeoutMs: 30_000, keepAliveTimeoutMs: 30_000, headersTimeoutMs: 30_000, requestTimeoutMs: 30_000, tlsHandshakeTimeoutMs: 30_000, maxConnections: CAP };

  /** Waits until the server has seen `n` connections (a connect resolves before the server's accept runs). */
  async function until(server: RunningServer, n: number): Promise<void> {
    for (let i = 0; i < 100 && (await server.connections()) !== n; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(await server.connections(), n);
  }

  for (const target of TARGETS.filter((t) => t.name !== 'health')) {
    test(`${target.name}: connection ${CAP + 1} is closed at accept; the ${CAP} held keep working; one freed is one more`, async () => {
      const server = await target.start(CAPPED);
      const held: Socket[] = [];
      try {
        for (let i = 0; i < CAP; i++) {
          const s = await session(server.port, target.tls);
          held.push(s);
          assert.equal(await exchange(s, target.request), 'HTTP/1.1 200 OK', `connection ${i + 1}`);
        }
        const refused = await tcp(server.port);
        const ms = await closedBy(refused, 5_000);
        assert.ok(ms < 5_000);
        for (const s of held) assert.equal(await exchange(s, target.request), 'HTTP/1.1 200 OK', 'a held connection still served');

        const freed = held.pop() as Socket;
        const gone = closedBy(freed, 5_000);
        freed.destroy();
        await gone;
        // The server counts the close when it sees it; retry briefly rather than race it.
        let status: string | undefined;
        for (let attempt = 0; attempt < 20 && status === undefined; attempt++) {
          const s = await session(server.port, target.tls).catch(() => undefined);
          status = s && (await exchange(s, target.request));
          if (s) held.push(s);
          if (status === undefined) await new Promise((r) => setTimeout(r, 50));
        }
        assert.equal(status, 'HTTP/1.1 200 OK', 'a connection after one was freed');
      } finally {
        for (const s of held) s.destroy();
        await server.close();
      }
    });
  }

  for (const target of TARGETS.filter((t) => t.name === 'health')) {
    test(`${target.name}: at the cap a new connection is served and the oldest idle one is closed; the others stay open`, async () => {
      const server = await target.start(CAPPED);
      const held: Socket[] = [];
      try {
        // A flood's connections: open and silent (TLS: handshake done, then silent), oldest first.
        for (let i = 0; i < CAP; i++) {
          held.push(await session(server.port, target.tls));
          await until(server, i + 1);
        }
        const oldestClosed = closedBy(held[0] as Socket, 5_000);
        // The kubelet's probe (or a scraper): a new connection, answered.
        const newcomer = await session(server.port, target.tls);
        held.push(newcomer);
        assert.equal(await exchange(newcomer, target.request), 'HTTP/1.1 200 OK', 'the new connection is served');
        await oldestClosed;
        await until(server, CAP);
        for (const s of held.slice(1)) assert.equal(await exchange(s, target.request), 'HTTP/1.1 200 OK', 'a younger held connection still served');
      } finally {
        for (const s of held) s.destroy();
        await server.close();
      }
    });
  }

  test('the health port filled with silent connections answers every probe, one new connection each (issue 34: 4 of 80 answered)', async () => {
    const health = await serveHealth(0, checks, { ...CAPPED, maxConnections: 32 });
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 32; i++) held.push(await tcp(health.port));
      await until(health, 32);
      let answered = 0;
      for (let probe = 0; probe < 10; probe++) {
        const s = await tcp(health.port);
        if ((await exchange(s, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')) === 'HTTP/1.1 200 OK') answered++;
        s.destroy();
        held.push(await tcp(health.port)); // the flood goes on between probes
      }
      assert.equal(answered, 10);
    } finally {
      for (const s of held) s.destroy();
      await health.close();
    }
  });

  describe('a connection whose request is being answered is never the one closed', () => {
    const release: Array<() => void> = [];
    const pending = { request: 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' };
    /** The health port's policy on a server whose answers wait until released. */
    const startHolding = async (limits: ConnectionLimits): Promise<RunningServer> => {
      const server = createHttpServer((_req, res) => release.push(() => res.end('ok')));
      applyLimits(server, limits, 'closeOldestIdle');
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      return {
        port: (server.address() as AddressInfo).port,
        connections: () => new Promise((done, fail) => server.getConnections((err, n) => (err ? fail(err) : done(n)))),
        close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }),
      };
    };

    test('the oldest connection waits for its answer; the oldest idle one is closed instead', async () => {
      const server = await startHolding(CAPPED);
      const held: Socket[] = [];
      try {
        const busy = await tcp(server.port);
        held.push(busy);
        const busyAnswer = exchange(busy, pending.request);
        while (release.length === 0) await new Promise((r) => setTimeout(r, 10));
        for (let i = 1; i < CAP; i++) {
          held.push(await tcp(server.port));
          await until(server, i + 1);
        }
        const idleClosed = closedBy(held[1] as Socket, 5_000);
        held.push(await tcp(server.port));
        await idleClosed;
        for (const r of release.splice(0)) r();
        assert.equal(await busyAnswer, 'HTTP/1.1 200 OK', 'the request in progress was answered');
      } finally {
        for (const s of held) s.destroy();
        for (const r of release.splice(0)) r();
        await server.close();
      }
    });

    test(`when all ${CAP} are being answered, the new connection is closed and the ${CAP} get their answers`, async () => {
      const server = await startHolding(CAPPED);
      const held: Socket[] = [];
      try {
        const answers: Array<Promise<string | undefined>> = [];
        for (let i = 0; i < CAP; i++) {
          const s = await tcp(server.port);
          held.push(s);
          answers.push(exchange(s, pending.request));
          while (release.length < i + 1) await new Promise((r) => setTimeout(r, 10));
        }
        const refused = await tcp(server.port);
        held.push(refused);
        assert.ok((await closedBy(refused, 5_000)) < 5_000);
        for (const r of release.splice(0)) r();
        assert.deepEqual(await Promise.all(answers), Array(CAP).fill('HTTP/1.1 200 OK'));
      } finally {
        for (const s of held) s.destroy();
        for (const r of release.splice(0)) r();
        await server.close();
      }
    });
  });

  test('the health port answers while the metrics port is flooded', async () => {
    const metrics = await serveMetrics(0, exposition, { limits: CAPPED });
    const health = await serveHealth(0, checks, CAPPED);
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 3 * CAP; i++) held.push(await tcp(metrics.port));
      await until(metrics, CAP);
      const probe = await tcp(health.port);
      held.push(probe);
      assert.equal(await exchange(probe, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'), 'HTTP/1.1 200 OK');
    } finally {
      for (const s of held) s.destroy();
      await Promise.all([metrics.close(), health.close()]);
    }
  });
});
