import type { MonotonicClock, TimerHandle, Timers, WallClock } from '../clock/clock.js';
import { callWithTimeout } from './call-with-timeout.js';
import { JITTER_FACTOR, resolveElectionTiming } from './elector-config.js';
import type { ElectionTiming, ElectionTimingOptions } from './elector-config.js';
import { leaseChanged } from './lease-record.js';
import type { LeaseRecord, VersionedLease } from './lease-record.js';
import { LeaseConflictError, LeaseTimeoutError } from './lease-store.js';
import type { LeaseStore } from './lease-store.js';

/**
 * Idle: constructed, not started. Candidate: trying to acquire. Leader: holds a fresh lease.
 * Stopped: stop() or release() was called; terminal.
 */
export type ElectorState = 'Idle' | 'Candidate' | 'Leader' | 'Stopped';

/** Which store interaction an error came from (for logs). */
export type ElectorOperation = 'get' | 'create' | 'update' | 'release' | 'callback';

export interface ElectorHooks {
  onStartedLeading?: () => void;
  /** Called after isLeaderFresh() has already turned false. */
  onStoppedLeading?: () => void;
  /** The holder recorded in the Lease changed ('' = released, nobody holds it). Includes the first observation. */
  onNewLeader?: (identity: string) => void;
  onStateChange?: (state: ElectorState, leaderIdentity: string) => void;
  /** Store failures and exceptions thrown by hooks; the elector carries on regardless. */
  onError?: (error: unknown, operation: ElectorOperation) => void;
}

export interface LeaderElectorOptions extends ElectionTimingOptions {
  identity: string;
  store: LeaseStore;
  monotonic: MonotonicClock;
  wall: WallClock;
  timers: Timers;
  /** In [0, 1); drives the candidate's retry jitter. */
  random: () => number;
  hooks?: ElectorHooks;
}

/** Monotone counters for the metrics module; read with `counters()`. */
export interface ElectorCounters {
  /** Holder changes this process saw in the Lease (the first observation is not a change). */
  leaderChangesObserved: number;
  /** Times this process became leader. */
  acquisitions: number;
  /** Times this process stopped leading (renew deadline, lease taken, stop, release). */
  leadershipLosses: number;
  /** Store calls that failed with anything but a conflict (timeouts included). */
  storeErrors: number;
  storeTimeouts: number;
  /** Writes that lost an optimistic-concurrency race. */
  conflicts: number;
}

type AttemptOutcome =
  /** We hold the lease; the write that proves it was sent at `writeStartMonoMs`. */
  | { kind: 'acquired'; writeStartMonoMs: number }
  /** Held by another replica; its Lease expires, for us, at expiresAtMonoMs (our clock, from when we saw it change). */
  | { kind: 'heldByOther'; holder: string; expiresAtMonoMs: number }
  | { kind: 'failed' }
  /** The attempt was abandoned (stop, loss, release): its result must be ignored. */
  | { kind: 'abandoned' };

/**
 * Lease-based leader election: client-go's algorithm, with the I/O, clocks, timers and
 * randomness injected so every path is testable with a fake clock.
 *
 * Safety rests on two rules borrowed from client-go: a candidate only times a lease out on its
 * OWN monotonic clock, counting from the moment it saw the record change (remote timestamps are
 * never compared with local time), and every write carries the resourceVersion it read.
 * On top of that, the leader fences itself: isLeaderFresh() turns false as soon as renewDeadline
 * has passed since the last successful renew, which is before any follower can take over.
 *
 * Three departures from client-go's loop: the retry period counts from the start of an attempt, not
 * from its end, because our store calls have a per-call timeout and client-go's do not (see
 * scheduleNextAttempt); a candidate tries again at the instant a held Lease expires for it when
 * that comes before its next attempt (runAttempt); and when the store can watch the Lease, each new
 * version counts as seen when it arrives (observeWatched). The two rules above keep all three safe.
 */
export class LeaderElector {
  readonly identity: string;
  readonly timing: ElectionTiming;

  private readonly store: LeaseStore;
  private readonly mono: MonotonicClock;
  private readonly wall: WallClock;
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly hooks: ElectorHooks;

  private state: ElectorState = 'Idle';
  private observed: VersionedLease | null = null;
  private observedMonoMs = 0;
  /** null until the first record was seen, so the first observation is not counted as a change. */
  private reportedLeader: string | null = null;
  private lastRenewMonoMs = Number.NEGATIVE_INFINITY;

  /** Bumped whenever in-flight work must be disowned (stop, loss of leadership). */
  private epoch = 0;
  private loopTimer: TimerHandle | null = null;
  private deadlineTimer: TimerHandle | null = null;
  private inflight: AbortController | null = null;
  /** When the latest attempt started (monotonic): the next one is due a retry period after it. */
  private lastAttemptStartMonoMs = 0;
  private releasing: Promise<void> | null = null;
  private unwatch: (() => void) | null = null;

  private readonly stats: ElectorCounters = {
    leaderChangesObserved: 0,
    acquisitions: 0,
    leadershipLosses: 0,
    storeErrors: 0,
    storeTimeouts: 0,
    conflicts: 0,
  };

  constructor(options: LeaderElectorOptions) {
    if (options.identity.trim() === '') throw new Error('leader election: identity must not be empty');
    this.timing = resolveElectionTiming(options);
    this.identity = options.identity;
    this.store = options.store;
    this.mono = options.monotonic;
    this.wall = options.wall;
    this.timers = options.timers;
    this.random = options.random;
    this.hooks = options.hooks ?? {};
  }

  /** Starts competing: the first attempt runs on the next timer tick. */
  start(): void {
    if (this.state === 'Stopped') throw new Error('leader election: cannot start an elector after stop() or release()');
    if (this.state !== 'Idle') return;
    this.setState('Candidate');
    this.unwatch = this.store.watch?.((lease) => this.observeWatched(lease)) ?? null;
    this.scheduleAttempt(0);
  }

  getState(): ElectorState {
    return this.state;
  }

  /** The holder in the last Lease record observed ('' if none or not yet read). */
  getLeader(): string {
    return this.observed?.record.holderIdentity ?? '';
  }

  isLeader(): boolean {
    return this.state === 'Leader';
  }

  /**
   * Fencing check for side effects (the controller calls it before each Job create): true only
   * while the last successful renew is younger than renewDeadline. Reads the monotonic clock
   * itself, so it holds even if the deadline timer has not run yet (stalled event loop).
   */
  isLeaderFresh(): boolean {
    return this.fenceRemainingMs() > 0;
  }

  /**
   * How much longer this replica may act as leader: the time left before its renew deadline, 0 when
   * it is not a fresh leader. Writes are fenced with it and their timeouts cut to it.
   */
  fenceRemainingMs(): number {
    if (this.state !== 'Leader') return 0;
    return Math.max(0, this.timing.renewDeadlineMs - (this.mono.nowMs() - this.lastRenewMonoMs));
  }

  /**
   * For /healthz: fails only a leader whose last successful renew is older than leaseDuration
   * (+ tolerance) — a wedged process that no longer notices it lost the lease. Followers are
   * always healthy: restarting them would not help anybody.
   */
  healthy(): boolean {
    if (this.state !== 'Leader') return true;
    return this.mono.nowMs() - this.lastRenewMonoMs <= this.timing.leaseDurationMs + this.timing.healthToleranceMs;
  }

  counters(): ElectorCounters {
    return { ...this.stats };
  }

  /** Stops all loops without touching the Lease (it expires on its own). Idempotent. */
  stop(): void {
    if (this.state === 'Stopped') return;
    const wasLeader = this.state === 'Leader';
    this.disownInflightWork();
    this.unwatch?.();
    this.unwatch = null;
    this.setState('Stopped');
    if (wasLeader) {
      this.stats.leadershipLosses++;
      this.callHook(this.hooks.onStoppedLeading);
    }
  }

  /**
   * Stops, and if the last record we saw names us, hands the Lease back: empty holder and a
   * 1 s duration so a follower takes over at its next retry instead of after a whole lease
   * duration. onStoppedLeading runs (and isLeaderFresh() is false) before the write goes out,
   * so nobody else can lead while we still act. Idempotent; never throws.
   */
  release(): Promise<void> {
    if (this.releasing === null) this.releasing = this.doRelease();
    return this.releasing;
  }

  private async doRelease(): Promise<void> {
    const last = this.observed;
    this.stop();
    if (last === null || last.record.holderIdentity !== this.identity) return;
    const released: LeaseRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTimeMs: last.record.acquireTimeMs,
      renewTimeMs: this.wall.nowMs(),
      leaseTransitions: last.record.leaseTransitions,
    };
    const never = new AbortController().signal;
    try {
      this.observe(await this.call('update', (s) => this.store.update(released, last.resourceVersion, s), never));
    } catch (error) {
      if (!(error instanceof LeaseConflictError)) {
        this.reportStoreError(error, 'release');
        return;
      }
      // A renew we abandoned may still have landed and bumped the version: if the Lease is
      // still ours, release that version; if someone else holds it, there is nothing to release.
      try {
        const current = await this.call('get', (s) => this.store.get(s), never);
        if (current === null || current.record.holderIdentity !== this.identity) return;
        const retry: LeaseRecord = {
          ...released,
          acquireTimeMs: current.record.acquireTimeMs,
          leaseTransitions: current.record.leaseTransitions,
        };
        this.observe(await this.call('update', (s) => this.store.update(retry, current.resourceVersion, s), never));
      } catch (retryError) {
        this.reportStoreError(retryError, 'release');
      }
    }
  }

  // ---- the loop -------------------------------------------------------------------------

  /**
   * The next attempt is due `periodMs` after the START of the previous one (`attemptStartMonoMs`),
   * and at once if that moment has passed, as wait.JitterUntil does with sliding=false.
   *
   * Counting from the end instead left a hole after every hung call: during an API server freeze
   * each call ran into its per-call timeout and the candidate then slept another whole jittered
   * period (2–4.4 s by default) with no request in flight, so when the server came back inside
   * that hole nobody asked for the Lease until it ended. Measured (issue 37): after a 30 s SIGSTOP
   * of the API server no replica led for 2–5 s after SIGCONT. Counting from the start keeps a
   * request in flight all through a freeze (each one goes out when the last times out), so one is
   * answered at the thaw. client-go does not need this: its acquire loop does slide, but its
   * requests have no per-call timeout, so during a freeze they hang and are answered at the thaw.
   *
   * No hammering: an attempt that fails fast (refused, 5xx) or finds the Lease held still waits
   * the whole period, so calls are at least min(period, per-call timeout) apart.
   */
  private scheduleNextAttempt(attemptStartMonoMs: number, periodMs: number): void {
    this.scheduleAttempt(Math.max(0, attemptStartMonoMs + periodMs - this.mono.nowMs()));
  }

  private scheduleAttempt(delayMs: number): void {
    // A hook may have stopped us (e.g. onStoppedLeading calling release()): never resume then.
    if (this.state === 'Stopped') return;
    const epoch = this.epoch;
    this.loopTimer = this.timers.set(delayMs, () => {
      this.loopTimer = null;
      if (epoch === this.epoch) void this.runAttempt(epoch);
    });
  }

  /** client-go's wait.Jitter: retryPeriod × (1 + random·JITTER_FACTOR), so candidates do not stampede. */
  private jitteredRetryMs(): number {
    return this.timing.retryPeriodMs * (1 + this.random() * JITTER_FACTOR);
  }

  private async runAttempt(epoch: number): Promise<void> {
    if (this.state !== 'Candidate' && this.state !== 'Leader') return;
    // Belt and braces: the deadline timer normally ends leadership, but if it has not run yet
    // (stalled loop) a stale leader must not start another round as if nothing happened.
    if (this.state === 'Leader' && !this.isLeaderFresh()) {
      this.loseLeadership();
      return;
    }
    // The retry period counts from here, the start of the attempt (see scheduleNextAttempt).
    const attemptStartMonoMs = this.mono.nowMs();
    this.lastAttemptStartMonoMs = attemptStartMonoMs;
    const controller = new AbortController();
    this.inflight = controller;
    const outcome = await this.tryAcquireOrRenew(controller.signal);
    if (this.inflight === controller) this.inflight = null;
    if (epoch !== this.epoch || outcome.kind === 'abandoned') return;

    if (this.state === 'Candidate') {
      if (outcome.kind === 'acquired') {
        this.becomeLeader(outcome.writeStartMonoMs);
        this.scheduleNextAttempt(attemptStartMonoMs, this.timing.retryPeriodMs);
      } else {
        // A held Lease is tried again when it expires for us, if that comes before the next attempt:
        // a dead leader's Lease is taken at its expiry, not up to a retry period later (kill → Lease
        // 18.3 s at lease 15 s in the failover bench). A live leader's renewals, seen at every read,
        // keep the expiry a lease duration ahead: reads stay one per retry period.
        const retryMs = this.jitteredRetryMs();
        const untilExpiryMs = outcome.kind === 'heldByOther' ? outcome.expiresAtMonoMs - attemptStartMonoMs : retryMs;
        this.scheduleNextAttempt(attemptStartMonoMs, Math.min(retryMs, untilExpiryMs));
      }
      return;
    }
    if (this.state !== 'Leader') return;
    if (outcome.kind === 'acquired') {
      this.lastRenewMonoMs = outcome.writeStartMonoMs;
      this.armDeadline();
    } else if (outcome.kind === 'heldByOther') {
      // Someone else wrote the Lease as holder: we are certainly not leading any more.
      this.loseLeadership();
      return;
    }
    // Renews go out every retryPeriod, counted from the start of this one; a failed renew is
    // retried the same way until the deadline timer gives up.
    this.scheduleNextAttempt(attemptStartMonoMs, this.timing.retryPeriodMs);
  }

  private becomeLeader(writeStartMonoMs: number): void {
    this.lastRenewMonoMs = writeStartMonoMs;
    this.stats.acquisitions++;
    this.armDeadline();
    this.setState('Leader');
    if (this.state === 'Leader') this.callHook(this.hooks.onStartedLeading);
  }

  private armDeadline(): void {
    if (this.deadlineTimer !== null) this.timers.clear(this.deadlineTimer);
    const dueInMs = this.lastRenewMonoMs + this.timing.renewDeadlineMs - this.mono.nowMs();
    this.deadlineTimer = this.timers.set(Math.max(dueInMs, 0), () => {
      this.deadlineTimer = null;
      if (this.state !== 'Leader') return;
      // Timers may wake early: only give up once the deadline has really passed.
      if (this.isLeaderFresh()) this.armDeadline();
      else this.loseLeadership();
    });
  }

  /** Back to candidate: stop leading first, then compete again (the process does not exit). */
  private loseLeadership(): void {
    const renewHanging = this.inflight !== null;
    this.disownInflightWork();
    this.stats.leadershipLosses++;
    this.setState('Candidate');
    this.callHook(this.hooks.onStoppedLeading);
    // A renew hanging at the deadline is abandoned (it must not land for a leader that stopped); the
    // first try as a candidate takes its place at once, so a call stays in flight. Waiting a period
    // instead left nobody asking for the Lease: after freezes of 10–14.4 s no replica led for up to
    // 4.4 s after the thaw (test/unit/election/elector-retry-timing.test.ts). Otherwise (the Lease
    // held by another, or a stalled loop) the period counts from the start of the last attempt.
    if (renewHanging) this.scheduleAttempt(0);
    else this.scheduleNextAttempt(this.lastAttemptStartMonoMs, this.jitteredRetryMs());
  }

  private disownInflightWork(): void {
    this.epoch++;
    this.inflight?.abort(new Error('leader election attempt abandoned'));
    this.inflight = null;
    if (this.loopTimer !== null) this.timers.clear(this.loopTimer);
    if (this.deadlineTimer !== null) this.timers.clear(this.deadlineTimer);
    this.loopTimer = null;
    this.deadlineTimer = null;
  }

  // ---- one try ----------------------------------------------------------------------------

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<AttemptOutcome> {
    let current: VersionedLease | null;
    try {
      current = await this.call('get', (s) => this.store.get(s), signal);
    } catch (error) {
      return this.failedAttempt(error, 'get', signal);
    }

    const nowWall = this.wall.nowMs();
    if (current === null) {
      const fresh: LeaseRecord = {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.timing.leaseDurationSeconds,
        acquireTimeMs: nowWall,
        renewTimeMs: nowWall,
        leaseTransitions: 0,
      };
      return this.write('create', (s) => this.store.create(fresh, s), signal);
    }

    this.observe(current);
    const holder = current.record.holderIdentity;
    // The observed record carries the lease duration the holder asked for; it runs on our clock.
    const expiresAtMonoMs = this.observedMonoMs + current.record.leaseDurationSeconds * 1000;
    if (holder !== '' && holder !== this.identity && expiresAtMonoMs > this.mono.nowMs()) {
      return { kind: 'heldByOther', holder, expiresAtMonoMs };
    }

    const weHoldIt = holder === this.identity;
    const next: LeaseRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.timing.leaseDurationSeconds,
      // Transitions count holder changes only; a takeover from '' (after a release) is one.
      acquireTimeMs: weHoldIt ? (current.record.acquireTimeMs ?? nowWall) : nowWall,
      renewTimeMs: nowWall,
      leaseTransitions: weHoldIt ? current.record.leaseTransitions : current.record.leaseTransitions + 1,
    };
    const version = current.resourceVersion;
    return this.write('update', (s) => this.store.update(next, version, s), signal);
  }

  private async write(
    operation: 'create' | 'update',
    fn: (signal: AbortSignal) => Promise<VersionedLease>,
    signal: AbortSignal,
  ): Promise<AttemptOutcome> {
    // Freshness counts from when the write was sent, not when the answer came back: followers
    // start their timeout no earlier than the write itself, so this errs on the safe side.
    const writeStartMonoMs = this.mono.nowMs();
    try {
      this.observe(await this.call(operation, fn, signal));
      return { kind: 'acquired', writeStartMonoMs };
    } catch (error) {
      return this.failedAttempt(error, operation, signal);
    }
  }

  private failedAttempt(error: unknown, operation: ElectorOperation, signal: AbortSignal): AttemptOutcome {
    if (signal.aborted) return { kind: 'abandoned' };
    if (error instanceof LeaseConflictError) {
      this.stats.conflicts++;
      return { kind: 'failed' };
    }
    this.reportStoreError(error, operation);
    return { kind: 'failed' };
  }

  private call<T>(operation: ElectorOperation, fn: (signal: AbortSignal) => Promise<T>, outer: AbortSignal): Promise<T> {
    const timeoutMs = this.timing.timeoutMs;
    return callWithTimeout(fn, this.timers, timeoutMs, outer, () => new LeaseTimeoutError(operation, timeoutMs));
  }

  // ---- bookkeeping ------------------------------------------------------------------------

  /**
   * A version of the Lease from the store's watch. Observed like a read, so a follower times a dead
   * leader's Lease out a lease duration after that leader's last renew arrived, not after the read that
   * found it up to a retry period later (kill → Lease 16.5 s at lease 15 s, 100,000 schedules, without
   * it). Safe on the same two rules: the moment is on our clock and no earlier than the write itself,
   * and our next write still carries the version we read. A deletion is left to the next read.
   */
  private observeWatched(lease: VersionedLease | null): void {
    if (this.state === 'Stopped' || lease === null) return;
    this.observe(lease);
  }

  /** Remembers a record when it changed, timing it on OUR monotonic clock, and reports new holders. */
  private observe(lease: VersionedLease): void {
    if (!leaseChanged(this.observed, lease)) return;
    this.observed = lease;
    this.observedMonoMs = this.mono.nowMs();
    const holder = lease.record.holderIdentity;
    if (holder === this.reportedLeader) return;
    if (this.reportedLeader !== null) this.stats.leaderChangesObserved++;
    this.reportedLeader = holder;
    const onNewLeader = this.hooks.onNewLeader;
    if (onNewLeader !== undefined) this.callHook(() => onNewLeader(holder));
  }

  private setState(state: ElectorState): void {
    if (state === this.state) return;
    this.state = state;
    const onStateChange = this.hooks.onStateChange;
    if (onStateChange !== undefined) this.callHook(() => onStateChange(state, this.getLeader()));
  }

  private reportStoreError(error: unknown, operation: ElectorOperation): void {
    this.stats.storeErrors++;
    if (error instanceof LeaseTimeoutError) this.stats.storeTimeouts++;
    const onError = this.hooks.onError;
    if (onError !== undefined) this.callHook(() => onError(error, operation));
  }

  /** A throwing hook must not break the election loop. */
  private callHook(hook: (() => void) | undefined): void {
    if (hook === undefined) return;
    try {
      hook();
    } catch (error) {
      if (this.hooks.onError === undefined) return;
      try {
        this.hooks.onError(error, 'callback');
      } catch {
        // Nothing sensible left to report to.
      }
    }
  }
}
