// Two small HTTP servers: /metrics on the metrics port, /healthz and /readyz on the health port
// (separate ports so probes keep working when a scrape is slow, and so they can be exposed differently).
import { type Server, createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

import express from 'express';
import type { Registry } from 'prom-client';

import type { ServingCertificate } from './cert-watcher.js';
import type { AuthDecision, AuthRequest } from './metrics-auth.js';

const gzipAsync = promisify(gzip);

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
  /** Families rendered outside prom-client (the per-schedule gauges), appended to the registry's. */
  extra?: () => string;
  /** HTTPS with this certificate (reloaded when it changes), and every request authorized first (metrics.secure). */
  secure?: { certificate: ServingCertificate; authorize: (req: AuthRequest) => Promise<AuthDecision> };
}

/**
 * /metrics: the registry, then `extra`. Gzipped when the scraper accepts it, as Prometheus does:
 * 10,000 schedules' gauges are 7.6 MiB of text, 0.23 MiB gzipped (bench/README.md).
 */
export async function serveMetrics(port: number, registry: Registry, opts: MetricsOptions = {}): Promise<RunningServer> {
  const app = express();
  app.disable('x-powered-by');
  const secure = opts.secure;
  if (secure) {
    app.use(async (req, res, next) => {
      const decision = await secure.authorize({ authorization: req.get('authorization'), verb: req.method.toLowerCase(), path: req.path });
      if (decision.status === 200) return next();
      // The status alone: what went wrong is in the operator's log, not for whoever reached the port.
      if (decision.status === 503) res.set('Retry-After', String(decision.retryAfterSeconds));
      res.status(decision.status).type('text/plain').send(`${STATUS_TEXT[decision.status]}\n`);
    });
  }
  app.get('/metrics', async (req, res) => {
    const text = (await registry.metrics()) + (opts.extra?.() ?? '');
    res.set('Content-Type', registry.contentType);
    res.vary('Accept-Encoding');
    if (req.acceptsEncodings('gzip', 'identity') === 'gzip') {
      res.set('Content-Encoding', 'gzip');
      res.send(await gzipAsync(text)); // on libuv's thread pool, not the event loop
    } else {
      res.send(text);
    }
  });
  if (!secure) return listen(createHttpServer(app), port);
  const server = createHttpsServer(secure.certificate.current(), app);
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
