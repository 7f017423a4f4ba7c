// 2,000 connections of each kind that holds a socket without finishing a request — silent TCP,
// TLS handshake then silence, a partial request line then silence — opened at once against the
// secure metrics port and the health port (the production caps, 256 and 32; timeouts shortened), both
// set up from the operator's own flags (parseConfig), as main.ts sets them up:
// neither server ever holds more than its cap, every connection is closed by the server within the
// timeout (or sooner, closed for a newer one at the cap), and a kubelet-style probe of the health port
// answers throughout the flood of the metrics port and throughout the flood of the health port itself
// (before the cap closed the oldest silent connection instead of the new one: 0 of 12 and 0 of 16).
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { after, before, test } from 'node:test';

import { Registry } from 'prom-client';

import { parseConfig } from '../../../src/config.js';
import { type RunningServer, serveHealth, serveMetrics } from '../../../src/http/servers.js';
import { MetricsExposition } from '../../../src/metrics/exposition.js';
import { selfSignedCertificate } from '../../support/self-signed-cert.js';

const N = 2_000;
const SHORT = ['--http-read-header-timeout=1500ms', '--http-request-timeout=3s', '--http-socket-timeout=1s', '--http-keep-alive-timeout=1s', '--metrics-tls-handshake-timeout=1s'];
const { metricsLimits: METRICS, healthLimits: HEALTH } = parseConfig(SHORT, {});
/** Longest a connection may live: the longest timeout plus a loaded machine's slack. */
const DEADLINE_MS = 1_500 + 5_000;

let metrics: RunningServer;
let health: RunningServer;
before(async () => {
  const pair = await selfSignedCertificate('127.0.0.1');
  metrics = await serveMetrics(0, new MetricsExposition(new Registry(), undefined), {
    limits: METRICS,
    secure: { certificate: { current: () => pair, watch: () => () => {} }, authorize: () => Promise.resolve({ status: 200 }) },
  });
  health = await serveHealth(0, { healthz: [{ name: 'ok', run: () => undefined }], readyz: [] }, HEALTH);
});
after(async () => {
  await metrics.close();
  await health.close();
});

type Kind = 'silent TCP' | 'TLS then silence' | 'partial request line';

/**
 * Opens one connection of `kind`; resolves with how long it lived from the moment the TCP connection
 * was established, or with 0 if it never got established.
 */
function hold(port: number, kind: Kind): Promise<number> {
  return new Promise((resolve) => {
    let established: number | undefined;
    const onConnect = (): void => {
      established = performance.now();
      if (kind === 'partial request line') socket.write('GET / HTTP/1.1\r\n');
    };
    const socket: Socket = kind === 'TLS then silence' ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : netConnect(port, '127.0.0.1');
    socket.once('connect', onConnect);
    socket.on('error', () => {});
    socket.once('close', () => resolve(established === undefined ? 0 : performance.now() - established));
    // The test's own guard: a connection the server never closes fails the test below, not hangs it.
    setTimeout(() => socket.destroy(), DEADLINE_MS + 5_000).unref();
  });
}

/**
 * `N` connections in batches of 250, 20 ms apart: all 2,000 connects in one go overflow the kernel's
 * accept queue, and a client whose final handshake ACK was dropped believes itself connected to a
 * server that never saw it (and, silent, never finds out) — the kernel's doing, not the server's.
 */
async function flood(port: number, kind: Kind): Promise<number[]> {
  const lives: Array<Promise<number>> = [];
  for (let i = 0; i < N; i += 250) {
    for (let j = i; j < Math.min(N, i + 250); j++) lives.push(hold(port, kind));
    await new Promise((r) => setTimeout(r, 20));
  }
  return Promise.all(lives);
}

function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = netConnect(port, '127.0.0.1', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    let got = '';
    socket.on('data', (c: Buffer) => (got += c.toString()));
    socket.on('error', () => resolve(undefined));
    socket.once('close', () => resolve(got.startsWith('HTTP/1.1 200') ? performance.now() - started : undefined));
  });
}

test('the flags reach the limits: timeouts shortened, the caps the production defaults', () => {
  assert.deepEqual([METRICS.headersTimeoutMs, METRICS.requestTimeoutMs, METRICS.inactivityTimeoutMs, METRICS.keepAliveTimeoutMs, METRICS.tlsHandshakeTimeoutMs], [1_500, 3_000, 1_000, 1_000, 1_000]);
  assert.deepEqual([METRICS.maxConnections, HEALTH.maxConnections], [256, 32]);
});

test(`${N} connections of each kind against each port: at most the cap held, all closed by the server in time, probes answered`, async (t) => {
  const peaks = { metrics: 0, health: 0 };
  const sample = setInterval(() => {
    // The servers' own count of open connections (node's net.Server.getConnections).
    for (const [name, server] of [['metrics', metrics], ['health', health]] as const) {
      void server.connections().then((n) => (peaks[name] = Math.max(peaks[name], n)));
    }
  }, 20);
  let phase: 'metrics' | 'health' = 'metrics';
  const probes: Array<{ phase: 'metrics' | 'health'; ms: number | undefined }> = [];
  const prober = setInterval(() => {
    const during = phase;
    void probe(health.port).then((ms) => probes.push({ phase: during, ms }));
  }, 250);
  try {
    for (const kind of ['silent TCP', 'TLS then silence', 'partial request line'] as const) {
      // The metrics port first, alone: the probes of the health port meanwhile show it is not starved.
      phase = 'metrics';
      const onMetrics = await flood(metrics.port, kind);
      phase = 'health';
      const onHealth = await flood(health.port, kind === 'TLS then silence' ? 'silent TCP' : kind);
      const longest = Math.max(...onMetrics, ...onHealth);
      const established = [...onMetrics, ...onHealth].filter((ms) => ms > 0).length;
      t.diagnostic(`${kind}: ${established} of ${2 * N} established, longest-lived ${Math.round(longest)} ms`);
      assert.ok(longest < DEADLINE_MS, `${kind}: a connection lived ${Math.round(longest)} ms`);
    }
  } finally {
    clearInterval(sample);
    clearInterval(prober);
  }
  const during = (p: 'metrics' | 'health'): Array<number | undefined> => probes.filter((x) => x.phase === p).map((x) => x.ms);
  const answered = during('metrics').filter((ms): ms is number => ms !== undefined);
  t.diagnostic(`peak connections held: metrics ${peaks.metrics} (cap ${METRICS.maxConnections}), health ${peaks.health} (cap ${HEALTH.maxConnections})`);
  t.diagnostic(`probes during the metrics flood: ${answered.length} of ${during('metrics').length} answered, slowest ${Math.round(Math.max(...answered))} ms; during the health port's own flood: ${during('health').filter((ms) => ms !== undefined).length} of ${during('health').length}`);
  assert.ok(peaks.metrics <= METRICS.maxConnections && peaks.metrics > 0, `metrics held ${peaks.metrics}`);
  assert.ok(peaks.health <= HEALTH.maxConnections && peaks.health > 0, `health held ${peaks.health}`);
  // Neither a flood of the metrics port nor one of the health port itself starves the probes.
  for (const phase of ['metrics', 'health'] as const) {
    assert.ok(during(phase).length >= 3, `${during(phase).length} probes during the ${phase} flood`);
    assert.equal(during(phase).filter((ms) => ms !== undefined).length, during(phase).length, `a probe failed during the ${phase} flood`);
  }
});
