// One operator replica of the property world: the real Controller, JobCreator, WorkQueue and scheduler
// on the world's fake clock, its own caches fed by the fake API server's watch events after a lag the
// test sets, its own leadership (as the elector would drive the controller's hooks) and its own metrics.
import type { FakeClock } from '../../../../src/clock/fake-clock.js';
import type { Job, SecondCronJob } from '../../../../src/api/resources.js';
import { Controller } from '../../../../src/controller/controller.js';
import { JobCreator } from '../../../../src/controller/job-creator.js';
import { WritePriority } from '../../../../src/controller/write-priority.js';
import { TokenBucket } from '../../../../src/kube/token-bucket.js';
import { objectKey } from '../../../../src/kube/types.js';
import { createLogger } from '../../../../src/log.js';
import { Metrics } from '../../../../src/metrics/metrics.js';
import type { FakeApiServer, WatchEvent } from './fake-api-server.js';

// The elector's defaults: a leader's writes end before its renew deadline (10 s); a follower takes
// over an abandoned Lease after the lease duration (15 s), a released one at its next retry (~2 s).
export const RENEW_DEADLINE_MS = 10_000;
export const LEASE_DURATION_MS = 15_000;
export const RETRY_PERIOD_MS = 2_000;

export class Replica {
  readonly metrics = new Metrics(false);
  readonly controller: Controller;
  readonly creator: JobCreator;
  readonly leadership = {
    leader: false,
    /** False once its renew deadline passed (paused, crashed): nothing it sends may land any more. */
    fresh: false,
    isLeader: (): boolean => this.leadership.leader,
    fenceRemainingMs: (): number => (this.leadership.leader && this.leadership.fresh ? RENEW_DEADLINE_MS : 0),
  };
  /** Events this replica recorded ("Reason: message"), for the failure report. */
  readonly events: string[] = [];
  /** Watch lag: events reach this replica's caches this long after they happened. */
  lagMs = 0;
  alive = true;
  private readonly scjs = new Map<string, SecondCronJob>();
  private readonly jobs = new Map<string, Job>();
  private readonly unsubscribe: () => void;
  /** When the last queued event is delivered (events keep their order whatever the lag). */
  private deliverAtMonoMs = 0;
  private pending = 0;

  constructor(
    readonly name: string,
    private readonly clock: FakeClock,
    private readonly server: FakeApiServer,
    random: () => number,
  ) {
    const rest = server.client(name);
    const priority = new WritePriority(clock.timers, clock.mono);
    const common = { wall: clock.wall, mono: clock.mono, timers: clock.timers, random };
    this.creator = new JobCreator({
      ...common,
      rest,
      maxConcurrent: 4,
      bucket: new TokenBucket(50, 100, clock.mono),
      metrics: this.metrics,
      fenceRemainingMs: () => this.leadership.fenceRemainingMs(),
      priority,
    });
    this.controller = new Controller({
      ...common,
      rest,
      scjs: { get: (key) => this.scjs.get(key), list: () => this.scjs.values() },
      creator: this.creator,
      events: { record: (_obj, _type, reason, message) => void this.events.push(`${(clock.mono.nowMs() / 1000).toFixed(1)}s ${name} ${reason}: ${message}`) },
      metrics: this.metrics,
      leadership: this.leadership,
      priority,
      log: createLogger({ level: 'error' }),
    });
    // As the manager starts it: Jobs first, then the SecondCronJobs, from a list; then the watch.
    const handler = this.controller.jobEvents();
    for (const job of server.jobs.values()) {
      this.jobs.set(job.metadata.name, job);
      handler.added(job);
    }
    this.scjs.set(objectKey(server.scj), server.scj);
    this.controller.scjEvents.added(server.scj);
    this.unsubscribe = server.subscribe((ev) => this.enqueue(ev));
    this.controller.scheduler.start();
  }

  /** This replica's Job cache shows the Job. */
  sees(name: string): boolean {
    return this.jobs.has(name);
  }

  /** Events on their way to this replica (delivered in order, lagMs after they happened). */
  get inTransit(): number {
    return this.pending;
  }

  private enqueue(ev: WatchEvent): void {
    const now = this.clock.mono.nowMs();
    this.deliverAtMonoMs = Math.max(this.deliverAtMonoMs, now + this.lagMs);
    this.pending++;
    const deliver = (): void => {
      this.pending--;
      if (this.alive) this.apply(ev);
    };
    if (this.deliverAtMonoMs <= now) deliver();
    else this.clock.timers.set(this.deliverAtMonoMs - now, deliver);
  }

  private apply(ev: WatchEvent): void {
    if (ev.kind === 'scj') {
      const key = objectKey(ev.obj);
      const old = this.scjs.get(key);
      this.scjs.set(key, ev.obj);
      if (old) this.controller.scjEvents.updated(old, ev.obj);
      else this.controller.scjEvents.added(ev.obj);
      return;
    }
    const handler = this.controller.jobEvents();
    const name = ev.obj.metadata.name;
    const old = this.jobs.get(name);
    if (ev.type === 'DELETED') {
      if (!old) return;
      this.jobs.delete(name);
      handler.deleted(ev.obj);
    } else if (old) {
      this.jobs.set(name, ev.obj);
      handler.updated(old, ev.obj);
    } else {
      this.jobs.set(name, ev.obj);
      handler.added(ev.obj);
    }
  }

  /** The Job watch expired: the cache is replaced by a fresh list (events still in transit are older). */
  relist(): void {
    const startedMonoMs = this.clock.mono.nowMs();
    const handler = this.controller.jobEvents();
    for (const [name, job] of [...this.jobs]) {
      if (this.server.jobs.has(name)) continue;
      this.jobs.delete(name);
      handler.deleted(job);
    }
    for (const [name, job] of this.server.jobs) {
      const old = this.jobs.get(name);
      this.jobs.set(name, job);
      if (!old) handler.added(job);
      else if (old.metadata.resourceVersion !== job.metadata.resourceVersion) handler.updated(old, job);
    }
    handler.relisted?.(startedMonoMs);
  }

  lead(): void {
    this.leadership.leader = true;
    this.leadership.fresh = true;
    this.controller.startedLeading();
  }

  /** Renew deadline passed (a paused or cut-off leader): it stops writing at once, then learns it lost. */
  fence(): void {
    this.leadership.fresh = false;
  }

  /** The elector's onStoppedLeading. */
  stopLeading(): void {
    this.leadership.leader = false;
    this.leadership.fresh = false;
    this.controller.stoppedLeading();
  }

  /** SIGKILL: nothing more runs; requests already sent still reach the API server. */
  kill(): void {
    this.alive = false;
    this.leadership.leader = false;
    this.leadership.fresh = false;
    this.unsubscribe();
    this.controller.scheduler.stop();
    void this.controller.shutDown();
  }

  /** SIGTERM, as main.ts stops: scheduler, reconciles, creator drain, statuses; true if done in time. */
  async terminate(advance: (until: () => boolean, maxMs: number) => Promise<void>, shutdownTimeoutMs: number): Promise<boolean> {
    let done = false;
    const stop = (async () => {
      this.controller.scheduler.stop();
      await this.controller.shutDown();
      await this.creator.drain();
      await this.controller.writeStatuses();
      done = true;
    })();
    await advance(() => done, shutdownTimeoutMs);
    void stop;
    return done;
  }

  /** Slots counted as missed by this replica, over all reasons. */
  async missedTotal(): Promise<number> {
    let n = 0;
    for (const v of (await this.metrics.triggersMissed.get()).values) n += v.value;
    return n;
  }
}
