import type { Timers } from '../../../src/clock/clock.js';
import type { LeaseRecord, VersionedLease } from '../../../src/election/lease-record.js';
import { LeaseConflictError } from '../../../src/election/lease-store.js';
import type { LeaseStore } from '../../../src/election/lease-store.js';

export type StoreOp = 'get' | 'create' | 'update';

/**
 * What a client's next call does instead of (or before) reaching the shared state:
 * - error: rejects at once;
 * - delay: reaches the state after `ms` on the fake timers;
 * - hang: never answers, but rejects when its signal aborts (a well-behaved HTTP client);
 * - hangIgnoringSignal: never answers at all (a client that ignores cancellation).
 */
export type Fault =
  | { kind: 'error'; error?: Error }
  | { kind: 'delay'; ms: number }
  | { kind: 'hang' }
  | { kind: 'hangIgnoringSignal' };

export interface CallLogEntry {
  client: string;
  op: StoreOp;
  /** Monotonic ms when the call was made. */
  atMs: number;
  result: 'ok' | 'conflict' | 'error' | 'pending' | 'aborted';
  /** resourceVersion sent with an update. */
  sentVersion?: string;
  /** Monotonic ms when the call's signal aborted, if it did. */
  abortedAtMs?: number;
}

/**
 * One Lease shared by several clients, each with its own fault injection (to model one
 * replica partitioned from the API server while the others are fine). Versions bump on every
 * write and an update with a stale version fails with LeaseConflictError, like the API server.
 */
export class MemoryLeaseStore {
  readonly log: CallLogEntry[] = [];
  private stored: VersionedLease | null = null;
  private version = 0;
  /** While frozen: the calls parked at the server, in arrival order (see freeze()). */
  private parked: Array<() => void> | null = null;
  /** The clients' watches: each new version reaches them in a microtask after the write that made it, at the same instant. */
  private readonly watchers = new Set<(lease: VersionedLease) => void>();

  constructor(
    private readonly timers: Timers,
    private readonly now: () => number,
  ) {}

  /** The Lease as stored right now (a copy), or null. */
  current(): VersionedLease | null {
    return this.stored === null ? null : clone(this.stored);
  }

  /** Writes the Lease directly, as kubectl or another program would; returns the new version. */
  put(record: LeaseRecord): string {
    this.version++;
    this.stored = { record: { ...record }, resourceVersion: String(this.version) };
    const written = this.stored;
    for (const watcher of this.watchers) queueMicrotask(() => watcher(clone(written)));
    return this.stored.resourceVersion;
  }

  /** How many watches are open. */
  watchCount(): number {
    return this.watchers.size;
  }

  /** @internal used by WatchingClient */
  addWatcher(watcher: (lease: VersionedLease) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /**
   * The API server stops (SIGSTOP): from now on every call from every client hangs at the server,
   * after its client's own fault. A call whose signal aborts meanwhile rejects (the client gave
   * up); the others stay parked until thaw().
   */
  freeze(): void {
    this.parked ??= [];
  }

  /** The API server resumes (SIGCONT): the parked calls reach the state in arrival order, new calls go straight through. */
  thaw(): void {
    const parked = this.parked ?? [];
    this.parked = null;
    for (const resume of parked) resume();
  }

  writes(client?: string): CallLogEntry[] {
    return this.log.filter((e) => e.op !== 'get' && (client === undefined || e.client === client));
  }

  client(name: string, options: { watch?: boolean } = {}): FaultyClient {
    return options.watch ? new WatchingClient(name, this) : new FaultyClient(name, this);
  }

  /** @internal used by FaultyClient */
  async perform(
    client: string,
    op: StoreOp,
    signal: AbortSignal,
    fault: Fault | undefined,
    apply: () => VersionedLease | null,
    sentVersion?: string,
  ): Promise<VersionedLease | null> {
    const entry: CallLogEntry = { client, op, atMs: this.now(), result: 'pending' };
    if (sentVersion !== undefined) entry.sentVersion = sentVersion;
    this.log.push(entry);
    signal.addEventListener('abort', () => (entry.abortedAtMs = this.now()), { once: true });

    if (fault?.kind === 'error') {
      entry.result = 'error';
      throw fault.error ?? new Error(`injected ${op} failure`);
    }
    if (fault?.kind === 'hangIgnoringSignal') return new Promise<never>(() => undefined);
    if (fault?.kind === 'hang') {
      return new Promise<never>((_resolve, reject) => {
        signal.addEventListener('abort', () => {
          entry.result = 'aborted';
          reject(new Error(`${op} aborted`));
        });
      });
    }
    if (fault?.kind === 'delay') {
      await new Promise<void>((resolve, reject) => {
        const handle = this.timers.set(fault.ms, resolve);
        signal.addEventListener('abort', () => {
          this.timers.clear(handle);
          entry.result = 'aborted';
          reject(new Error(`${op} aborted`));
        });
      });
    }
    const parked = this.parked;
    if (parked !== null) {
      await new Promise<void>((resolve, reject) => {
        const resume = (): void => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = (): void => {
          const at = parked.indexOf(resume);
          if (at >= 0) parked.splice(at, 1);
          entry.result = 'aborted';
          reject(new Error(`${op} aborted`));
        };
        if (signal.aborted) {
          onAbort();
          return;
        }
        parked.push(resume);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    }
    try {
      const result = apply();
      entry.result = 'ok';
      return result;
    } catch (error) {
      entry.result = error instanceof LeaseConflictError ? 'conflict' : 'error';
      throw error;
    }
  }

  /** @internal */
  applyGet(): VersionedLease | null {
    return this.current();
  }

  /** @internal */
  applyCreate(record: LeaseRecord): VersionedLease {
    if (this.stored !== null) throw new LeaseConflictError('lease already exists');
    this.put(record);
    return this.current() as VersionedLease;
  }

  /** @internal */
  applyUpdate(record: LeaseRecord, resourceVersion: string): VersionedLease {
    if (this.stored === null) throw new Error('lease not found');
    if (this.stored.resourceVersion !== resourceVersion) {
      throw new LeaseConflictError(`stale resourceVersion ${resourceVersion} (current ${this.stored.resourceVersion})`);
    }
    this.put(record);
    return this.current() as VersionedLease;
  }
}

/** One replica's connection to the shared Lease. */
export class FaultyClient implements LeaseStore {
  /** Applies to every call until changed; `nextFaults` take precedence, one per call. */
  fault: Fault | undefined;
  readonly nextFaults: Fault[] = [];

  constructor(
    readonly name: string,
    protected readonly shared: MemoryLeaseStore,
  ) {}

  private takeFault(): Fault | undefined {
    return this.nextFaults.shift() ?? this.fault;
  }

  get(signal: AbortSignal): Promise<VersionedLease | null> {
    return this.shared.perform(this.name, 'get', signal, this.takeFault(), () => this.shared.applyGet());
  }

  async create(record: LeaseRecord, signal: AbortSignal): Promise<VersionedLease> {
    const result = await this.shared.perform(this.name, 'create', signal, this.takeFault(), () =>
      this.shared.applyCreate(record),
    );
    return result as VersionedLease;
  }

  async update(record: LeaseRecord, resourceVersion: string, signal: AbortSignal): Promise<VersionedLease> {
    const result = await this.shared.perform(
      this.name,
      'update',
      signal,
      this.takeFault(),
      () => this.shared.applyUpdate(record, resourceVersion),
      resourceVersion,
    );
    return result as VersionedLease;
  }
}

/** A client whose store also watches the Lease, as KubeLeaseStore does. */
export class WatchingClient extends FaultyClient {
  watch(onChange: (lease: VersionedLease | null) => void): () => void {
    const stop = this.shared.addWatcher(onChange);
    return () => void stop();
  }
}

function clone(lease: VersionedLease): VersionedLease {
  return { record: { ...lease.record }, resourceVersion: lease.resourceVersion };
}
