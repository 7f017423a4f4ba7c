// Exponential backoff with full jitter; randomness is injected so tests are deterministic.

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor?: number;
}

/** Delay before retry number `attempt` (0-based): a uniform draw in [base/2, base]. */
export function backoffDelayMs(policy: BackoffPolicy, attempt: number, random: () => number): number {
  const base = Math.min(policy.maxMs, policy.initialMs * (policy.factor ?? 2) ** attempt);
  return base / 2 + random() * (base / 2);
}

/**
 * A server's Retry-After wins over our own guess, but never below it, and never beyond the policy's
 * longest wait: a proxy answering `Retry-After: 3600` must not freeze a cache for an hour (client-go's
 * reflector and rate limiters never wait longer than their own maximum either).
 */
export function retryDelayMs(policy: BackoffPolicy, attempt: number, random: () => number, retryAfterMs?: number): number {
  const own = backoffDelayMs(policy, attempt, random);
  return retryAfterMs === undefined ? own : Math.max(own, Math.min(retryAfterMs, policy.maxMs));
}
