import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { MonotonicClock, WallClock } from '../../../src/clock/clock.js';
import { FakeClock } from '../../../src/clock/fake-clock.js';
import { LeaderElector } from '../../../src/election/elector.js';
import type { ElectorState, LeaderElectorOptions } from '../../../src/election/elector.js';
import { MemoryLeaseStore } from './memory-lease-store.js';
import type { FaultyClient } from './memory-lease-store.js';

export interface ElectorEvent {
  atMs: number;
  kind: 'started' | 'stopped' | 'newLeader' | 'state' | 'error';
  detail: string;
}

export interface Replica {
  name: string;
  elector: LeaderElector;
  client: FaultyClient;
  events: ElectorEvent[];
  /** Events of one kind, in order. */
  of(kind: ElectorEvent['kind']): ElectorEvent[];
}

export interface ReplicaOverrides extends Partial<Omit<LeaderElectorOptions, 'store' | 'hooks'>> {
  /** Runs inside onStoppedLeading, to check what is visible at that moment. */
  onStoppedLeading?: () => void;
  /** The replica's store watches the Lease (as KubeLeaseStore does); without it, it only reads. */
  watchLease?: boolean;
}

/** A fake clock, one shared in-memory Lease and any number of electors (replicas) on them. */
export class Cluster {
  readonly clock = new FakeClock({ monoStartMs: 1_000, wallStartMs: Date.UTC(2026, 11, 2, 10, 0, 0) });
  readonly store = new MemoryLeaseStore(this.clock.timers, () => this.clock.mono.nowMs());

  replica(name: string, overrides: ReplicaOverrides = {}): Replica {
    const events: ElectorEvent[] = [];
    const client = this.store.client(name, { watch: overrides.watchLease ?? false });
    const mono: MonotonicClock = overrides.monotonic ?? this.clock.mono;
    const wall: WallClock = overrides.wall ?? this.clock.wall;
    const at = (): number => this.clock.mono.nowMs();
    const { onStoppedLeading, watchLease: _watch, ...options } = overrides;
    const elector = new LeaderElector({
      identity: name,
      timers: this.clock.timers,
      random: () => 0,
      ...options,
      monotonic: mono,
      wall,
      store: client,
      hooks: {
        onStartedLeading: () => events.push({ atMs: at(), kind: 'started', detail: '' }),
        onStoppedLeading: () => {
          events.push({ atMs: at(), kind: 'stopped', detail: '' });
          onStoppedLeading?.();
        },
        onNewLeader: (id) => events.push({ atMs: at(), kind: 'newLeader', detail: id }),
        onStateChange: (state: ElectorState, leader) =>
          events.push({ atMs: at(), kind: 'state', detail: `${state}:${leader}` }),
        onError: (error, op) => events.push({ atMs: at(), kind: 'error', detail: `${op}:${String(error)}` }),
      },
    });
    return { name, elector, client, events, of: (kind) => events.filter((e) => e.kind === kind) };
  }

  now(): number {
    return this.clock.mono.nowMs();
  }

  /** Replica 'a' starts on an absent Lease and takes it; 'b' starts 1 ms later and follows it. */
  async leaderAndFollower(): Promise<{ a: Replica; b: Replica }> {
    const a = this.replica('a');
    const b = this.replica('b');
    a.elector.start();
    await this.run(1);
    b.elector.start();
    return { a, b };
  }

  /**
   * Advances fake time by `ms`, timer by timer, letting the promise chains each timer starts
   * (store calls, elector continuations) finish before the next timer runs.
   * `check` (if given) runs after every step, to assert invariants at every instant that matters.
   */
  async run(ms: number, check?: () => void): Promise<void> {
    const target = this.now() + ms;
    await settle();
    check?.();
    for (;;) {
      const next = this.clock.pendingTimers()[0];
      if (next === undefined || next.fireAtMs > target) break;
      this.clock.advanceTo(next.fireAtMs);
      await settle();
      check?.();
    }
    this.clock.advanceTo(target);
    await settle();
    check?.();
  }

  /** Runs until `predicate` holds (checked after each timer), at most `limitMs`; returns the time it took. */
  async runUntil(predicate: () => boolean, limitMs: number): Promise<number> {
    const start = this.now();
    const target = start + limitMs;
    await settle();
    while (!predicate()) {
      const next = this.clock.pendingTimers()[0];
      if (next === undefined || next.fireAtMs > target) throw new Error(`condition not reached within ${limitMs} ms`);
      this.clock.advanceTo(next.fireAtMs);
      await settle();
    }
    return this.now() - start;
  }
}

/** Lets every pending microtask (and promise chain) run; fake timers do not move. */
export async function settle(): Promise<void> {
  await nextMacrotask();
  await nextMacrotask();
}
