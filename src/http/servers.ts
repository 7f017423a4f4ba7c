// Two small HTTP servers: /metrics on the metrics port, /healthz and /readyz on the health port
// (separate ports so probes keep working when a scrape is slow, and so they can be exposed differently).
import { type IncomingMessage, type Server, type ServerResponse, createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import express from 'express';

import type { MetricsExposition } from '../metrics/exposition.js';
import type { ServingCertificate } from './cert-watcher.js';
import { type AtCap, type ConnectionLimits, HEALTH_LIMITS, METRICS_LIMITS, applyLimits, httpOptions } from './connection-limits.js';
import type { AuthDecision, AuthRequest } from './metrics-auth.js';
import { DEFAULT_TLS_POLICY, type TlsPolicy, tlsServerOptions } from './tls-policy.js';

export interface Check {
  name: string;
  /** undefined = passing; a string says what is wrong. */
  run(): string | undefined;
}

export interface RunningServer {
  port: number;
  /** Connections open now (those mid-TLS-handshake included). */
  connections(): Promise<number>;
  close(): Promise<void>;
}

export interface MetricsOptions {
  /**
   * HTTPS with this certificate (reloaded when it changes) and TLS policy (DEFAULT_TLS_POLICY unless
   * given), and every request authorized first (metrics.secure).
   */
  secure?: { certificate: ServingCertificate; authorize: (req: AuthRequest) => Promise<AuthDecision>; tls?: TlsPolicy };
  /** Timeouts and the connection cap (the flags --http-*, --metrics-*); METRICS_LIMITS when not given. */
  limits?: ConnectionLimits;
}

/** The one thing the metrics port serves. */
const METRICS_PATH = '/metrics';

/**
 * /metrics, streamed; gzipped when the scraper accepts it, as Prometheus does: 10,000 schedules' gauges
 * are 7 MiB of text, 0.2 MiB gzipped (bench/README.md). `?name[]=a&name[]=b`: only those families.
 */
export async function serveMetrics(port: number, exposition: MetricsExposition, opts: MetricsOptions = {}): Promise<RunningServer> {
  const app = express();
  app.disable('x-powered-by');
  app.get(METRICS_PATH, async (req, res) => {
    const names = new URL(req.originalUrl, 'http://metrics').searchParams.getAll('name[]');
    const gzip = req.acceptsEncodings('gzip', 'identity') === 'gzip';
    const body = await exposition.body({ gzip, ...(names.length ? { names: new Set(names) } : {}) });
    res.set('Content-Type', exposition.contentType);
    res.vary('Accept-Encoding');
    if (gzip) res.set('Content-Encoding', 'gzip');
    await pipeline(Readable.from(body), res).catch(() => {}); // a scraper that hangs up mid-answer
  });
  const limits = opts.limits ?? METRICS_LIMITS;
  const secure = opts.secure;
  if (!secure) return listen(createHttpServer(httpOptions(limits), metricsOnly(app)), port, limits, 'refuseNew');
  const tls = tlsServerOptions(secure.tls ?? DEFAULT_TLS_POLICY);
  const server = createHttpsServer(
    { ...secure.certificate.current(), ...tls, ...httpOptions(limits), handshakeTimeout: limits.tlsHandshakeTimeoutMs },
    metricsOnly(authorizedFirst(secure.authorize, app)),
  );
  // setSecureContext replaces the whole context: the policy goes with every new certificate.
  const unwatch = secure.certificate.watch((pair) => server.setSecureContext({ ...pair, ...tls }));
  const running = await listen(server, port, limits, 'refuseNew');
  return {
    port: running.port,
    connections: running.connections,
    close: () => {
      unwatch();
      return running.close();
    },
  };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const STATUS_TEXT = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
} as const;

/** A bare status text, answered by node:http directly (nothing of what went wrong, no express set-up). */
function answer(res: ServerResponse, status: keyof typeof STATUS_TEXT, headers: Record<string, string> = {}): void {
  const body = `${STATUS_TEXT[status]}\n`;
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The path of a request target without its query. */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/**
 * Exactly `GET /metrics` reaches `next`; anything else is refused here, before any review, as
 * controller-runtime wraps only its /metrics handler in the authentication filter and its mux matches
 * paths exactly. (Express alone would not do: it matches /METRICS and /metrics/ too, while a review
 * would have asked about those strings.) So a valid token with random paths costs no API request.
 */
function metricsOnly(next: Handler): Handler {
  return (req, res) => {
    if (pathOf(req) !== METRICS_PATH) return answer(res, 404);
    if (req.method !== 'GET') return answer(res, 405, { allow: 'GET' });
    next(req, res);
  };
}

/**
 * Every request authorized before express sees it, refusals answered by node:http directly: anyone
 * who reaches the port can send junk as fast as TLS allows, and express's per-request set-up
 * (request/response objects, routing, an ETag for the body) was most of what a refusal cost:
 * 411–508 ms of CPU per 2,500 refusals through express, 135–205 ms this way (bench/README.md,
 * "Issue 21, third round").
 */
function authorizedFirst(authorize: (req: AuthRequest) => Promise<AuthDecision>, app: Handler): Handler {
  return (req, res) => {
    const decided = authorize({ authorization: req.headers.authorization, verb: (req.method ?? 'GET').toLowerCase(), path: pathOf(req) });
    void decided.catch((): AuthDecision => ({ status: 500 })).then((decision) => {
      if (decision.status === 200) return app(req, res);
      // The status alone: what went wrong is in the operator's log, not for whoever reached the port.
      answer(res, decision.status, decision.status === 503 ? { 'retry-after': String(decision.retryAfterSeconds) } : {});
    });
  };
}

export async function serveHealth(port: number, checks: { healthz: Check[]; readyz: Check[] }, limits: ConnectionLimits = HEALTH_LIMITS): Promise<RunningServer> {
  const app = express();
  app.disable('x-powered-by');
  // Exact paths, as the kubelet asks for them.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  for (const [path, list] of [['/healthz', checks.healthz], ['/readyz', checks.readyz]] as const) {
    app.get(path, (req, res) => {
      const failures = list.map((c) => [c.name, c.run()] as const).filter(([, msg]) => msg !== undefined);
      const body = list.map((c) => {
        const failed = failures.find(([n]) => n === c.name);
        return failed ? `[-]${c.name} failed: ${failed[1]}` : `[+]${c.name} ok`;
      });
      res.status(failures.length ? 503 : 200).type('text/plain');
      res.send(req.query.verbose !== undefined || failures.length ? body.join('\n') + '\n' : 'ok\n');
    });
  }
  return listen(createHttpServer(httpOptions(limits), app), port, limits, 'closeOldestIdle');
}

function listen(server: Server, port: number, limits: ConnectionLimits, atCap: AtCap): Promise<RunningServer> {
  applyLimits(server, limits, atCap);
  return new Promise((resolve, reject) => {
    server.listen(port);
    server.once('error', reject);
    server.once('listening', () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        connections: () => new Promise((done, fail) => server.getConnections((err, n) => (err ? fail(err) : done(n)))),
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
