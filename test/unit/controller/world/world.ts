// The property world: one SecondCronJob, a fake API server that judges every create, and two
// replicas of the real controller that take turns leading through crashes, pauses and graceful
// handovers. `run(step)` plays one step; `settle()` lets the world calm down and checks liveness
// (I10) and the accounting of every slot (I1); the server's own checks (I2, I3, I4, I11) run on
// every request, and the world's own (I6: nothing created while suspended) after every step.
import { FakeClock } from '../../../../src/clock/fake-clock.js';
import type { SecondCronJob } from '../../../../src/api/resources.js';
import { jobSlotMs } from '../../../../src/controller/job-state.js';
import { mulberry32 } from '../../../support/prng.js';
import { type CreateFault, FakeApiServer } from './fake-api-server.js';
import { LEASE_DURATION_MS, RETRY_PERIOD_MS, Replica } from './replica.js';

export type Policy = 'Allow' | 'Forbid' | 'Replace' | 'Enqueue';

export type Step =
  | { kind: 'advance'; ms: number }
  | { kind: 'fault'; fault: CreateFault }
  | { kind: 'finish'; ok: boolean }
  | { kind: 'deleteByHand'; pick: number }
  | { kind: 'lag'; replica: 0 | 1; ms: number }
  | { kind: 'relist'; replica: 0 | 1 }
  | { kind: 'crash' }
  | { kind: 'pause' }
  | { kind: 'handover' }
  | { kind: 'suspend'; on: boolean }
  | { kind: 'suspendResumeFolded' }
  | { kind: 'editSchedule'; intervalSeconds: number }
  | { kind: 'editHistory'; successful: number; failed: number }
  | { kind: 'editTemplate' }
  | { kind: 'stepClock'; ms: number }
  | { kind: 'deletesFail'; on: boolean };

export interface WorldOptions {
  policy: Policy;
  /** Forbid and Enqueue only. */
  maxConcurrency: number | undefined;
  /** startingDeadlineSeconds, or none. */
  deadline: number | undefined;
  intervalSeconds: number;
  /** successfulJobsHistoryLimit = failedJobsHistoryLimit. */
  historyLimit: number;
  ttlZero: boolean;
  seed: number;
}

const START_MS = Date.parse('2026-12-02T10:00:00.500Z');
const SHUTDOWN_TIMEOUT_MS = 10_000;

type Instant = { wallMs: number; monoMs: number };

export class PropertyViolation extends Error {}

export class World {
  readonly clock = new FakeClock({ wallStartMs: START_MS });
  readonly server: FakeApiServer;
  /** [leader-to-be, follower]; replaced when one is killed or terminated. */
  readonly replicas: Replica[];
  /** Every replica instance that ever ran (their counters add up). */
  private readonly everyReplica: Replica[] = [];
  readonly log: string[] = [];
  /** What the run went through (the coverage test counts these). */
  readonly seen = { crash: 0, pause: 0, handover: 0, handoverTimedOut: 0, suspended: 0, edited: 0, clockStep: 0, unknownThenLeadershipLost: 0 };
  private random: () => number;
  private generation = 0;
  /** The largest backwards step of the wall clock so far. */
  private steppedBackMs = 0;
  /** The largest watch lag any replica had so far. */
  private maxLagMs = 0;
  /** When the spec was suspended and resumed (`to` undefined while it still is), and the clock steps before. */
  private readonly suspensions: { from: Instant; to: Instant | undefined; clockSteps: number }[] = [];

  constructor(readonly opts: WorldOptions) {
    this.random = mulberry32(opts.seed);
    const scj: SecondCronJob = {
      apiVersion: 'secondcron.io/v1',
      kind: 'SecondCronJob',
      metadata: { name: 'hb', namespace: 'ns', uid: 'uid-1', resourceVersion: '1', generation: 1, creationTimestamp: '2026-12-02T10:00:00Z', finalizers: ['secondcron.io/cleanup'] },
      spec: {
        intervalSeconds: opts.intervalSeconds,
        concurrencyPolicy: opts.policy,
        ...(opts.maxConcurrency !== undefined && (opts.policy === 'Forbid' || opts.policy === 'Enqueue') ? { maxConcurrency: opts.maxConcurrency } : {}),
        ...(opts.deadline !== undefined ? { startingDeadlineSeconds: opts.deadline } : {}),
        successfulJobsHistoryLimit: opts.historyLimit,
        failedJobsHistoryLimit: opts.historyLimit,
        jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i:0' }] } } } },
      },
    };
    this.server = new FakeApiServer(this.clock, scj, () => this.random());
    this.server.ttlZero = opts.ttlZero;
    this.server.seenByAll = (name) => this.replicas.every((r) => !r.alive || r.sees(name));
    this.replicas = [this.replica('a'), this.replica('b')];
    this.leader().lead();
  }

  private replica(name: string): Replica {
    const r = new Replica(`${name}${this.generation++}`, this.clock, this.server, () => this.random());
    this.everyReplica.push(r);
    return r;
  }

  private leader(): Replica {
    return this.replicas[0] as Replica;
  }

  private follower(): Replica {
    return this.replicas[1] as Replica;
  }

  /** Plays one step; throws PropertyViolation with the server's verdict. */
  async run(step: Step): Promise<void> {
    this.log.push(`${(this.clock.mono.nowMs() / 1000).toFixed(1)}s ${JSON.stringify(step)}`);
    switch (step.kind) {
      case 'advance':
        await this.advance(step.ms);
        break;
      case 'fault':
        this.server.fault = step.fault;
        break;
      case 'finish':
        this.server.finishOldest(step.ok);
        break;
      case 'deleteByHand':
        this.server.deleteByHand(step.pick);
        break;
      case 'lag':
        (this.replicas[step.replica] as Replica).lagMs = step.ms;
        this.maxLagMs = Math.max(this.maxLagMs, step.ms);
        break;
      case 'relist':
        (this.replicas[step.replica] as Replica).relist();
        break;
      case 'crash': {
        // SIGKILL of the leader: the follower takes the Lease once it expired.
        this.seen.crash++;
        this.noteLeadershipLoss();
        this.leader().kill();
        await this.advance(LEASE_DURATION_MS);
        this.takeOver(this.replica('r'));
        break;
      }
      case 'pause': {
        // SIGSTOP past the renew deadline: fenced at once; the follower leads after the lease
        // duration; the paused one resumes as a follower (its ledger and caches kept).
        this.seen.pause++;
        this.noteLeadershipLoss();
        const paused = this.leader();
        paused.fence();
        await this.advance(LEASE_DURATION_MS);
        paused.stopLeading();
        this.replicas.reverse();
        this.leader().lead();
        break;
      }
      case 'handover': {
        // SIGTERM of the leader (a rolling upgrade): it stops deciding, lets creates answer, writes its
        // statuses and releases the Lease; the follower leads at its next retry. Past the shutdown
        // timeout the Lease is left to expire instead.
        this.seen.handover++;
        this.noteLeadershipLoss();
        const old = this.leader();
        const inTime = await old.terminate((until, maxMs) => this.advanceUntil(until, maxMs), SHUTDOWN_TIMEOUT_MS);
        old.stopLeading();
        old.kill();
        if (!inTime) this.seen.handoverTimedOut++;
        await this.advance(inTime ? RETRY_PERIOD_MS : LEASE_DURATION_MS);
        this.takeOver(this.replica('r'));
        break;
      }
      case 'suspend':
        if (step.on) this.seen.suspended++;
        this.noteSuspension(step.on);
        this.server.editSpec((spec) => ({ ...spec, suspend: step.on }));
        break;
      case 'suspendResumeFolded':
        this.seen.suspended++;
        this.noteSuspension(true);
        this.noteSuspension(false);
        this.server.editSpec((spec) => ({ ...spec, suspend: true }));
        this.server.editSpec((spec) => ({ ...spec, suspend: false }));
        break;
      case 'editSchedule':
        this.seen.edited++;
        this.server.reorderToleranceMs = this.steppedBackMs;
        this.server.editSpec((spec) => ({ ...spec, intervalSeconds: step.intervalSeconds }));
        break;
      case 'editHistory':
        this.server.editSpec((spec) => ({ ...spec, successfulJobsHistoryLimit: step.successful, failedJobsHistoryLimit: step.failed }));
        break;
      case 'editTemplate':
        this.server.editSpec((spec) => ({ ...spec, jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: `i:${this.generation}` }] } } } } }));
        break;
      case 'stepClock':
        this.seen.clockStep++;
        this.steppedBackMs = Math.max(this.steppedBackMs, -step.ms);
        this.clock.stepWall(step.ms);
        break;
      case 'deletesFail':
        this.server.deletesFail = step.on;
        break;
    }
    await flushAll();
    this.check();
  }

  /** A create with an unknown outcome was answered in the last 10 s (its retry may be pending). */
  private noteLeadershipLoss(): void {
    const now = this.clock.mono.nowMs();
    if (this.server.hard.unknownAtMonoMs.some((t) => t <= now && now - t < 10_000)) this.seen.unknownThenLeadershipLost++;
  }

  /** Which hard states this run reached (each counted once per run). */
  async coverage(): Promise<Record<string, boolean>> {
    const missed: Record<string, number> = {};
    for (const r of this.everyReplica) {
      for (const v of (await r.metrics.triggersMissed.get()).values) missed[String(v.labels.reason)] = (missed[String(v.labels.reason)] ?? 0) + v.value;
    }
    return {
      lateRefusal: this.server.hard.lateRefusals > 0,
      alreadyExists: this.server.hard.alreadyExists > 0,
      unknownThenLeadershipLost: this.seen.unknownThenLeadershipLost > 0,
      replace: this.opts.policy === 'Replace' && this.server.hard.runningJobsDeleted > 0,
      forbidSkip: (missed.forbid ?? 0) > 0,
      enqueued: this.opts.policy === 'Enqueue' && this.everyReplica.some((r) => r.events.some((e) => e.includes(' Queued: '))),
      handover: this.seen.handover > 0,
      deadlineMiss: (missed.deadline ?? 0) > 0,
      errorMiss: (missed.error ?? 0) > 0,
      crash: this.seen.crash > 0,
      pause: this.seen.pause > 0,
    };
  }

  /** The killed or terminated leader's place is taken by a new follower; the old follower leads. */
  private takeOver(fresh: Replica): void {
    this.replicas.splice(0, 2, this.follower(), fresh);
    this.leader().lead();
  }

  /**
   * The world calms down: answers normal, no lag, Jobs finish within 200 ms, resumed. Then liveness
   * (I10): every slot of the last 15 s but the newest second has its Job; and accounting (I1): in a
   * run with one leader, one schedule and no suspension, the slots without a Job are exactly the
   * slots the operator counted as missed.
   */
  async settle(opts: { countExactly: boolean }): Promise<void> {
    this.log.push(`${(this.clock.mono.nowMs() / 1000).toFixed(1)}s settle`);
    this.server.fault = 'ok';
    this.server.deletesFail = false;
    for (const r of this.replicas) r.lagMs = 0;
    if (this.server.scj.spec.suspend) {
      this.noteSuspension(false);
      this.server.editSpec((spec) => ({ ...spec, suspend: false }));
    }
    const finishAll = (): void => {
      for (const j of this.server.running()) if (!j.metadata.deletionTimestamp) this.server.finish(j.metadata.name, true);
    };
    // Backoffs of failed reconciles reach 30 s at most; the check looks at the last 15 s after that.
    const settleMs = 50_000;
    const end = this.clock.mono.nowMs() + settleMs;
    while (this.clock.mono.nowMs() < end) {
      finishAll();
      await this.advance(200);
    }
    await flushAll();
    this.check();
    const interval = (this.server.scj.spec.intervalSeconds ?? 1) * 1000;
    const nowWall = this.clock.wall.nowMs();
    const created = new Set(this.server.creates.filter((c) => c.stored).map((c) => c.slotMs));
    const anchor = Date.parse(this.server.scj.metadata.creationTimestamp);
    const latest = anchor + Math.floor((nowWall - 1_000 - anchor) / interval) * interval;
    for (let slot = latest; slot > nowWall - 15_000; slot -= interval) {
      if (!created.has(slot)) throw new PropertyViolation(`I10: liveness: slot ${new Date(slot).toISOString()} has no Job ${settleMs / 1000} s after the API server answered normally (now ${new Date(nowWall).toISOString()})`);
    }
    if (opts.countExactly) {
      let withoutJob = 0;
      for (let slot = anchor + interval; slot <= latest; slot += interval) if (!created.has(slot)) withoutJob++;
      let counted = 0;
      for (const r of this.everyReplica) counted += await r.missedTotal();
      if (counted !== withoutJob) throw new PropertyViolation(`I1: ${withoutJob} slots have no Job, the operators counted ${counted} missed`);
    }
  }

  private noteSuspension(on: boolean): void {
    const last = this.suspensions.at(-1);
    const suspended = last !== undefined && last.to === undefined;
    const now = { wallMs: this.clock.wall.nowMs(), monoMs: this.clock.mono.nowMs() };
    if (on && !suspended) this.suspensions.push({ from: now, to: undefined, clockSteps: this.seen.clockStep });
    if (!on && last && suspended) last.to = now;
  }

  private check(): void {
    const v = this.server.violations[0] ?? this.createWhileSuspended();
    if (v !== undefined) throw new PropertyViolation(v);
  }

  /**
   * I6, judged once every replica could have seen the suspension (the largest watch lag so far, and a
   * second for its reconcile): no create is sent while suspended, and none after the resume for a slot
   * that fell while suspended (not judged once the wall clock stepped: a slot may then fall twice).
   */
  private createWhileSuspended(): string | undefined {
    const seenMs = this.maxLagMs + 1_000;
    for (const s of this.suspensions) {
      const toMono = s.to?.monoMs ?? Number.POSITIVE_INFINITY;
      const toWall = s.to?.wallMs ?? Number.POSITIVE_INFINITY;
      const judgeSlots = this.seen.clockStep === s.clockSteps;
      const c = this.server.creates.find(
        (c) => (c.atMonoMs > s.from.monoMs + seenMs && c.atMonoMs < toMono) || (judgeSlots && c.atMonoMs >= toMono && c.slotMs > s.from.wallMs + seenMs && c.slotMs <= toWall),
      );
      if (c) return `I6: ${c.replica} sent a create for slot ${new Date(c.slotMs).toISOString()} at ${(c.atMonoMs / 1000).toFixed(1)}s; suspended from ${(s.from.monoMs / 1000).toFixed(1)}s (${new Date(s.from.wallMs).toISOString()}) to ${s.to ? `${(s.to.monoMs / 1000).toFixed(1)}s` : 'now'}`;
    }
    return undefined;
  }

  /** Moves time timer by timer, letting every promise settle after each. */
  async advance(ms: number): Promise<void> {
    const target = this.clock.mono.nowMs() + ms;
    for (let i = 0; i < 100_000; i++) {
      const next = this.clock.pendingTimers()[0];
      if (next === undefined || next.fireAtMs > target) break;
      this.clock.advanceTo(next.fireAtMs);
      await flushAll();
    }
    this.clock.advanceTo(target);
    await flushAll();
  }

  private async advanceUntil(until: () => boolean, maxMs: number): Promise<void> {
    const end = this.clock.mono.nowMs() + maxMs;
    await flushAll();
    while (!until() && this.clock.mono.nowMs() < end) await this.advance(Math.min(100, end - this.clock.mono.nowMs()));
  }

  /** Jobs of the server per slot, for messages. */
  describe(): string {
    return [...this.server.jobs.values()].map((j) => `${j.metadata.name}@${new Date(jobSlotMs(j)).toISOString().slice(17, 23)}`).join(' ');
  }
}

/** Lets every promise chain run out (each setImmediate turn runs the whole microtask queue first). */
async function flushAll(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}
