/**
 * Timing options of the elector, their client-go defaults and the checks client-go makes,
 * so a bad flag fails at start-up with the option's name instead of flapping leadership.
 */

/**
 * client-go's JitterFactor: a candidate's tries START retryPeriod × (1 + random·1.2) apart, or one
 * right after the other when a try took longer than that (see LeaderElector.scheduleNextAttempt).
 */
export const JITTER_FACTOR = 1.2;

export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

export interface ElectionTimingOptions {
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Per store call; default just below renewDeadline/2 (see defaultCallTimeoutMs). */
  timeoutMs?: number;
  /** Extra grace before healthy() fails a leader that stopped renewing; default 0. */
  healthToleranceMs?: number;
}

export interface ElectionTiming {
  leaseDurationMs: number;
  leaseDurationSeconds: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  timeoutMs: number;
  healthToleranceMs: number;
}

/**
 * controller-runtime gives Lease requests max(renewDeadline/2, 1 s) so that one hung request
 * cannot eat the whole renew deadline. We stay strictly below renewDeadline/2 (a small margin
 * for scheduling) so that a renew round always has time for a second attempt after a hang;
 * the 1 s floor applies only where it does not break that rule.
 */
export function defaultCallTimeoutMs(renewDeadlineMs: number): number {
  const half = renewDeadlineMs / 2;
  const margin = Math.min(100, half / 10);
  const belowHalf = half - margin;
  return belowHalf >= 1000 ? belowHalf : Math.min(1000, belowHalf);
}

function requirePositive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`leader election: ${name} must be a positive number of milliseconds, got ${value}`);
  }
}

export function resolveElectionTiming(options: ElectionTimingOptions): ElectionTiming {
  const leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
  const renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
  const retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
  requirePositive('leaseDurationMs', leaseDurationMs);
  requirePositive('renewDeadlineMs', renewDeadlineMs);
  requirePositive('retryPeriodMs', retryPeriodMs);
  // The Lease stores whole seconds; rounding silently would make followers wait a different
  // time than the leader believes it has.
  if (leaseDurationMs % 1000 !== 0) {
    throw new Error(
      `leader election: leaseDurationMs must be a whole number of seconds (the Lease stores seconds), got ${leaseDurationMs}`,
    );
  }
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new Error(
      `leader election: leaseDurationMs (${leaseDurationMs}) must be greater than renewDeadlineMs (${renewDeadlineMs})`,
    );
  }
  if (renewDeadlineMs <= JITTER_FACTOR * retryPeriodMs) {
    throw new Error(
      `leader election: renewDeadlineMs (${renewDeadlineMs}) must be greater than ${JITTER_FACTOR} × retryPeriodMs (${retryPeriodMs})`,
    );
  }
  const timeoutMs = options.timeoutMs ?? defaultCallTimeoutMs(renewDeadlineMs);
  requirePositive('timeoutMs', timeoutMs);
  if (timeoutMs >= renewDeadlineMs / 2) {
    throw new Error(
      `leader election: timeoutMs (${timeoutMs}) must be less than renewDeadlineMs/2 (${renewDeadlineMs / 2}) so a renew can be retried before the deadline`,
    );
  }
  const healthToleranceMs = options.healthToleranceMs ?? 0;
  if (!Number.isFinite(healthToleranceMs) || healthToleranceMs < 0) {
    throw new Error(`leader election: healthToleranceMs must be a non-negative number, got ${healthToleranceMs}`);
  }
  return {
    leaseDurationMs,
    leaseDurationSeconds: leaseDurationMs / 1000,
    renewDeadlineMs,
    retryPeriodMs,
    timeoutMs,
    healthToleranceMs,
  };
}
