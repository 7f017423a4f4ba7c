// A model of one schedule's world for the property tests: the API server's Jobs, a Job cache that lags
// behind it, the status a leader wrote, leadership, the wall clock, and the one create the creator holds
// (queued, on the wire, or waiting to retry). The pure plan and the slot ledger under test decide; the
// model carries the plan out the way the controller and the JobCreator do, and records every decision
// per slot so that the invariants of DESIGN §3 can be checked after every step.
import type { Job, SecondCronJob, SecondCronJobSpec } from '../../../../src/controller/api.js';
import { jobName } from '../../../../src/controller/job-builder.js';
import { isActive, jobOutcome, jobSlotMs } from '../../../../src/controller/job-state.js';
import { SlotLedger } from '../../../../src/controller/slots/ledger.js';
import { type Plan, firstOpenSlotMs, plan } from '../../../../src/controller/slots/plan.js';
import { compileSchedule } from '../../../../src/schedule/index.js';
import type { SlotSource } from '../../../../src/schedule/index.js';
import { job as jobFixture, scj as scjFixture } from '../fixtures.js';

export type Policy = 'Allow' | 'Forbid' | 'Replace';

/** How the API server answers the create on the wire. */
export type Answer = 'created' | 'throttled' | 'unavailable' | 'error-stored' | 'error-nothing' | 'timeout-stored' | 'timeout-nothing' | 'invalid';

export type Step =
  | { kind: 'advance'; ms: number }
  | { kind: 'send' }
  | { kind: 'answer'; answer: Answer }
  | { kind: 'observe' }
  | { kind: 'relist' }
  | { kind: 'finish'; pick: number; ok: boolean }
  | { kind: 'deleteJob'; pick: number }
  | { kind: 'writeStatus' }
  | { kind: 'leadership'; lead: boolean }
  | { kind: 'suspend'; on: boolean }
  | { kind: 'editSchedule'; intervalSeconds: number }
  | { kind: 'editHistory'; successful: number; failed: number }
  | { kind: 'stepClock'; ms: number }
  | { kind: 'deletesFail'; on: boolean };

export const T0 = Date.parse('2026-12-02T10:00:00Z');

/** What happened to a slot, as decided by this replica (final decisions only). */
type Decision = 'job' | 'late' | 'deadline' | 'forbid' | 'error';

export class Violation extends Error {}

export class Model {
  now = T0 + 500;
  readonly ledger = new SlotLedger();
  spec: SecondCronJobSpec;
  status: SecondCronJob['status'] = {};
  /** The API server's Jobs by name. */
  readonly server = new Map<string, Job>();
  /** The Job cache: the server as of the last observe. */
  cache = new Map<string, Job>();
  leader = true;
  deletesFail = false;
  /** The create the creator holds: its slot, whether it is on the wire, and its deadline. */
  creator: { slotMs: number; onWire: boolean; deadlineMs: number; failedOnce: boolean; maybeStored: boolean } | undefined;
  /** Final decisions per slot (a slot decided twice is a violation). */
  readonly decisions = new Map<number, Decision>();
  /** Slots that ever had a Job on the server. */
  readonly everCreated = new Set<number>();
  /** secondcron_triggers_missed_total as the controller would count it. */
  missedTotal = 0;
  /** Running Jobs deleted by Replace (for the generator's coverage). */
  replaced = 0;
  /** Slots in (from, to] fell while suspended. */
  readonly silent: { fromMs: number; toMs: number }[] = [];
  /** Since when the current schedule and suspension state hold (the accounting window starts here). */
  windowStartMs = T0;
  private suspendedSinceMs: number | undefined;
  private lastEditMs = T0;
  private uid = 0;
  private generation = 1;
  private monoMs = 0;
  readonly log: string[] = [];

  constructor(readonly policy: Policy, readonly startingDeadlineSeconds: number | undefined, intervalSeconds: number) {
    this.spec = scjFixture({ intervalSeconds, concurrencyPolicy: policy, ...(startingDeadlineSeconds !== undefined ? { startingDeadlineSeconds } : {}) }).spec;
  }

  get scj(): SecondCronJob {
    const base = scjFixture(this.spec);
    return { ...base, metadata: { ...base.metadata, generation: this.generation }, status: this.status };
  }

  get source(): SlotSource {
    const c = compileSchedule({ intervalSeconds: this.spec.intervalSeconds }, T0, this.now, 'ns/hb');
    if (!c.ok) throw new Error(c.message);
    return c.source;
  }

  run(step: Step): void {
    this.log.push(JSON.stringify(step));
    switch (step.kind) {
      case 'advance':
        this.now += step.ms;
        this.monoMs += step.ms;
        break;
      case 'send':
        this.send();
        break;
      case 'answer':
        this.answer(step.answer);
        break;
      case 'observe':
        this.observe();
        break;
      case 'relist':
        this.observe();
        if (this.ledger.relisted(this.monoMs + 1, (name) => this.cache.has(name))) this.log.push('  relist dropped expected Jobs');
        break;
      case 'finish': {
        const running = [...this.server.values()].filter(isActive);
        const j = running[step.pick % Math.max(1, running.length)];
        if (j) this.server.set(j.metadata.name, { ...j, status: { conditions: [{ type: step.ok ? 'Complete' : 'Failed', status: 'True', lastTransitionTime: new Date(this.now).toISOString() }], ...(step.ok ? { completionTime: new Date(this.now).toISOString() } : {}) } });
        break;
      }
      case 'deleteJob': {
        // Anyone may delete a Job, except in the moment its create's outcome is unknown (the controller
        // reads it back to tell a Job from a miss; a Job deleted in between is an ambiguity no reader can settle).
        const all = [...this.server.values()].filter((j) => jobSlotMs(j) !== this.creator?.slotMs);
        const j = all[step.pick % Math.max(1, all.length)];
        if (j) this.server.delete(j.metadata.name);
        break;
      }
      case 'writeStatus':
        if (this.leader) this.writeStatus();
        break;
      case 'leadership':
        if (this.leader && !step.lead) this.loseLeadership();
        // A new term starts at least a lease duration later: the watch has delivered what was written.
        if (!this.leader && step.lead) this.observe();
        this.leader = step.lead;
        break;
      case 'suspend':
        // Slots decided before the suspension (also ones "after" it once the clock stepped back) are not suspended slots.
        if (step.on && !this.spec.suspend) this.suspendedSinceMs = Math.max(this.now, this.ledger.decidedThroughMs);
        if (!step.on && this.spec.suspend) {
          this.silent.push({ fromMs: this.suspendedSinceMs ?? this.now, toMs: this.now });
          this.scheduleChanged();
          this.windowStartMs = this.ledger.decidedThroughMs; // now, or later when the clock stepped back behind decided slots (I5)
        }
        if (step.on !== (this.spec.suspend === true)) this.generation++;
        this.spec = { ...this.spec, suspend: step.on };
        break;
      case 'editSchedule':
        if (step.intervalSeconds !== this.spec.intervalSeconds) {
          this.generation++;
          this.scheduleChanged();
          this.spec = { ...this.spec, intervalSeconds: step.intervalSeconds };
          this.lastEditMs = this.now;
          this.windowStartMs = this.ledger.decidedThroughMs; // now, or later when the clock stepped back behind decided slots (I5)
        }
        break;
      case 'editHistory':
        this.generation++;
        this.spec = { ...this.spec, successfulJobsHistoryLimit: step.successful, failedJobsHistoryLimit: step.failed };
        break;
      case 'stepClock':
        this.now += step.ms;
        break;
      case 'deletesFail':
        this.deletesFail = step.on;
        break;
    }
    if (this.leader) this.reconcile();
    this.checkAlways();
  }

  /** What the controller does when it sees an edit or a resume: the old schedule's pending slots are counted. */
  private scheduleChanged(): void {
    const dropped = this.ledger.scheduleChanged(this.now);
    if (dropped === undefined) return;
    this.creator = undefined;
    this.recordMissed('late', dropped, 1);
  }

  /** What the controller's reconcile does with the slots: plan, carry out, plan again after Replace deletes. */
  reconcile(): void {
    for (let round = 0; round < 3; round++) {
      const p = plan({ scj: this.scj, source: this.source, templateInvalid: false, jobs: this.ownedJobs(), ledger: this.ledger, nowMs: this.now });
      this.checkPlan(p);
      if (p.supersede) this.creator = undefined; // the creator cancels it: not on the wire
      this.ledger.decide(p);
      for (const m of p.missed) this.recordMissed(m.reason, m.slotMs, m.count);
      this.prune(p.prune);
      if (!p.create) return;
      if (p.replace.length > 0) {
        if (this.deletesFail) return; // the delete failed: no create, the key is retried
        for (const j of p.replace) {
          this.replaced++;
          this.server.delete(j.metadata.name);
          this.ledger.deleteAccepted(j);
        }
        continue;
      }
      this.checkSubmit(p.create.slotMs);
      this.creator = { slotMs: p.create.slotMs, onWire: false, deadlineMs: p.create.deadlineMs, failedOnce: false, maybeStored: false };
      return;
    }
  }

  private prune(jobs: readonly Job[]): void {
    if (this.deletesFail) return;
    for (const j of jobs) {
      this.server.delete(j.metadata.name);
      this.ledger.deleteAccepted(j);
    }
  }

  private ownedJobs(): Job[] {
    const owned = [...this.cache.values()];
    for (const [name, e] of this.ledger.expected) if (!this.cache.has(name)) owned.push(e.job);
    return owned;
  }

  /** The creator's pump: fenced, deadline-checked, then on the wire. */
  private send(): void {
    const c = this.creator;
    if (!c || c.onWire) return;
    if (!this.leader) return this.ended('not_leader');
    if (this.now > c.deadlineMs) return this.ended(c.failedOnce ? 'error' : 'deadline');
    this.checkSend(c.slotMs);
    c.onWire = true;
    this.ledger.createSent();
  }

  private answer(answer: Answer): void {
    const c = this.creator;
    if (!c?.onWire) return;
    c.onWire = false;
    const name = jobName('hb', c.slotMs);
    const store = (): void => {
      const j = jobFixture(name, { slot: new Date(c.slotMs).toISOString() });
      this.server.set(name, { ...j, metadata: { ...j.metadata, uid: `u${++this.uid}` } });
      this.everCreated.add(c.slotMs);
    };
    if (answer === 'created' || answer === 'error-stored' || answer === 'timeout-stored') {
      if (this.server.has(name)) {
        if (answer === 'created') return this.ended('already_exists');
      } else {
        store();
        if (answer === 'created') return this.ended('created');
      }
    }
    if (answer === 'invalid') return this.ended('error');
    c.failedOnce = true;
    const nothingStored = answer === 'throttled' || answer === 'unavailable';
    if (!nothingStored) c.maybeStored = true;
    this.ledger.createRetrying(nothingStored);
  }

  private ended(how: 'created' | 'already_exists' | 'error' | 'deadline' | 'not_leader'): void {
    const c = this.creator;
    if (!c) return;
    this.creator = undefined;
    const name = jobName('hb', c.slotMs);
    if (how === 'created' || how === 'already_exists') {
      this.ledger.createEnded(how, c.slotMs);
      const stored = this.server.get(name);
      if (stored && !this.cache.has(name)) this.ledger.expected.set(name, { job: stored, ackMonoMs: this.monoMs });
      this.decideSlot(c.slotMs, 'job');
    } else if (how === 'not_leader') {
      if (this.ledger.createEnded('not_leader', c.slotMs)) this.recordMissed('late', c.slotMs, 1);
    } else {
      this.ledger.createEnded('failed', c.slotMs);
      // After an unknown outcome the controller reads the Job back: counted only when it is not there.
      const stored = this.server.get(name);
      if (c.maybeStored && stored) {
        this.decideSlot(c.slotMs, 'job');
        if (!this.cache.has(name)) this.ledger.expected.set(name, { job: stored, ackMonoMs: this.monoMs });
      } else {
        this.recordMissed(how, c.slotMs, 1);
      }
    }
  }

  private loseLeadership(): void {
    const c = this.creator;
    if (c && !c.onWire) {
      const stored = this.server.get(jobName('hb', c.slotMs));
      this.creator = undefined;
      if (this.ledger.leadershipLost(stored ? { job: stored, ackMonoMs: this.monoMs } : undefined)) this.recordMissed('late', c.slotMs, 1);
    }
  }

  private observe(): void {
    this.cache = new Map(this.server);
    for (const j of this.cache.values()) {
      if (!this.ledger.jobObserved(j)) continue;
      // The create waiting to retry had stored its Job: the controller cancels the retry.
      this.creator = undefined;
      this.decideSlot(jobSlotMs(j), 'job');
    }
    for (const name of this.ledger.deleting) {
      if (!this.server.has(name)) this.ledger.jobGone(jobFixture(name, { slot: new Date(T0).toISOString() }));
    }
  }

  private writeStatus(): void {
    const jobs = this.ownedJobs();
    const slots = [...jobs.map(jobSlotMs), this.ledger.lastScheduledMs ?? Number.NaN].filter((s) => !Number.isNaN(s));
    const last = slots.length > 0 ? Math.max(...slots) : undefined;
    const next = this.spec.suspend ? null : firstOpenSlotMs(this.source, this.scj, jobs, this.ledger);
    this.status = {
      observedGeneration: this.generation,
      ...(last !== undefined ? { lastScheduleTime: new Date(last).toISOString().replace('.000Z', 'Z') } : {}),
      ...(next !== null ? { nextScheduleTime: new Date(next).toISOString().replace('.000Z', 'Z') } : {}),
    };
  }

  private recordMissed(reason: Decision, fromMs: number, count: number): void {
    this.missedTotal += count;
    let slot: number | null = fromMs;
    for (let i = 0; i < count && slot !== null; i++) {
      this.decideSlot(slot, reason);
      slot = this.source.next(slot);
    }
  }

  private decideSlot(slotMs: number, d: Decision): void {
    const before = this.decisions.get(slotMs);
    if (before !== undefined) throw new Violation(`I1: slot ${(slotMs - T0) / 1000} decided twice (${before}, then ${d})`);
    this.decisions.set(slotMs, d);
  }

  // ---- invariants --------------------------------------------------------------------------------

  /** Jobs active on the API server, plus the create outstanding: the slots that run or may run. */
  private runningSlots(): Set<number> {
    const slots = new Set([...this.server.values()].filter(isActive).map(jobSlotMs));
    if (this.creator) slots.add(this.creator.slotMs);
    return slots;
  }

  private checkAlways(): void {
    if (this.policy === 'Forbid' && this.runningSlots().size > 1) {
      throw new Violation(`I2: Forbid, yet slots ${[...this.runningSlots()].map((s) => (s - T0) / 1000).join(', ')} are active or being created`);
    }
    if (this.ledger.create && !this.creator && this.leader) throw new Violation('ledger and creator disagree: the ledger holds a create the creator does not');
  }

  private checkPlan(p: Plan): void {
    if (p.create && (p.create.slotMs > this.now || p.create.slotMs <= this.ledger.decidedThroughMs)) {
      throw new Violation(`plan creates slot ${(p.create.slotMs - T0) / 1000} that is not due and undecided`);
    }
  }

  private checkSubmit(slotMs: number): void {
    if (this.policy === 'Replace') {
      const active = [...this.server.values()].filter(isActive);
      if (active.length > 0) throw new Violation(`I3: Replace submits slot ${(slotMs - T0) / 1000} while ${active.map((j) => j.metadata.name).join(', ')} still run`);
    }
    if (slotMs <= this.lastEditMs || this.source.next(slotMs - 1) !== slotMs) throw new Violation(`I7: slot ${(slotMs - T0) / 1000} is not a slot of the schedule since its last edit`);
    if (this.silent.some((w) => slotMs > w.fromMs && slotMs <= w.toMs)) throw new Violation(`I6: slot ${(slotMs - T0) / 1000} fell while suspended or before an edit`);
  }

  /** I4: a create with proof that nothing was stored is never sent once a newer slot is due. */
  private checkSend(slotMs: number): void {
    const c = this.ledger.create;
    if (!c?.nothingStored || this.spec.suspend) return;
    const newer = this.source.next(Math.max(slotMs, this.ledger.decidedThroughMs));
    if (newer !== null && newer <= this.now) throw new Violation(`I4: slot ${(slotMs - T0) / 1000} sent although slot ${(newer - T0) / 1000} is due`);
  }

  /**
   * After the world has calmed down (leader, creates answered, cache current): every slot of the current
   * schedule in the accounting window got exactly one decision, a Job or a count, and the count equals
   * the slots without a Job (I1); history limits hold (I8); nothing ran while suspended (I6).
   */
  checkSettled(): void {
    const source = this.source;
    for (let s = source.next(this.windowStartMs); s !== null && s <= this.ledger.decidedThroughMs && s <= this.now; s = source.next(s)) {
      const d = this.decisions.get(s);
      if (d === undefined && !this.everCreated.has(s)) throw new Violation(`I1: slot ${(s - T0) / 1000} has neither a Job nor a count`);
      if (d !== undefined && d !== 'job' && this.everCreated.has(s)) throw new Violation(`I1: slot ${(s - T0) / 1000} counted as ${d} but has a Job`);
    }
    const counted = [...this.decisions.values()].filter((d) => d !== 'job').length;
    if (counted !== this.missedTotal) throw new Violation(`I1: ${this.missedTotal} counted, ${counted} slots without a Job decided`);
    for (const [slot, d] of this.decisions) {
      if (this.silent.some((w) => slot > w.fromMs && slot <= w.toMs)) throw new Violation(`I6: slot ${(slot - T0) / 1000} fell while suspended, yet was decided (${d})`);
    }
    const finished = [...this.server.values()];
    const ok = finished.filter((j) => jobOutcome(j) === 'Complete').length;
    const failed = finished.filter((j) => jobOutcome(j) === 'Failed').length;
    if (ok > (this.spec.successfulJobsHistoryLimit ?? 3) || failed > (this.spec.failedJobsHistoryLimit ?? 1)) {
      throw new Violation(`I8: ${ok} successful and ${failed} failed Jobs kept, limits ${this.spec.successfulJobsHistoryLimit ?? 3}/${this.spec.failedJobsHistoryLimit ?? 1}`);
    }
  }

  /** Leader, deletes working, every create answered "created", cache current, a few slots later. */
  settle(): void {
    this.run({ kind: 'deletesFail', on: false });
    this.run({ kind: 'leadership', lead: true });
    this.run({ kind: 'suspend', on: false });
    for (let i = 0; i < 8; i++) {
      this.run({ kind: 'send' });
      this.run({ kind: 'answer', answer: 'created' });
      this.run({ kind: 'observe' });
    }
  }
}
