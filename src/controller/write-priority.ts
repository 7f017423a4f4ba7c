// Job creates go first. Every slot of an interval schedule falls on a whole second, so creates come
// in bursts; status patches, Events, history deletions, finalizers and dry runs wait while creates are
// queued for a token or a concurrency slot, instead of competing with them for the API server. A create
// on the wire or sleeping before a retry holds nobody back: one schedule's slow or failing creates must
// not delay another schedule's writes (DESIGN §3, I9). The wait is bounded, so under a constant backlog
// the other writes are delayed, never starved.
import type { MonotonicClock, TimerHandle, Timers } from '../clock/clock.js';

export class WritePriority {
  private waitingCreates = 0;
  /** When the current backlog began (monotonic ms). */
  private backlogSinceMs = 0;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly timers: Timers,
    private readonly mono: MonotonicClock,
    private readonly maxDeferMs = 1000,
  ) {}

  /** A Job create is queued, waiting to be sent, until the matching end(). */
  begin(): void {
    if (this.waitingCreates++ === 0) this.backlogSinceMs = this.mono.nowMs();
  }

  end(): void {
    this.waitingCreates = Math.max(0, this.waitingCreates - 1);
    if (this.waitingCreates > 0) return;
    const ready = [...this.waiting];
    this.waiting.clear();
    for (const go of ready) go();
  }

  /** Number of creates waiting to be sent. */
  get pending(): number {
    return this.waitingCreates;
  }

  /**
   * For a writer that must not hold its caller (a reconcile worker): how long to yield before writing,
   * 0 when there is no backlog or it has lasted maxDeferMs already.
   */
  yieldMs(): number {
    if (this.waitingCreates === 0) return 0;
    return Math.max(0, this.backlogSinceMs + this.maxDeferMs - this.mono.nowMs());
  }

  /** Resolves once no create is waiting to be sent, or after maxDeferMs, whichever comes first. */
  calm(): Promise<void> {
    if (this.waitingCreates === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let handle: TimerHandle | undefined;
      const go = (): void => {
        this.waiting.delete(go);
        if (handle !== undefined) this.timers.clear(handle);
        resolve();
      };
      this.waiting.add(go);
      handle = this.timers.set(this.maxDeferMs, go);
    });
  }
}
