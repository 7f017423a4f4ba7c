// Who may read /metrics when it is served securely, decided by the API server as kubebuilder's
// scaffold does (controller-runtime's WithAuthenticationAndAuthorization filter): the bearer token is
// checked with a TokenReview, then a SubjectAccessReview asks whether that user may `get` the
// non-resource URL /metrics (ClusterRole `<release>-metrics-reader`). Decisions are cached for a few
// seconds, so a scrape every few seconds costs two API calls per cache period, not per scrape.
import { createHash } from 'node:crypto';

import type { MonotonicClock } from '../clock/clock.js';
import type { KubeRest } from '../kube/rest.js';

export type AuthDecision = { status: 200 } | { status: 401 | 403 | 500; message: string };

interface TokenReview {
  status?: { authenticated?: boolean; error?: string; user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> } };
}

interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string };
}

const CACHE_MS = 10_000;
const CACHE_MAX = 1_000;

export class MetricsAuthorizer {
  private readonly cache = new Map<string, { decision: AuthDecision; atMs: number }>();

  constructor(
    private readonly rest: KubeRest,
    private readonly mono: MonotonicClock,
    private readonly path = '/metrics',
  ) {}

  async check(authorization: string | undefined): Promise<AuthDecision> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    if (!token) return { status: 401, message: 'Unauthorized: a bearer token is required' };
    const key = createHash('sha256').update(token).digest('hex');
    const hit = this.cache.get(key);
    if (hit && this.mono.nowMs() - hit.atMs < CACHE_MS) return hit.decision;
    const decision = await this.review(token);
    // An API server that could not answer is not cached: the next scrape asks again.
    if (decision.status !== 500) {
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(key, { decision, atMs: this.mono.nowMs() });
    }
    return decision;
  }

  private async review(token: string): Promise<AuthDecision> {
    try {
      const tr = await this.rest.request<TokenReview>({
        verb: 'create',
        path: '/apis/authentication.k8s.io/v1/tokenreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        timeoutMs: 10_000,
        purpose: 'auth',
      });
      const user = tr.status?.user;
      if (!tr.status?.authenticated || !user?.username) {
        return { status: 401, message: `Unauthorized: ${tr.status?.error || 'the token was not accepted'}` };
      }
      const sar = await this.rest.request<SubjectAccessReview>({
        verb: 'create',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.username,
            uid: user.uid,
            groups: user.groups,
            extra: user.extra,
            nonResourceAttributes: { path: this.path, verb: 'get' },
          },
        },
        timeoutMs: 10_000,
        purpose: 'auth',
      });
      if (sar.status?.allowed) return { status: 200 };
      return { status: 403, message: `Forbidden: user "${user.username}" may not get ${this.path}${sar.status?.reason ? ` (${sar.status.reason})` : ''}` };
    } catch (err) {
      return { status: 500, message: `authorization check failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
}
