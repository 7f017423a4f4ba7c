// client-go's Event spam filter: each object may emit a burst of 25 Events, then one per five
// minutes. Keyed by object and Event type, so a stream of Normal Events never uses up the
// allowance a Warning needs.
import type { WallClock } from '../clock/clock.js';
import { TokenBucket } from '../kube/token-bucket.js';

export const SPAM_BURST = 25;
export const SPAM_REFILL_PER_S = 1 / 300;
const MAX_KEYS = 10_000;

export class EventAllowance {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly clock: WallClock,
    private readonly burst = SPAM_BURST,
    private readonly refillPerS = SPAM_REFILL_PER_S,
  ) {}

  /** Takes one Event from the object's allowance; false = drop it. */
  take(objectUid: string, type: string): boolean {
    const key = `${objectUid}\u0000${type}`;
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      // Bounded memory: forgetting allowances can only let Events through, never block them.
      if (this.buckets.size >= MAX_KEYS) this.buckets.clear();
      bucket = new TokenBucket(this.refillPerS, this.burst, this.clock);
      this.buckets.set(key, bucket);
    }
    return bucket.tryTake();
  }

}
