// The flood scenario's connection flood (issue 34): what any pod that reaches the operator's two ports
// can do without a token. `attempts` connections are opened evenly over a window, four in five on
// the metrics port (TLS) and one in five on the health port (plain HTTP), in three styles taken in
// turn: a TCP connection that says nothing, a TLS handshake followed by silence (metrics only), and a
// request cut short after its first header line. Each is held until the operator closes it or the
// window ends. Meanwhile the health port is probed once a second on a new connection with a 5 s
// timeout, as the kubelet does. Runs in the flooding process (bench/lib/flooder.ts).
import { request as httpRequest } from 'node:http';
import { type Socket, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

import { sleepUntil } from './progress.js';

export interface ConnectionWindow {
  host: string;
  metricsPort: number;
  healthPort: number;
  /** Epoch ms the window opens; the attempts are spread evenly over `windowMs`. */
  fromMs: number;
  windowMs: number;
  attempts: number;
}

export interface ConnectionOutcome {
  attempts: number;
  /** TCP connections established. */
  connected: number;
  /** Established, then closed or reset by the operator before the window ended (over its cap at once, else at a timeout). */
  closedByOperator: number;
  /** Never established (refused, reset during the handshake, or timed out). */
  failed: number;
  /** Still open when the window ended (the flooder closed them then). */
  openAtEnd: number;
  /** Most of the flood's connections open at once. */
  peakOpen: number;
  /** Health probes (GET /readyz on a new connection, 5 s timeout): sent, answered 200, slowest answer. */
  probes: { sent: number; ok: number; max_ms: number };
  /** Sending the window's attempts took (from the window's start). */
  ms: number;
  /** CPU the flooding process spent on the window (user + system). */
  cpuMs: number;
}

type Style = 'silent' | 'handshake' | 'partial';

const PARTIAL_REQUEST = 'GET /metrics HTTP/1.1\r\nHost: flood\r\n';
const PROBE_TIMEOUT_MS = 5_000;

export async function floodConnections(w: ConnectionWindow): Promise<ConnectionOutcome> {
  const out: ConnectionOutcome = { attempts: w.attempts, connected: 0, closedByOperator: 0, failed: 0, openAtEnd: 0, peakOpen: 0, probes: { sent: 0, ok: 0, max_ms: 0 }, ms: 0, cpuMs: 0 };
  const open = new Set<Socket>();
  let ended = false;
  const hold = (i: number): void => {
    const health = i % 5 === 4;
    const styles: Style[] = health ? ['silent', 'partial'] : ['silent', 'handshake', 'partial'];
    const style = styles[i % styles.length] as Style;
    const port = health ? w.healthPort : w.metricsPort;
    // A silent client of the TLS port never sends its ClientHello: a plain TCP socket.
    const tls = !health && style !== 'silent';
    const socket = tls ? tlsConnect({ host: w.host, port, rejectUnauthorized: false }) : tcpConnect({ host: w.host, port });
    let established = false;
    socket.once('connect', () => {
      established = true;
      out.connected++;
      open.add(socket);
      out.peakOpen = Math.max(out.peakOpen, open.size);
      if (style === 'partial' && !tls) socket.write(PARTIAL_REQUEST);
    });
    if (tls && style === 'partial') socket.once('secureConnect', () => socket.write(PARTIAL_REQUEST));
    socket.on('error', () => {});
    socket.once('close', () => {
      open.delete(socket);
      if (ended) return;
      if (established) out.closedByOperator++;
      else out.failed++;
    });
  };

  await sleepUntil(w.fromMs);
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  const probing = probeEverySecond(w, out.probes);
  for (let i = 0; i < w.attempts; i++) {
    await sleepUntil(w.fromMs + (i * w.windowMs) / w.attempts);
    hold(i);
  }
  out.ms = Date.now() - t0;
  await sleepUntil(w.fromMs + w.windowMs);
  ended = true;
  out.openAtEnd = open.size;
  for (const s of open) s.destroy();
  open.clear();
  await probing;
  const cpu = process.cpuUsage(cpu0);
  out.cpuMs = Math.round((cpu.user + cpu.system) / 1000);
  return out;
}

async function probeEverySecond(w: ConnectionWindow, probes: ConnectionOutcome['probes']): Promise<void> {
  const pending: Promise<void>[] = [];
  for (let at = w.fromMs; at < w.fromMs + w.windowMs; at += 1_000) {
    await sleepUntil(at);
    probes.sent++;
    pending.push(
      probe(w.host, w.healthPort).then((ms) => {
        if (ms === null) return;
        probes.ok++;
        probes.max_ms = Math.max(probes.max_ms, ms);
      }),
    );
  }
  await Promise.all(pending);
}

/** GET /readyz on a connection of its own: the answer's ms, or null without a 200 within the timeout. */
function probe(host: string, port: number): Promise<number | null> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = httpRequest({ host, port, path: '/readyz', agent: false, timeout: PROBE_TIMEOUT_MS }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode === 200 ? Math.round(performance.now() - t0) : null));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(null));
    req.end();
  });
}
