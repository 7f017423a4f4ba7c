// A TLS-terminating reverse proxy between ONE operator process and the real kube-apiserver, for
// tests that inject faults into the operator's writes: Job creates delayed or answered 429 with
// Retry-After (storing nothing) at once or only after a delay (as API Priority and Fairness answers 429
// when a queued request's wait times out, or an overloaded server answers 503 late), Job deletes delayed,
// and a create stored whose answer is lost (the client's connection reset once the apiserver answered)
// with the Job hidden from the Job watches and lists it carries (a watch that lost the Job's events),
// so the client's cache never shows it. Everything else (watches and lists of other Jobs, the Lease,
// status writes, dry runs) passes through untouched, streamed both ways. The operator's bearer token
// is forwarded as sent: the apiserver authenticates the operator exactly as without the proxy.
// Every Job create, delete and read by name it sees is recorded with the moment it arrived and was
// answered, and every watch event or list item it hid.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Agent, createServer, request, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { type Readable, Transform } from 'node:stream';
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
  /** Forwarded and answered by the apiserver (`status`), but the client got no answer: its connection was destroyed. */
  answerLost: boolean;
}

/** One read of a Job by name (GET …/jobs/<name>) the client sent. */
export interface ReadSeen {
  namespace: string;
  name: string;
  receivedMs: number;
  answeredMs?: number;
  status?: number;
}

/** A watch event or list item of a hidden Job that the proxy did not pass on. */
export interface HiddenSeen {
  name: string;
  /** The watch event's type (ADDED, MODIFIED, DELETED), or LIST for an item dropped from a list. */
  type: string;
  atMs: number;
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
/** A collection of Jobs, in one namespace or all: what the operator's Job reflector lists and watches. */
const JOB_COLLECTION = /^\/apis\/batch\/v1\/(?:namespaces\/[^/]+\/)?jobs$/;
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host'];

interface JobBody {
  metadata?: { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
}

export class FaultProxy {
  /** Every non-dry-run Job create, in arrival order. */
  readonly creates: CreateSeen[] = [];
  /** Every Job delete, in arrival order. */
  readonly deletes: DeleteSeen[] = [];
  /** Every Job read by name, in arrival order. */
  readonly reads: ReadSeen[] = [];
  /** Every watch event and list item hidden (hiddenJobNames), in the order dropped. */
  readonly hidden: HiddenSeen[] = [];
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
  /**
   * The first Job create it matches is forwarded and stored, but its answer is lost: once the
   * apiserver has answered, the proxy destroys the client's connection instead (an unknown outcome to
   * the client, as a reset or a timeout after the write). Matched once, then cleared. With `hide`, the
   * Job's name joins hiddenJobNames before the create is forwarded: its watch events, which may come
   * before the answer would have, are dropped too.
   */
  loseCreateAnswer: { match: (create: Readonly<CreateSeen>) => boolean; hide: boolean } | undefined;
  /**
   * Jobs the client's cache must not see: every event of theirs in a Job watch (GET on a jobs
   * collection with watch=true/1) is dropped, the rest of the stream passed on byte for byte, and
   * they are left out of Job lists (GET on a jobs collection), so a relist does not show them either.
   * Reads by name and writes pass. Checked per event: a watch opened earlier is filtered from then on.
   */
  readonly hiddenJobNames = new Set<string>();
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
    this.loseCreateAnswer = undefined;
    this.hiddenJobNames.clear();
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
      else if (match && req.method === 'GET' && match[2]) this.read(req, res, match[1] as string, match[2]);
      else if (req.method === 'GET' && JOB_COLLECTION.test(url.pathname)) {
        const watch = ['true', '1'].includes(url.searchParams.get('watch') ?? '');
        this.forward(req, res, undefined, undefined, watch ? 'watch' : 'list');
      } else this.forward(req, res, undefined);
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
      answerLost: false,
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
    if (this.loseCreateAnswer?.match(record)) {
      if (this.loseCreateAnswer.hide) this.hiddenJobNames.add(record.name);
      this.loseCreateAnswer = undefined;
      record.answerLost = true;
      this.forward(req, res, body, answered, 'lose-answer');
      return;
    }
    this.forward(req, res, body, answered);
  }

  private read(req: IncomingMessage, res: ServerResponse, namespace: string, name: string): void {
    const record: ReadSeen = { namespace, name, receivedMs: this.now() };
    this.reads.push(record);
    this.forward(req, res, undefined, (status) => {
      record.status = status;
      record.answeredMs = this.now();
    });
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

  /**
   * Sends the request upstream (the body given, or streamed from req) and streams the answer back.
   * `watch`: a Job watch, hidden Jobs' events dropped; `list`: a Job list, hidden Jobs' items dropped;
   * `lose-answer`: the answer is read and the client's connection destroyed instead.
   */
  private forward(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, answered?: (status: number) => void, mode?: 'watch' | 'list' | 'lose-answer'): void {
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.includes(k)) headers[k] = v;
    headers.host = this.upstream.host;
    if (body) headers['content-length'] = String(body.length);
    const upstream = request(
      { protocol: 'https:', hostname: this.upstream.hostname, port: this.upstream.port, method: req.method, path: req.url, headers, agent: this.agent },
      (up) => {
        const status = up.statusCode ?? 502;
        if (mode === 'lose-answer') {
          // Stored (or refused) upstream; the client never hears which.
          up.resume();
          up.once('end', () => {
            answered?.(status);
            res.destroy();
          });
          return;
        }
        const out: OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && v !== null && !HOP_BY_HOP.includes(k)) out[k] = v as OutgoingHttpHeaders[string];
        // Only a plain JSON answer can be filtered (the operator asks for JSON, never compressed).
        const filterable = status === 200 && isPlainJson(up.headers);
        if (mode === 'list' && filterable) {
          void readBody(up).then((text) => {
            const kept = this.withoutHiddenItems(text);
            if (kept !== text) out['content-length'] = String(kept.length);
            res.writeHead(status, out);
            res.end(kept);
            answered?.(status);
          }, (err: unknown) => res.destroy(err instanceof Error ? err : new Error(String(err))));
          return;
        }
        res.writeHead(status, out);
        res.flushHeaders();
        if (mode === 'watch' && filterable) up.pipe(this.watchFilter()).pipe(res);
        else up.pipe(res);
        up.once('end', () => answered?.(status));
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

  /**
   * A watch stream (one JSON event per line) without the events of hidden Jobs: every other byte is
   * passed on as it came; a line split across chunks is held until its end arrives.
   */
  private watchFilter(): Transform {
    let pending: Buffer = Buffer.alloc(0);
    return new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        const data = pending.length ? Buffer.concat([pending, chunk]) : chunk;
        const end = data.lastIndexOf(NEWLINE) + 1;
        pending = data.subarray(end);
        done(null, this.withoutHiddenEvents(data.subarray(0, end)));
      },
      flush: (done) => done(null, this.withoutHiddenEvents(pending)),
    });
  }

  /** Complete lines (each with its newline, the last maybe without): those of hidden Jobs dropped. */
  private withoutHiddenEvents(lines: Buffer): Buffer {
    if (this.hiddenJobNames.size === 0 || lines.length === 0) return lines;
    const kept: Buffer[] = [];
    let from = 0;
    while (from < lines.length) {
      const nl = lines.indexOf(NEWLINE, from);
      const to = nl < 0 ? lines.length : nl + 1;
      const line = lines.subarray(from, to);
      from = to;
      const event = this.hiddenEvent(line);
      if (event) this.hidden.push({ ...event, atMs: this.now() });
      else kept.push(line);
    }
    return kept.length === 1 ? (kept[0] as Buffer) : Buffer.concat(kept);
  }

  /** The hidden Job a watch event line is about, or undefined to pass it on. */
  private hiddenEvent(line: Buffer): { name: string; type: string } | undefined {
    const text = line.toString('utf8');
    if (![...this.hiddenJobNames].some((n) => text.includes(n))) return undefined; // cheap: most lines name none
    let event: { type?: string; object?: { metadata?: { name?: string } } };
    try {
      event = JSON.parse(text) as typeof event;
    } catch {
      return undefined;
    }
    const name = event.object?.metadata?.name;
    return name !== undefined && this.hiddenJobNames.has(name) ? { name, type: event.type ?? '?' } : undefined;
  }

  /** A Job list's body without hidden Jobs' items; the same buffer when it has none (or is not a list). */
  private withoutHiddenItems(body: Buffer): Buffer {
    if (this.hiddenJobNames.size === 0) return body;
    let list: { items?: { metadata?: { name?: string } }[] };
    try {
      list = JSON.parse(body.toString('utf8')) as typeof list;
    } catch {
      return body;
    }
    if (!Array.isArray(list.items)) return body;
    const items = list.items.filter((item) => {
      const name = item.metadata?.name;
      if (name === undefined || !this.hiddenJobNames.has(name)) return true;
      this.hidden.push({ name, type: 'LIST', atMs: this.now() });
      return false;
    });
    if (items.length === list.items.length) return body;
    return Buffer.from(JSON.stringify({ ...list, items }));
  }
}

const NEWLINE = 0x0a;

function isPlainJson(headers: IncomingHttpHeaders): boolean {
  const encoding = headers['content-encoding'];
  return (headers['content-type'] ?? '').startsWith('application/json') && (encoding === undefined || encoding === 'identity');
}

function readBody(req: Readable): Promise<Buffer> {
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
