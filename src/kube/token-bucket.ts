// Client-side rate limit (client-go's QPS/burst): a token bucket on the monotonic clock.
// tryTake() never borrows from the future, so a caller can decide after waiting whether it still
// needs a token at all; msUntilToken() says how long to wait. The bucket itself never sleeps.
import type { MonotonicClock } from '../clock/clock.js';

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: MonotonicClock,
  ) {
    this.tokens = burst;
    this.last = clock.nowMs();
  }

  /** Takes one token if one is there now; never borrows. */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** How long until tryTake() can succeed (0 if it can now). */
  msUntilToken(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : ((1 - this.tokens) * 1000) / this.qps;
  }

  private refill(): void {
    const now = this.clock.nowMs();
    // max(): a wall clock stepped backwards must not drain the bucket.
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.last) * this.qps) / 1000);
    this.last = now;
  }
}
