// A small JSON REST client over the kubeconfig's credentials. We bypass client-node's generated
// clients on the hot path because 2.0.1 builds a new undici Agent (a new TLS connection) for every
// call and deserializes timestamps into Date objects that watch events do not have; here every
// request shares one keep-alive dispatcher, has a timeout, and is counted for metrics.
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { fetch } from 'undici';

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
}

export interface RestObserver {
  /** Called once per request with its outcome: an HTTP status, or 'error' for a network failure. */
  onResponse(verb: Verb, code: string): void;
}

const PATCH_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
} as const;

const METHOD: Record<Verb, HttpMethod> = {
  get: HttpMethod.GET,
  list: HttpMethod.GET,
  watch: HttpMethod.GET,
  create: HttpMethod.POST,
  update: HttpMethod.PUT,
  patch: HttpMethod.PATCH,
  delete: HttpMethod.DELETE,
};

const AUTH_REFRESH_MS = 10_000;

export class KubeRest {
  private auth: { headers: Record<string, string>; dispatcher: Dispatcher | undefined; at: number } | undefined;
  private readonly server: string;

  constructor(
    readonly kubeConfig: KubeConfig,
    private readonly observer: RestObserver = { onResponse: () => {} },
    private readonly defaultTimeoutMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
  }

  async request<T>(opts: RequestOptions): Promise<T> {
    const url = new URL(this.server + opts.path);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const { headers, dispatcher } = await this.credentials();
    const requestHeaders: Record<string, string> = { ...headers, accept: 'application/json' };
    if (opts.body !== undefined) {
      requestHeaders['content-type'] = opts.verb === 'patch' ? PATCH_TYPES[opts.patchType ?? 'merge'] : 'application/json';
    }
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.defaultTimeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let response;
    try {
      response = await fetch(url, {
        method: METHOD[opts.verb],
        headers: requestHeaders,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal,
        ...(dispatcher ? { dispatcher } : {}),
      });
    } catch (err) {
      this.observer.onResponse(opts.verb, 'error');
      throw new ApiError(0, 'NetworkError', `${opts.verb} ${opts.path}: ${describeFetchError(err)}`);
    }
    this.observer.onResponse(opts.verb, String(response.status));
    const text = await response.text();
    if (response.status >= 200 && response.status < 300) return (text ? JSON.parse(text) : {}) as T;
    let status: { reason?: string; message?: string } = {};
    try {
      status = JSON.parse(text) as typeof status;
    } catch {
      status = { message: text.slice(0, 300) };
    }
    throw new ApiError(
      response.status,
      status.reason ?? 'Unknown',
      `${opts.verb} ${opts.path}: ${response.status} ${status.message ?? ''}`.trim(),
      parseRetryAfterMs(response.headers.get('retry-after')),
      status.message,
    );
  }

  /** Headers and the TLS dispatcher for the current user; refreshed so rotated tokens are picked up. */
  async credentials(): Promise<{ headers: Record<string, string>; dispatcher: Dispatcher | undefined }> {
    if (this.auth && this.now() - this.auth.at < AUTH_REFRESH_MS) return this.auth;
    const ctx = new RequestContext(this.server, HttpMethod.GET);
    await this.kubeConfig.applySecurityAuthentication(ctx);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(ctx.getHeaders())) headers[k] = String(v);
    // Keep the first dispatcher: one pool of keep-alive connections for the life of the process.
    const dispatcher = this.auth?.dispatcher ?? (ctx.getDispatcher() as Dispatcher | undefined);
    this.auth = { headers, dispatcher, at: this.now() };
    return this.auth;
  }
}

function describeFetchError(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}
