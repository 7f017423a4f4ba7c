// A TLS-terminating reverse proxy between ONE operator process and the real kube-apiserver, for
// tests that inject faults into the operator's writes: Job creates delayed or answered 429 with
// Retry-After (storing nothing) at once or only after a delay (as API Priority and Fairness answers 429
// when a queued request's wait times out, or an overloaded server answers 503 late), Job deletes delayed. Everything else (lists, watches, the Lease,
// status writes, dry runs) passes through untouched, streamed both ways. The operator's bearer token
// is forwarded as sent: the apiserver authenticates the operator exactly as without the proxy.
// Every Job create and delete it sees is recorded with the moment it arrived and was answered.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Agent, createServer, request, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { type PemPair, selfSignedCertificate } from '../../src/http/self-signed.js';
import { writeKubeconfig } from './kubeconfig.js';

/** One Job create (POST) the operator sent. */
export interface CreateSeen {
  namespace: string;
  name: string;
  /** The SecondCronJob (the Job's owner label). */
  owner: string;
  slotMs: number;
  receivedMs: number;
  answeredMs?: number;
  /** The status code the operator got (the upstream's when forwarded; 429/503 when the proxy answered itself). */
  status?: number;
  /** Answered by the proxy itself (429 or 503, nothing stored), at once or late. */
  throttled: boolean;
  /** Forwarded to the apiserver: `status` is its answer. */
  forwarded: boolean;
}

/** One Job delete the operator sent. */
export interface DeleteSeen {
  namespace: string;
  name: string;
  receivedMs: number;
  answeredMs?: number;
  status?: number;
}

export interface FaultProxyOptions {
  /** The real apiserver, e.g. https://127.0.0.1:6443. */
  upstream: string;
  /** PEM bundle that verifies the apiserver's serving certificate. */
  upstreamCaPem: string;
  /** Clock for the records; tests that compare them with a JobWatcher give both the same one. */
  now?: () => number;
  ownerLabel?: string;
  slotAnnotation?: string;
}

const JOBS = /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs(?:\/([^/?]+))?$/;
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host'];

interface JobBody {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

export class FaultProxy {
  /** Every non-dry-run Job create, in arrival order. */
  readonly creates: CreateSeen[] = [];
  /** Every Job delete, in arrival order. */
  readonly deletes: DeleteSeen[] = [];
  /** Each Job create waits this long before it is forwarded. */
  createDelayMs = 0;
  /** Each Job delete waits this long before it is forwarded. */
  deleteDelayMs = 0;
  /** Until this instant (opts.now clock) every Job create is answered 429 by the proxy. */
  throttleCreatesUntilMs = 0;
  /** Retry-After (seconds) of those 429 answers, and of the late ones. */
  retryAfterSeconds = 1;
  /**
   * Until this instant (opts.now clock) every Job create is held for a delay drawn from
   * [lateAnswer.minMs, lateAnswer.maxMs] and then answered by the proxy with the next status of
   * lateAnswer.statuses in turn (429, 503, …), with Retry-After; nothing reaches the apiserver.
   */
  lateAnswerCreatesUntilMs = 0;
  lateAnswer: { minMs: number; maxMs: number; statuses: readonly (429 | 503)[] } = { minMs: 1_500, maxMs: 2_500, statuses: [429, 503] };
  /** For the late answers' delays; tests may seed it. */
  random: () => number = Math.random;
  private lateAnswers = 0;

  private readonly server: Server;
  private readonly agent: Agent;
  private readonly upstream: URL;
  private readonly sockets = new Set<Socket>();
  private readonly certPem: string;
  private readonly now: () => number;
  private port = 0;

  private constructor(private readonly opts: FaultProxyOptions, { cert, key }: PemPair) {
    this.upstream = new URL(opts.upstream);
    this.now = opts.now ?? Date.now;
    this.agent = new Agent({ ca: opts.upstreamCaPem, keepAlive: true, maxSockets: 256 });
    this.certPem = cert;
    this.server = createServer({ cert, key }, (req, res) => void this.handle(req, res));
    this.server.on('secureConnection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  static async start(opts: FaultProxyOptions): Promise<FaultProxy> {
    const serving = await selfSignedCertificate({ commonName: 'secondcron-fault-proxy', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], notBefore: new Date(Date.now() - 60_000), validDays: 1 });
    const proxy = new FaultProxy(opts, serving);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen({ host: '127.0.0.1', port: 0 }, () => resolve());
    });
    const address = proxy.server.address();
    if (address === null || typeof address === 'string') throw new Error('fault proxy: unexpected listen address');
    proxy.port = address.port;
    return proxy;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** A kubeconfig that reaches the apiserver through this proxy with the given bearer token. */
  writeKubeconfig(path: string, user: string, token: string, namespace?: string): void {
    writeKubeconfig(path, { server: this.url, caPem: this.certPem, user, token, namespace });
  }

  /** Creates received and not answered yet. */
  inFlightCreates(): CreateSeen[] {
    return this.creates.filter((c) => c.answeredMs === undefined);
  }

  /** Resets every fault (records are kept). */
  clearFaults(): void {
    this.createDelayMs = 0;
    this.deleteDelayMs = 0;
    this.throttleCreatesUntilMs = 0;
    this.lateAnswerCreatesUntilMs = 0;
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.agent.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const match = JOBS.exec(url.pathname);
    const dryRun = url.searchParams.has('dryRun');
    try {
      if (match && req.method === 'POST' && !match[2] && !dryRun) await this.create(req, res, match[1] as string);
      else if (match && req.method === 'DELETE' && match[2] && !dryRun) await this.delete(req, res, match[1] as string, match[2]);
      else this.forward(req, res, undefined);
    } catch (err) {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`fault proxy: ${String(err)}`);
    }
  }

  private async create(req: IncomingMessage, res: ServerResponse, namespace: string): Promise<void> {
    const body = await readBody(req);
    const job = parseJob(body);
    const record: CreateSeen = {
      namespace,
      name: job.metadata?.name ?? '',
      owner: job.metadata?.labels?.[this.opts.ownerLabel ?? 'secondcron.io/secondcronjob'] ?? '',
      slotMs: Date.parse(job.metadata?.annotations?.[this.opts.slotAnnotation ?? 'secondcron.io/scheduled-at'] ?? ''),
      receivedMs: this.now(),
      throttled: false,
      forwarded: false,
    };
    this.creates.push(record);
    const answered = (status: number): void => {
      record.status = status;
      record.answeredMs = this.now();
    };
    if (this.now() < this.throttleCreatesUntilMs) {
      record.throttled = true;
      this.refuse(res, 429);
      answered(429);
      return;
    }
    if (this.now() < this.lateAnswerCreatesUntilMs) {
      record.throttled = true;
      const { minMs, maxMs, statuses } = this.lateAnswer;
      const code = statuses[this.lateAnswers++ % statuses.length] ?? 429;
      await sleep(minMs + (maxMs - minMs) * this.random());
      this.refuse(res, code);
      answered(code);
      return;
    }
    if (this.createDelayMs > 0) await sleep(this.createDelayMs);
    record.forwarded = true;
    this.forward(req, res, body, answered);
  }

  /** Answers a create itself with 429 or 503 and Retry-After, as an apiserver that stored nothing. */
  private refuse(res: ServerResponse, code: 429 | 503): void {
    const status = {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code,
      ...(code === 429
        ? { reason: 'TooManyRequests', message: 'fault proxy: too many requests, please try again later' }
        : { reason: 'ServiceUnavailable', message: 'fault proxy: the server is currently unable to handle the request' }),
      details: { retryAfterSeconds: this.retryAfterSeconds },
    };
    if (res.destroyed) return; // the client gave up waiting
    res.writeHead(code, { 'content-type': 'application/json', 'retry-after': String(this.retryAfterSeconds) });
    res.end(JSON.stringify(status));
  }

  private async delete(req: IncomingMessage, res: ServerResponse, namespace: string, name: string): Promise<void> {
    const body = await readBody(req);
    const record: DeleteSeen = { namespace, name, receivedMs: this.now() };
    this.deletes.push(record);
    if (this.deleteDelayMs > 0) await sleep(this.deleteDelayMs);
    this.forward(req, res, body, (status) => {
      record.status = status;
      record.answeredMs = this.now();
    });
  }

  /** Sends the request upstream (the body given, or streamed from req) and streams the answer back. */
  private forward(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, answered?: (status: number) => void): void {
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.includes(k)) headers[k] = v;
    headers.host = this.upstream.host;
    if (body) headers['content-length'] = String(body.length);
    const upstream = request(
      { protocol: 'https:', hostname: this.upstream.hostname, port: this.upstream.port, method: req.method, path: req.url, headers, agent: this.agent },
      (up) => {
        const out: OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && v !== null && !HOP_BY_HOP.includes(k)) out[k] = v as OutgoingHttpHeaders[string];
        res.writeHead(up.statusCode ?? 502, out);
        res.flushHeaders();
        up.pipe(res);
        up.once('end', () => answered?.(up.statusCode ?? 502));
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`fault proxy upstream: ${err.message}`);
      answered?.(502);
    });
    // A client that goes away (a watch closed, a timeout) ends the upstream request too.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    if (body) upstream.end(body);
    else req.pipe(upstream);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function parseJob(body: Buffer): JobBody {
  try {
    return JSON.parse(body.toString('utf8')) as JobBody;
  } catch {
    return {}; // not JSON (protobuf): recorded without name or slot
  }
}
