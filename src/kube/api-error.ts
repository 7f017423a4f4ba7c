// Errors from the API server, classified the way controllers need them.

export class ApiError extends Error {
  constructor(
    /** HTTP status; 0 for network failures and timeouts. */
    readonly status: number,
    /** metav1.Status reason, e.g. AlreadyExists, Conflict, NotFound, Expired. */
    readonly reason: string,
    message: string,
    /** From a Retry-After header, when the server sent one. */
    readonly retryAfterMs?: number,
    /** The server's own message (metav1.Status.message), without our request prefix. */
    readonly serverMessage?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * No credentials to send (a token file unreadable and no earlier token, an exec plugin that failed).
 * Status 0 like a network failure: retried with backoff, the next attempt may find them.
 */
export class CredentialsUnavailable extends ApiError {
  constructor(message: string) {
    super(0, 'CredentialsUnavailable', message);
    this.name = 'CredentialsUnavailable';
  }
}

export function isStatus(err: unknown, status: number): boolean {
  return err instanceof ApiError && err.status === status;
}

export const isNotFound = (err: unknown): boolean => isStatus(err, 404);
export const isAlreadyExists = (err: unknown): boolean => err instanceof ApiError && err.status === 409 && err.reason === 'AlreadyExists';

/**
 * A ResourceQuota refused the object (403 "exceeded quota"): nothing was stored, and a Job finishing
 * elsewhere in the namespace may make room, so it is retried like throttling (upstream's Job and
 * CronJob controllers requeue on it too).
 */
export function isQuotaExceeded(err: unknown): boolean {
  return err instanceof ApiError && err.status === 403 && /exceeded quota/.test(err.serverMessage ?? err.message);
}

/** Worth retrying: throttling, server errors, network failures and a full ResourceQuota. Not other 4xx. */
export function isRetryable(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  return err.status === 0 || err.status === 429 || err.status >= 500 || isQuotaExceeded(err);
}

/**
 * The answer proves the API server stored nothing: throttled (429, API Priority and Fairness or
 * max-inflight), unavailable before handling the request (503), or refused by a quota. Other 5xx (500 after an etcd timeout,
 * 504) and network failures leave the outcome unknown: the object may exist.
 */
export function provesNothingStored(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 429 || err.status === 503 || isQuotaExceeded(err));
}

/**
 * The request may still be inside the API server: no answer came (a timeout, a reset), or the server's
 * own timeout answered 504 while its handler ran on. A GET that finds nothing at once proves little:
 * after a kube-apiserver freeze, such a create stored its Job after a GET had found none.
 */
export function mayStillBeInServer(err: unknown): boolean {
  return err instanceof ApiError && (err.status === 0 || err.status === 504);
}

/** Retry-After is either delta-seconds or an HTTP date; the API server sends seconds. */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
