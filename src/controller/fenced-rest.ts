// Fencing for every write the leader makes: checked when the request is sent (not when it was
// queued), and its timeout cut to what is left before the renew deadline, so no write of a deposed
// leader can reach the API server after another replica may have taken over.
import type { RequestOptions, RestClient } from '../kube/rest.js';

export class NotLeaderError extends Error {
  constructor(what: string) {
    super(`not sent: no longer leader (${what})`);
    this.name = 'NotLeaderError';
  }
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class FencedRest implements RestClient {
  constructor(
    private readonly rest: RestClient,
    /** Milliseconds this replica may still act as leader; <= 0 when it may not. */
    private readonly fenceRemainingMs: () => number,
  ) {}

  request<T>(opts: RequestOptions): Promise<T> {
    if (opts.verb === 'get' || opts.verb === 'list' || opts.verb === 'watch') return this.rest.request(opts);
    const left = this.fenceRemainingMs();
    if (!(left > 0)) return Promise.reject(new NotLeaderError(`${opts.verb} ${opts.path}`));
    return this.rest.request({ ...opts, timeoutMs: Math.min(opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, left) });
  }

  watch(...args: Parameters<RestClient['watch']>): Promise<void> {
    return this.rest.watch(...args);
  }
}
