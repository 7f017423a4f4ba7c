// A small manager of runnables, after controller-runtime's pkg/manager: caches stage by stage (each
// stage synced before the next starts), then the always-on runnables, then the leader-only group —
// started by a won election, or at once when there is no election (the same path). One ordered
// shutdown in reverse: runnables (bounded), leader-only group, Lease release, caches.
import type { Logger } from './log.js';

export interface Runnable {
  readonly name: string;
  start(): void;
  stop(): void | Promise<void>;
}

export interface CacheRunnable extends Runnable {
  readonly hasSynced: boolean;
}

/** The leader election as the manager drives it; its hooks are `Manager.leaderHooks`. */
export interface Election {
  start(): void;
  /** Stops leading (the hooks run first) and hands the Lease back. Never throws. */
  release(): Promise<void>;
  /** Stops leading and keeps the Lease until it expires (a write of ours may still be on the wire). */
  stop(): void;
}

export interface ManagerOptions {
  log: Logger;
  /** How often cache sync is polled. */
  syncPollMs?: number;
  /**
   * Bound on stopping the runnables (draining creates, writing statuses). Past it the Lease is not
   * handed back but left to expire: a create still on the wire could otherwise land after a follower
   * took over at its next retry.
   */
  stopTimeoutMs: number;
}

export class Manager {
  private readonly cacheStages: CacheRunnable[][] = [];
  private readonly runnables: Runnable[] = [];
  private readonly leaderOnly: Runnable[] = [];
  private election: Election | undefined;
  private leading = false;
  private stopping: Promise<void> | undefined;

  constructor(private readonly opts: ManagerOptions) {}

  /** One stage of caches: started together, synced before the next stage starts. */
  addCacheStage(caches: CacheRunnable[]): void {
    this.cacheStages.push(caches);
  }

  /** Runs on every replica once the caches are synced; stopped in reverse order. */
  add(r: Runnable): void {
    this.runnables.push(r);
  }

  /** Runs only while this replica leads. */
  addLeaderOnly(r: Runnable): void {
    this.leaderOnly.push(r);
  }

  get cachesSynced(): boolean {
    return this.cacheStages.every((stage) => stage.every((c) => c.hasSynced));
  }

  /** For the elector's hooks. */
  readonly leaderHooks = {
    onStartedLeading: (): void => this.startLeading(),
    onStoppedLeading: (): void => void this.stopLeading(),
  };

  /** Starts the caches stage by stage; resolves once all are synced (or stop() was called). */
  async syncCaches(): Promise<void> {
    for (const stage of this.cacheStages) {
      for (const c of stage) c.start();
      await this.synced(stage);
    }
  }

  /** After syncCaches: the runnables, then the election (or, without one, leading at once). */
  startRunnables(election: Election | undefined): void {
    if (this.stopping) return;
    for (const r of this.runnables) r.start();
    this.election = election;
    if (election) election.start();
    else this.startLeading();
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    const all = async (rs: Runnable[]): Promise<void> => {
      for (const r of [...rs].reverse()) {
        try {
          await r.stop();
        } catch (err) {
          this.opts.log.warn('stop failed', { runnable: r.name, err: err instanceof Error ? err : String(err) });
        }
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.opts.stopTimeoutMs)));
    const stopped = await Promise.race([all(this.runnables).then(() => true), timeout]);
    clearTimeout(timer);
    if (this.election && stopped) {
      await this.election.release();
    } else if (this.election) {
      this.opts.log.warn('runnables did not stop within the shutdown timeout; the Lease is left to expire instead of released', { timeoutMs: this.opts.stopTimeoutMs });
      this.election.stop();
      await this.stopLeading();
    } else {
      await this.stopLeading();
    }
    await all(this.cacheStages.flat());
  }

  private startLeading(): void {
    if (this.leading || this.stopping) return;
    this.leading = true;
    for (const r of this.leaderOnly) r.start();
  }

  private async stopLeading(): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    for (const r of [...this.leaderOnly].reverse()) await r.stop();
  }

  private async synced(stage: CacheRunnable[]): Promise<void> {
    while (!this.stopping && !stage.every((c) => c.hasSynced)) {
      await new Promise((resolve) => setTimeout(resolve, this.opts.syncPollMs ?? 50));
    }
  }
}
