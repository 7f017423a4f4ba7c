// How long and how many connections anyone who reaches a port may hold. Node's defaults bound almost
// nothing: a TCP connection that never sends a byte, a TLS handshake followed by silence, and
// `GET / HTTP/1.1\r\n` followed by silence were all still open after 330 s (issue 34), each holding
// ~42 KiB, on the one thread that also runs the second-granularity scheduler.
//
// The values are controller-runtime's metrics/probe server's (pkg/internal/httpserver.New):
//   ReadHeaderTimeout 32 s, IdleTimeout 90 s, MaxHeaderBytes 1 MiB,
// and where Go bounds something Node does not by the same setting, the nearest Node knob (each one
// a flag of src/config.ts, --http-*, --metrics-tls-handshake-timeout, --*-max-connections, and a
// chart value under connectionLimits):
// - Go's ReadHeaderTimeout runs from the moment it starts reading a request, so a silent connection
//   is closed after it. Node's headersTimeout only starts at the first byte of a request; the
//   socket inactivity timeout (server.timeout) closes the silent ones, with the same 32 s.
// - Go's TLS handshake deadline is the smallest of its read timeouts, here 32 s; a handshake takes
//   milliseconds, so 10 s (net/http's DefaultTransport TLSHandshakeTimeout) is ample.
// - Header bytes: Node's own 16 KiB, not Go's 1 MiB; a bearer token is 1–2 KiB, and 1 MiB per
//   connection times the connection cap would be the chart's whole memory limit.
// - Go has no connection cap. Each server has its own, so a flood of the metrics port cannot starve
//   the kubelet's probes. What happens at the cap differs per port (AtCap).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** From the first byte of a request until its headers are complete (Node's headersTimeout). */
  headersTimeoutMs: number;
  /** From the first byte of a request until all of it is received (Node's requestTimeout). */
  requestTimeoutMs: number;
  /** No byte read or written for this long while a request is awaited or in progress: closed. */
  inactivityTimeoutMs: number;
  /** Between requests on a kept-alive connection (Go's IdleTimeout). */
  keepAliveTimeoutMs: number;
  /** From accept until the TLS handshake is complete (HTTPS only). */
  tlsHandshakeTimeoutMs: number;
  maxHeaderBytes: number;
  maxHeadersCount: number;
  /** Connections held at once (including ones mid-handshake); what one more does is the port's AtCap. */
  maxConnections: number;
}

/** controller-runtime's ReadHeaderTimeout. */
export const READ_HEADER_TIMEOUT_MS = 32_000;
/** controller-runtime's IdleTimeout ("matches http.DefaultTransport keep-alive timeout"). */
export const IDLE_TIMEOUT_MS = 90_000;

const COMMON = {
  headersTimeoutMs: READ_HEADER_TIMEOUT_MS,
  // A GET has no body, so this is met with the headers; it bounds a POST that trickles a body.
  requestTimeoutMs: 2 * READ_HEADER_TIMEOUT_MS,
  inactivityTimeoutMs: READ_HEADER_TIMEOUT_MS,
  keepAliveTimeoutMs: IDLE_TIMEOUT_MS,
  tlsHandshakeTimeoutMs: 10_000,
  maxHeaderBytes: 16 * 1024,
  maxHeadersCount: 64,
} as const;

/**
 * Prometheus keeps one connection per target (two with an HA pair); 256 leaves room for every scraper
 * a cluster has, and at ~42 KiB each is ~10 MiB.
 */
export const METRICS_LIMITS: ConnectionLimits = { ...COMMON, maxConnections: 256 };
/** The kubelet opens one connection per probe and closes it. */
export const HEALTH_LIMITS: ConnectionLimits = { ...COMMON, maxConnections: 32 };

/**
 * How often Node checks requests against headersTimeout and requestTimeout: a tenth of the shorter,
 * at most 1 s. Node's default is 30 s, which would let a request outlive headersTimeout by that much.
 */
function checkIntervalMs(limits: ConnectionLimits): number {
  return Math.max(10, Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 10)));
}

/** Options for http.createServer / https.createServer (the ones only settable at construction). */
export function httpOptions(limits: ConnectionLimits): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number; maxHeaderSize: number } {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: checkIntervalMs(limits),
    maxHeaderSize: limits.maxHeaderBytes,
  };
}

/**
 * What a new connection beyond the cap does.
 * - 'closeOldestIdle' (the health port): it closes the oldest connection that has no request being
 *   answered (see boundConnections). The kubelet opens a new connection per probe, so refusing new
 *   ones let a flood of silent connections hold the cap for the whole 32 s socket timeout: 4 of 80
 *   probes were answered during bench/scenarios/flood.ts's connection flood, enough to fail liveness
 *   and restart the leader; with this, 80 of 80 (bench/README.md, "Issue 34: the flood figure").
 * - 'refuseNew' (the metrics port, Node's maxConnections): it is closed at accept. The scraper keeps
 *   its connection alive, so a flood does not take it away; and closing old ones instead would let a
 *   flood buy one TLS handshake per connection attempt: with both ports closing the oldest, operator
 *   CPU during the connection flood was 22 % of a core against 7 % refusing on the metrics port.
 */
export type AtCap = 'closeOldestIdle' | 'refuseNew';

/** The limits that are properties of the server. */
export function applyLimits(server: Server, limits: ConnectionLimits, atCap: AtCap): void {
  server.timeout = limits.inactivityTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxHeadersCount = limits.maxHeadersCount;
  if (atCap === 'refuseNew') server.maxConnections = limits.maxConnections;
  else boundConnections(server, limits.maxConnections);
}

/**
 * At most `cap` connections open; at the cap, a new connection closes the oldest one that has no
 * request being answered (a silent one, one mid-headers, an idle kept-alive one), and only when all
 * `cap` are being answered is the new one closed instead. The kubelet sends its request as soon as it
 * is connected, so the connection most likely to be a flood's is the oldest one still silent.
 */
function boundConnections(server: Server, cap: number): void {
  // Accept order (a Map iterates in insertion order). Keyed by the peer's address and port: an HTTPS
  // server hands out the TCP socket at accept and the TLS socket with each request, and the peer's
  // address and port are what the two have in common.
  const open = new Map<string, Socket>();
  /** Requests being answered per connection. */
  const answering = new Map<string, number>();
  const forget = (key: string): void => {
    open.delete(key);
    answering.delete(key);
  };
  server.on('connection', (socket: Socket) => {
    const key = peerOf(socket);
    if (key === undefined) return void socket.destroy(); // already gone
    open.set(key, socket);
    socket.once('close', () => open.get(key) === socket && forget(key));
    if (open.size <= cap) return;
    // The new connection is last in order, so it is closed only if every older one is being answered.
    for (const [candidate, held] of open) {
      if (answering.has(candidate)) continue;
      forget(candidate);
      held.destroy();
      return;
    }
  });
  server.on('request', (req, res) => {
    const key = peerOf(req.socket);
    if (key === undefined || !open.has(key)) return;
    answering.set(key, (answering.get(key) ?? 0) + 1);
    res.once('close', () => {
      const left = (answering.get(key) ?? 1) - 1;
      if (left > 0) answering.set(key, left);
      else answering.delete(key);
    });
  });
}

function peerOf(socket: Socket): string | undefined {
  const { remoteAddress, remotePort } = socket;
  return remoteAddress === undefined || remotePort === undefined ? undefined : `${remoteAddress} ${remotePort}`;
}
