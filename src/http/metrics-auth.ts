// Who may read /metrics when it is served securely, decided by the API server as kubebuilder's
// scaffold does (controller-runtime's filters.WithAuthenticationAndAuthorization): the bearer token is
// checked with a TokenReview, then a SubjectAccessReview asks whether that user may use the request's
// verb on its non-resource path (kube-prometheus grants its Prometheus `get` on /metrics).
//
// Anyone who reaches the port can send tokens, and every review is an API request under our own
// ServiceAccount (the same priority-and-fairness budget as Lease renewals and Job creates), so:
// - decisions are cached with the TTLs of the apiserver delegating authenticator/authorizer that
//   controller-runtime configures: authentication 1 min (accepted or not), allow 5 min, deny 30 s;
// - tokens the API server accepted, tokens it refused and access decisions live in separate LRUs:
//   thousands of junk tokens only push out other junk, never the real Prometheus's entries;
// - one review at a time per token (and verb and path): concurrent requests share it;
// - at most `maxConcurrentReviews` review chains at once; a token never seen accepted may use all but
//   one of them, so a flood of junk leaves a lane for a known scraper whose cache entry expired.
//   Beyond that the answer is 503 with Retry-After, counted in a metric;
// - callers get bare status texts; what went wrong (the API server's error, the user refused) is logged,
//   a failing review once per distinct error and then a reminder every few minutes, not once per request.
import { createHash } from 'node:crypto';

import { LRUCache } from 'lru-cache';

import type { MonotonicClock } from '../clock/clock.js';
import { RepeatedWarnings } from '../kube/repeated-warnings.js';
import type { RestClient } from '../kube/rest.js';
import type { Logger } from '../log.js';

export type AuthDecision = { status: 200 | 401 | 403 | 500 } | { status: 503; retryAfterSeconds: number };

export interface AuthRequest {
  /** The Authorization header, if any. */
  authorization: string | undefined;
  /** The HTTP method, lower case (what the API server's RequestInfo calls the verb of a non-resource request). */
  verb: string;
  /** The URL path without the query. */
  path: string;
}

/** How each request ended, for the metric: allowed, unauthenticated, forbidden, error, throttled. */
export type AuthOutcome = 'allowed' | 'unauthenticated' | 'forbidden' | 'error' | 'throttled';

export interface AuthorizerOptions {
  rest: RestClient;
  mono: MonotonicClock;
  log: Logger;
  maxConcurrentReviews?: number;
  onDecision?: (outcome: AuthOutcome) => void;
}

interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

interface TokenReview {
  status?: { authenticated?: boolean; error?: string; user?: UserInfo };
}

interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/** apiserver's DelegatingAuthenticatorConfig.CacheTTL and DelegatingAuthorizerConfig.{Allow,Deny}CacheTTL as controller-runtime sets them. */
export const AUTHN_TTL_MS = 60_000;
export const ALLOW_TTL_MS = 5 * 60_000;
export const DENY_TTL_MS = 30_000;
export const MAX_CONCURRENT_REVIEWS = 4;
/** Tokens the API server accepted and access decisions: one per scraper and path in practice. */
const KNOWN_MAX = 1_000;
/** Refused tokens: 32-byte keys, a few MiB at most however many junk tokens arrive. */
const REFUSED_MAX = 20_000;
const REVIEW_TIMEOUT_MS = 10_000;

export class MetricsAuthorizer {
  /** Token hash → the user the API server said it is; kept past its TTL to recognise a known scraper. */
  private readonly accepted = new LRUCache<string, { user: UserInfo; atMs: number }>({ max: KNOWN_MAX });
  private readonly refused = new LRUCache<string, number>({ max: REFUSED_MAX });
  /** user + verb + path → allowed or not. */
  private readonly access = new LRUCache<string, { allowed: boolean; atMs: number }>({ max: KNOWN_MAX });
  private readonly inFlight = new Map<string, Promise<AuthDecision>>();
  private reviewing = 0;
  private readonly maxReviews: number;
  private readonly failures: RepeatedWarnings;

  constructor(private readonly opts: AuthorizerOptions) {
    this.maxReviews = Math.max(2, opts.maxConcurrentReviews ?? MAX_CONCURRENT_REVIEWS);
    this.failures = new RepeatedWarnings((message, err) => opts.log.warn(message, { err }), () => opts.mono.nowMs());
  }

  async check(req: AuthRequest): Promise<AuthDecision> {
    const decision = await this.decide(req);
    this.opts.onDecision?.(outcomeOf(decision));
    return decision;
  }

  private decide(req: AuthRequest): Promise<AuthDecision> | AuthDecision {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.authorization ?? '')?.[1];
    if (!token) return { status: 401 };
    const tokenKey = createHash('sha256').update(token).digest('hex');
    const cached = this.cachedDecision(tokenKey, req);
    if (cached) return cached;
    const flightKey = `${tokenKey} ${req.verb} ${req.path}`;
    const shared = this.inFlight.get(flightKey);
    if (shared) return shared;
    const limit = this.accepted.has(tokenKey) ? this.maxReviews : this.maxReviews - 1;
    if (this.reviewing >= limit) return { status: 503, retryAfterSeconds: 1 };
    this.reviewing++;
    const review = this.review(token, tokenKey, req).finally(() => {
      this.reviewing--;
      this.inFlight.delete(flightKey);
    });
    this.inFlight.set(flightKey, review);
    return review;
  }

  /** The answer from the caches alone, or undefined when the API server must be asked. */
  private cachedDecision(tokenKey: string, req: AuthRequest): AuthDecision | undefined {
    const now = this.opts.mono.nowMs();
    const refusedAt = this.refused.get(tokenKey);
    if (refusedAt !== undefined && now - refusedAt < AUTHN_TTL_MS) return { status: 401 };
    const known = this.accepted.get(tokenKey);
    if (!known || now - known.atMs >= AUTHN_TTL_MS) return undefined;
    const access = this.access.get(accessKey(known.user, req));
    if (!access || now - access.atMs >= (access.allowed ? ALLOW_TTL_MS : DENY_TTL_MS)) return undefined;
    return { status: access.allowed ? 200 : 403 };
  }

  private async review(token: string, tokenKey: string, req: AuthRequest): Promise<AuthDecision> {
    try {
      const now = (): number => this.opts.mono.nowMs();
      let known = this.accepted.get(tokenKey);
      if (!known || now() - known.atMs >= AUTHN_TTL_MS) {
        const tr = await this.opts.rest.request<TokenReview>({
          verb: 'create',
          path: '/apis/authentication.k8s.io/v1/tokenreviews',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
          timeoutMs: REVIEW_TIMEOUT_MS,
          purpose: 'auth',
        });
        const user = tr.status?.user;
        if (!tr.status?.authenticated || !user?.username) {
          this.accepted.delete(tokenKey);
          this.refused.set(tokenKey, now());
          this.opts.log.debug('metrics request with a token the API server did not accept', { error: tr.status?.error ?? '' });
          return { status: 401 };
        }
        known = { user, atMs: now() };
        this.accepted.set(tokenKey, known);
      }
      const key = accessKey(known.user, req);
      const access = this.access.get(key);
      if (access && now() - access.atMs < (access.allowed ? ALLOW_TTL_MS : DENY_TTL_MS)) return { status: access.allowed ? 200 : 403 };
      const { user } = known;
      const sar = await this.opts.rest.request<SubjectAccessReview>({
        verb: 'create',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path: req.path, verb: req.verb } },
        },
        timeoutMs: REVIEW_TIMEOUT_MS,
        purpose: 'auth',
      });
      const allowed = sar.status?.allowed === true;
      this.access.set(key, { allowed, atMs: now() });
      if (!allowed) {
        this.opts.log.info('metrics request refused', { user: user.username, verb: req.verb, path: req.path, reason: sar.status?.reason ?? '', evaluationError: sar.status?.evaluationError ?? '' });
      }
      return { status: allowed ? 200 : 403 };
    } catch (err) {
      // Not cached: the next request asks again (one at a time per token, within the cap).
      this.failures.warn('metrics authorization review failed', err instanceof Error ? err : new Error(String(err)));
      return { status: 500 };
    }
  }
}

function accessKey(user: UserInfo, req: AuthRequest): string {
  return JSON.stringify([user.username, user.uid ?? '', [...(user.groups ?? [])].sort(), user.extra ?? {}, req.verb, req.path]);
}

function outcomeOf(decision: AuthDecision): AuthOutcome {
  switch (decision.status) {
    case 200:
      return 'allowed';
    case 401:
      return 'unauthenticated';
    case 403:
      return 'forbidden';
    case 503:
      return 'throttled';
    default:
      return 'error';
  }
}
