// A small JSON REST client over one keep-alive connection pool. We do not use client-node's
// generated clients: 2.0.1 builds a new undici Agent (a new TLS connection) for every call and
// deserializes timestamps into Date objects that watch events do not have; here every request shares
// one dispatcher, has a timeout, and is counted for metrics. undici's request(), not its fetch():
// fetch's WHATWG streams and Request/Response objects were a third of the operator's CPU at 100 Jobs/s.
import { request } from 'undici';

import type { Credentials, KubeConnection } from './connection.js';
import { ApiError, parseRetryAfterMs } from './api-error.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export interface RequestOptions {
  verb: Verb;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** merge-patch, strategic-merge-patch or json-patch; only with verb patch. */
  patchType?: 'merge' | 'json' | 'strategic';
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Ask for the answer as PartialObjectMetadata: the server encodes and we parse only metadata. For
   * writes whose answer is not read beyond metadata (the Job create, status patches, Events).
   */
  metadataOnly?: boolean;
}

const METADATA_ONLY_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

export interface RestObserver {
  /** Called once per request with its outcome: an HTTP status, or 'error' for a network failure. */
  onResponse(verb: Verb, code: string): void;
}

const PATCH_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
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

const AUTH_REFRESH_MS = 10_000;

export class KubeRest {
  private auth: (Credentials & { at: number }) | undefined;
  readonly server: string;

  constructor(
    readonly connection: KubeConnection,
    private readonly observer: RestObserver = { onResponse: () => {} },
    private readonly defaultTimeoutMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {
    this.server = connection.server;
  }

  async request<T>(opts: RequestOptions): Promise<T> {
    const { headers, dispatcher } = await this.credentials();
    const requestHeaders: Record<string, string> = { ...headers, accept: opts.metadataOnly ? METADATA_ONLY_ACCEPT : 'application/json' };
    if (opts.body !== undefined) {
      requestHeaders['content-type'] = opts.verb === 'patch' ? PATCH_TYPES[opts.patchType ?? 'merge'] : 'application/json';
    }
    // A timer cleared on completion, not AbortSignal.timeout: that one stays armed (and keeps the
    // request reachable) for the whole timeout after the answer came, and costs 4x more to create.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new DOMException('request timed out', 'TimeoutError')), opts.timeoutMs ?? this.defaultTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout.signal]) : timeout.signal;
    let status: number | undefined;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const response = await request(this.url(opts.path, opts.query), {
        method: METHOD[opts.verb],
        headers: requestHeaders,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal,
        dispatcher,
      });
      status = response.statusCode;
      this.observer.onResponse(opts.verb, String(status));
      retryAfter = headerValue(response.headers['retry-after']);
      text = await response.body.text();
    } catch (err) {
      if (status === undefined) this.observer.onResponse(opts.verb, 'error');
      throw new ApiError(0, 'NetworkError', `${opts.verb} ${opts.path}: ${describeError(err)}`);
    } finally {
      clearTimeout(timer);
    }
    if (status >= 200 && status < 300) return (text ? JSON.parse(text) : {}) as T;
    throw apiErrorFrom(opts.verb, opts.path, status, text, retryAfter);
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
    const { headers, dispatcher } = await this.credentials();
    let response;
    try {
      response = await request(this.url(path, { ...query, watch: true }), { headers: { ...headers, accept: 'application/json' }, signal, dispatcher });
    } catch (err) {
      this.observer.onResponse('watch', 'error');
      if (signal.aborted) throw err;
      throw new ApiError(0, 'NetworkError', `watch ${path}: ${describeError(err)}`);
    }
    this.observer.onResponse('watch', String(response.statusCode));
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

  /** Headers and the dispatcher for the current user; refreshed so rotated tokens are picked up. */
  async credentials(): Promise<Credentials> {
    if (this.auth && this.now() - this.auth.at < AUTH_REFRESH_MS) return this.auth;
    this.auth = { ...(await this.connection.credentials()), at: this.now() };
    return this.auth;
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
