// Client-side rate limit (client-go's QPS/burst): a token bucket on the monotonic clock.
// reserve() returns how long the caller must wait; the bucket itself never sleeps.
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

  /** Takes one token, possibly borrowed from the future; returns the wait in ms before using it. */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  /** Takes one token if one is there now; never borrows. */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private refill(): void {
    const now = this.clock.nowMs();
    // max(): a wall clock stepped backwards must not drain the bucket.
    this.tokens = Math.min(this.burst, this.tokens + (Math.max(0, now - this.last) * this.qps) / 1000);
    this.last = now;
  }
}
