// The Controller on a FakeClock and a FakeRest: caches fed by hand, every request recorded.
import { FakeClock } from '../../../src/clock/fake-clock.js';
import type { Job, SecondCronJob } from '../../../src/api/resources.js';
import { Controller } from '../../../src/controller/controller.js';
import type { EventSink } from '../../../src/controller/events.js';
import { JobCreator } from '../../../src/controller/job-creator.js';
import { WritePriority } from '../../../src/controller/write-priority.js';
import { TokenBucket } from '../../../src/kube/token-bucket.js';
import { objectKey } from '../../../src/kube/types.js';
import { createLogger } from '../../../src/log.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { FakeRest, flush } from '../fakes/fake-rest.js';

export const SCJ_PATH = '/apis/secondcron.io/v1/namespaces/ns/secondcronjobs/hb';
export const JOBS_PATH = '/apis/batch/v1/namespaces/ns/jobs';

export class ControllerHarness {
  // Half a second after the fixtures' creationTimestamp (2026-12-02T10:00:00Z).
  readonly clock = new FakeClock({ wallStartMs: Date.parse('2026-12-02T10:00:00.500Z') });
  readonly rest = new FakeRest();
  readonly scjs = new Map<string, SecondCronJob>();
  readonly events: string[] = [];
  readonly metrics = new Metrics(false);
  readonly leadership = {
    leader: true,
    fresh: true,
    /** What is left of the renew deadline while fresh. */
    remainingMs: Number.POSITIVE_INFINITY,
    isLeader: () => this.leadership.leader,
    fenceRemainingMs: () => (this.leadership.fresh ? this.leadership.remainingMs : 0),
  };
  readonly controller: Controller;
  private uid = 0;

  constructor(opts: { qps?: number; burst?: number } = {}) {
    this.rest
      .on('patch', /^\/apis\/secondcron\.io\/v1\/namespaces\/ns\/secondcronjobs\/[^/]+(\/status)?$/, () => ({ metadata: {} }))
      .on('patch', SCJ_PATH, (req) => ({ metadata: { name: 'hb', body: req.body } }))
      .on('patch', `${SCJ_PATH}/status`, () => ({ metadata: { name: 'hb' } }))
      .on('list', JOBS_PATH, () => ({ metadata: { resourceVersion: '1' }, items: [] }))
      .on('delete', /^\/apis\/batch\/v1\/namespaces\/ns\/jobs\//, () => ({}))
      .on('create', JOBS_PATH, (req) => {
        const body = req.body as Job;
        return { metadata: { ...body.metadata, uid: `job-uid-${++this.uid}`, resourceVersion: String(this.uid), creationTimestamp: new Date(this.clock.wall.nowMs()).toISOString() } };
      });
    const priority = new WritePriority(this.clock.timers, this.clock.mono);
    const sink: EventSink = { record: (_obj, _type, reason) => void this.events.push(reason) };
    const common = { wall: this.clock.wall, mono: this.clock.mono, timers: this.clock.timers, random: () => 0.5 };
    this.controller = new Controller({
      ...common,
      rest: this.rest,
      scjs: { get: (key) => this.scjs.get(key), list: () => this.scjs.values() },
      creator: new JobCreator({
        ...common,
        rest: this.rest,
        maxConcurrent: 4,
        bucket: new TokenBucket(opts.qps ?? 100, opts.burst ?? 100, this.clock.mono),
        metrics: this.metrics,
        fenceRemainingMs: () => this.leadership.fenceRemainingMs(),
        priority,
      }),
      events: sink,
      metrics: this.metrics,
      leadership: this.leadership,
      priority,
      log: createLogger({ level: 'error' }),
    });
    this.controller.scheduler.start();
  }

  /** The SecondCronJob as the watch would deliver it (added or updated). */
  async apply(scj: SecondCronJob): Promise<void> {
    const key = objectKey(scj);
    const old = this.scjs.get(key);
    this.scjs.set(key, scj);
    if (old) this.controller.scjEvents.updated(old, scj);
    else this.controller.scjEvents.added(scj);
    await flush();
  }

  async jobSeen(job: Job): Promise<void> {
    this.controller.jobEvents().added(job);
    await flush();
  }

  /** Moves time in 100 ms steps, letting promises settle between them. */
  async advance(ms: number): Promise<void> {
    for (let t = 0; t < ms; t += 100) {
      this.clock.advance(Math.min(100, ms - t));
      await flush();
    }
  }

  creates(): string[] {
    return this.rest.sent('create', JOBS_PATH).filter((r) => r.query?.dryRun === undefined).map((r) => (r.body as Job).metadata.name);
  }

  statusPatches(): number {
    return this.rest.sent('patch', `${SCJ_PATH}/status`).length;
  }

  async missed(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const v of (await this.metrics.triggersMissed.get()).values) out[String(v.labels.reason)] = v.value;
    return out;
  }
}

/** The unix second of a slot at 2026-12-02T10:00:SS (Job names end with it). */
export function sec(s: number): number {
  return Date.parse('2026-12-02T10:00:00Z') / 1000 + s;
}
