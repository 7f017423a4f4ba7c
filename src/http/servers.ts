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
import type { AuthDecision, AuthRequest } from './metrics-auth.js';

export interface Check {
  name: string;
  /** undefined = passing; a string says what is wrong. */
  run(): string | undefined;
}

export interface RunningServer {
  port: number;
  close(): Promise<void>;
}

export interface MetricsOptions {
  /** HTTPS with this certificate (reloaded when it changes), and every request authorized first (metrics.secure). */
  secure?: { certificate: ServingCertificate; authorize: (req: AuthRequest) => Promise<AuthDecision> };
}

/**
 * /metrics, streamed; gzipped when the scraper accepts it, as Prometheus does: 10,000 schedules' gauges
 * are 7 MiB of text, 0.2 MiB gzipped (bench/README.md). `?name[]=a&name[]=b`: only those families.
 */
export async function serveMetrics(port: number, exposition: MetricsExposition, opts: MetricsOptions = {}): Promise<RunningServer> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', async (req, res) => {
    const names = new URL(req.originalUrl, 'http://metrics').searchParams.getAll('name[]');
    const gzip = req.acceptsEncodings('gzip', 'identity') === 'gzip';
    const body = await exposition.body({ gzip, ...(names.length ? { names: new Set(names) } : {}) });
    res.set('Content-Type', exposition.contentType);
    res.vary('Accept-Encoding');
    if (gzip) res.set('Content-Encoding', 'gzip');
    await pipeline(Readable.from(body), res).catch(() => {}); // a scraper that hangs up mid-answer
  });
  const secure = opts.secure;
  if (!secure) return listen(createHttpServer(app), port);
  const server = createHttpsServer(secure.certificate.current(), authorizedFirst(secure.authorize, app));
  const unwatch = secure.certificate.watch((pair) => server.setSecureContext(pair));
  const running = await listen(server, port);
  return {
    port: running.port,
    close: () => {
      unwatch();
      return running.close();
    },
  };
}

const STATUS_TEXT = { 401: 'Unauthorized', 403: 'Forbidden', 500: 'Internal Server Error', 503: 'Service Unavailable' } as const;

/**
 * Every request authorized before express sees it, refusals answered by node:http directly: anyone
 * who reaches the port can send junk as fast as TLS allows, and express's per-request set-up
 * (request/response objects, routing, an ETag for the body) was most of what a refusal cost:
 * 411–508 ms of CPU per 2,500 refusals through express, 135–205 ms this way (bench/README.md,
 * "Issue 21, third round").
 */
function authorizedFirst(authorize: (req: AuthRequest) => Promise<AuthDecision>, app: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const decided = authorize({ authorization: req.headers.authorization, verb: (req.method ?? 'GET').toLowerCase(), path });
    void decided.catch((): AuthDecision => ({ status: 500 })).then((decision) => {
      if (decision.status === 200) return app(req, res);
      // The status alone: what went wrong is in the operator's log, not for whoever reached the port.
      const body = `${STATUS_TEXT[decision.status]}\n`;
      res.writeHead(decision.status, {
        'content-type': 'text/plain; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        ...(decision.status === 503 ? { 'retry-after': String(decision.retryAfterSeconds) } : {}),
      });
      res.end(body);
    });
  };
}

export async function serveHealth(port: number, checks: { healthz: Check[]; readyz: Check[] }): Promise<RunningServer> {
  const app = express();
  app.disable('x-powered-by');
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
  return listen(createHttpServer(app), port);
}

function listen(server: Server, port: number): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    server.listen(port);
    server.once('error', reject);
    server.once('listening', () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
