// Job creates go first. Every slot of an interval schedule falls on a whole second, so creates come
// in bursts; status patches, Events, history deletions, finalizers and dry runs wait until the burst
// has been acknowledged instead of competing with it for the API server. The wait is bounded, so
// under constant create load the other writes are delayed, never starved.
import type { TimerHandle, Timers } from '../clock/clock.js';

export class WritePriority {
  private urgent = 0;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly timers: Timers,
    private readonly maxDeferMs = 1000,
  ) {}

  /** A Job create is queued or in flight until the matching end(). */
  begin(): void {
    this.urgent++;
  }

  end(): void {
    this.urgent = Math.max(0, this.urgent - 1);
    if (this.urgent > 0) return;
    const ready = [...this.waiting];
    this.waiting.clear();
    for (const go of ready) go();
  }

  /** Number of creates queued or in flight. */
  get pending(): number {
    return this.urgent;
  }

  /** Resolves once no create is pending, or after maxDeferMs, whichever comes first. */
  calm(): Promise<void> {
    if (this.urgent === 0) return Promise.resolve();
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
