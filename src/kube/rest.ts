// A small JSON REST client over one keep-alive connection pool. We do not use client-node's
// generated clients: 2.0.1 builds a new undici Agent (a new TLS connection) for every call and
// deserializes timestamps into Date objects that watch events do not have; here every request shares
// one dispatcher, has a timeout, and is counted for metrics. undici's request(), not its fetch():
// fetch's WHATWG streams and Request/Response objects were a third of the operator's CPU at 100 Jobs/s.
import { type Dispatcher, request } from 'undici';

import type { Credentials, KubeConnection } from './connection.js';
import { ApiError, parseRetryAfterMs } from './api-error.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export interface RequestOptions {
  verb: Verb;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** merge-patch, strategic-merge-patch, json-patch or server-side apply; only with verb patch. */
  patchType?: 'merge' | 'json' | 'strategic' | 'apply';
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Ask for the answer as PartialObjectMetadata: the server encodes and we parse only metadata. For
   * writes whose answer is not read beyond metadata (the Job create, status patches, Events).
   */
  metadataOnly?: boolean;
  /**
   * The answer of a successful write is not read at all (discarded unparsed; the request resolves to
   * an empty object): history deletions, status patches, Events. Implies metadataOnly.
   */
  discardResponse?: boolean;
  /**
   * What the request is for, as a short fixed word (job_create, status, lease, …): the `purpose`
   * label of the request metric, so requests can be accounted for. Defaults to the verb.
   */
  purpose?: string;
}

const METADATA_ONLY_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export interface RestObserver {
  /** Called once per request with its outcome: an HTTP status, or 'error' for a network failure. */
  onResponse(verb: Verb, code: string, purpose: string): void;
}

const PATCH_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml', // JSON is YAML
} as const;

const METHOD: Record<Verb, string> = {
  get: 'GET',
  list: 'GET',
  watch: 'GET',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
};

export interface KubeRestOptions {
  observer?: RestObserver;
  defaultTimeoutMs?: number;
  /** Sent on every request, so audit logs name us: `secondcron/<version> (<identity>)`. */
  userAgent?: string;
}

/** What adapters need of the REST client (a fake implements it in unit tests). */
export type RestClient = Pick<KubeRest, 'request' | 'watch'>;

export class KubeRest {
  readonly server: string;
  private readonly observer: RestObserver;
  private readonly defaultTimeoutMs: number;
  private readonly userAgent: Record<string, string>;

  constructor(
    readonly connection: KubeConnection,
    opts: KubeRestOptions = {},
  ) {
    this.server = connection.server;
    this.observer = opts.observer ?? { onResponse: () => {} };
    this.defaultTimeoutMs = opts.defaultTimeoutMs ?? 30_000;
    this.userAgent = opts.userAgent ? { 'user-agent': opts.userAgent } : {};
  }

  async request<T>(opts: RequestOptions): Promise<T> {
    // A timer cleared on completion, not AbortSignal.timeout: that one stays armed (and keeps the
    // request reachable) for the whole timeout after the answer came, and costs 4x more to create.
    // It covers getting credentials too: a hung exec plugin fails the request in time.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException('request timed out', 'TimeoutError')), opts.timeoutMs ?? this.defaultTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout.signal]) : timeout.signal;
    try {
      let credentials = await this.credentials(opts.verb, opts.path, signal);
      let answer = await this.send(opts, credentials, signal);
      // client-go re-reads a token file when the server says 401; we also retry once, so a token
      // rotated (and the old one revoked) between two reads costs no request.
      if (answer.status === 401 && credentials.invalidate) {
        credentials.invalidate();
        credentials = await this.credentials(opts.verb, opts.path, signal);
        answer = await this.send(opts, credentials, signal);
      }
      const { status, text, retryAfter } = answer;
      if (status >= 200 && status < 300) return (text ? JSON.parse(text) : {}) as T;
      throw apiErrorFrom(opts.verb, opts.path, status, text, retryAfter);
    } finally {
      clearTimeout(timer);
    }
  }

  private async send(opts: RequestOptions, credentials: Credentials, signal: AbortSignal): Promise<{ status: number; text: string; retryAfter: string | undefined }> {
    const metadataOnly = opts.metadataOnly === true || opts.discardResponse === true;
    const headers: Record<string, string | string[]> = { ...this.userAgent, ...credentials.headers, accept: metadataOnly ? METADATA_ONLY_ACCEPT : 'application/json' };
    if (opts.body !== undefined) {
      headers['content-type'] = opts.verb === 'patch' ? PATCH_TYPES[opts.patchType ?? 'merge'] : 'application/json';
    }
    const purpose = opts.purpose ?? opts.verb;
    let status: number | undefined;
    try {
      const response = await request(this.url(opts.path, opts.query), {
        method: METHOD[opts.verb],
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal,
        dispatcher: credentials.dispatcher,
      });
      status = response.statusCode;
      this.observer.onResponse(opts.verb, String(status), purpose);
      const retryAfter = headerValue(response.headers['retry-after']);
      if (opts.discardResponse && status >= 200 && status < 300) {
        await response.body.dump();
        return { status, text: '', retryAfter };
      }
      return { status, text: await response.body.text(), retryAfter };
    } catch (err) {
      if (status === undefined) this.observer.onResponse(opts.verb, 'error', purpose);
      throw new ApiError(0, 'NetworkError', `${opts.verb} ${opts.path}: ${describeError(err)}`);
    }
  }

  /** Credentials within the request's deadline; failures are retryable ApiErrors. */
  private async credentials(verb: Verb, path: string, signal: AbortSignal): Promise<Credentials> {
    try {
      return await this.connection.credentials(signal);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(0, 'CredentialsUnavailable', `${verb} ${path}: credentials: ${describeError(err)}`);
    }
  }

  /**
   * One watch request: calls onEvent for every event line until the server ends the stream (resolves)
   * or the signal aborts it (rejects). A non-200 answer rejects with an ApiError.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (type: string, object: unknown) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const open = async (credentials: Credentials): Promise<Dispatcher.ResponseData> => {
      try {
        const response = await request(this.url(path, { ...query, watch: true }), {
          headers: { ...this.userAgent, ...credentials.headers, accept: 'application/json' },
          signal,
          dispatcher: credentials.dispatcher,
        });
        this.observer.onResponse('watch', String(response.statusCode), 'watch');
        return response;
      } catch (err) {
        this.observer.onResponse('watch', 'error', 'watch');
        if (signal.aborted) throw err;
        throw new ApiError(0, 'NetworkError', `watch ${path}: ${describeError(err)}`);
      }
    };
    // A watch has no deadline of its own, its credential step has the request timeout.
    const credentialSignal = (): AbortSignal => AbortSignal.any([signal, AbortSignal.timeout(this.defaultTimeoutMs)]);
    const credentials = await this.credentials('watch', path, credentialSignal());
    let response = await open(credentials);
    if (response.statusCode === 401 && credentials.invalidate) {
      await response.body.dump();
      credentials.invalidate();
      response = await open(await this.credentials('watch', path, credentialSignal()));
    }
    if (response.statusCode !== 200) {
      throw apiErrorFrom('watch', path, response.statusCode, await response.body.text(), headerValue(response.headers['retry-after']));
    }
    // One JSON object per line; a chunk may end anywhere, even inside a multi-byte character.
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      const lines = (pending + decoder.decode(chunk, { stream: true })).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        const event = JSON.parse(line) as { type: string; object: unknown };
        onEvent(event.type, event.object);
      }
    }
  }

  private url(path: string, query: Record<string, string | number | boolean | undefined> = {}): URL {
    const url = new URL(this.server + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function apiErrorFrom(verb: Verb, path: string, httpStatus: number, text: string, retryAfter: string | undefined): ApiError {
  let status: { reason?: string; message?: string } = {};
  try {
    status = JSON.parse(text) as typeof status;
  } catch {
    status = { message: text.slice(0, 300) };
  }
  return new ApiError(
    httpStatus,
    status.reason ?? 'Unknown',
    `${verb} ${path}: ${httpStatus} ${status.message ?? ''}`.trim(),
    parseRetryAfterMs(retryAfter ?? null),
    status.message,
  );
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}
