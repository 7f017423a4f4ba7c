import { ApiException, Observable, V1MicroTime } from '@kubernetes/client-node';
import type {
  ConfigurationOptions,
  CoordinationV1Api,
  ObservableMiddleware,
  V1Lease,
  V1LeaseSpec,
} from '@kubernetes/client-node';
import type { LeaseRecord, VersionedLease } from './lease-record.js';
import { LeaseConflictError } from './lease-store.js';
import type { LeaseStore } from './lease-store.js';

/** The subset of the generated client we call; lets the adapter be exercised with a stand-in. */
export type LeaseApi = Pick<CoordinationV1Api, 'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'>;

export interface KubeLeaseStoreOptions {
  api: LeaseApi;
  namespace: string;
  name: string;
}

/**
 * LeaseStore on a coordination.k8s.io/v1 Lease through @kubernetes/client-node 2.x.
 *
 * Per-call cancellation: the generated methods take a second `ConfigurationOptions` argument;
 * we append a middleware whose `pre` hook puts the elector's AbortSignal on the RequestContext,
 * which the undici-based HTTP library hands to fetch(), so a timed-out request is really torn
 * down (headers and body). Authentication runs before middleware and cannot be aborted, so we
 * also stop waiting as soon as the signal fires.
 */
export class KubeLeaseStore implements LeaseStore {
  private readonly api: LeaseApi;
  private readonly namespace: string;
  private readonly name: string;
  /**
   * The last Lease object read or written. PUT replaces the whole object, so updates start from
   * it to keep labels/annotations others put on the Lease (as client-go's LeaseLock does).
   */
  private last: V1Lease | null = null;

  constructor(options: KubeLeaseStoreOptions) {
    this.api = options.api;
    this.namespace = options.namespace;
    this.name = options.name;
  }

  async get(signal: AbortSignal): Promise<VersionedLease | null> {
    try {
      const lease = await untilAborted(
        this.api.readNamespacedLease({ name: this.name, namespace: this.namespace }, abortOptions(signal)),
        signal,
      );
      return this.remember(lease);
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) {
        this.last = null;
        return null;
      }
      throw error;
    }
  }

  async create(record: LeaseRecord, signal: AbortSignal): Promise<VersionedLease> {
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: toSpec(record),
    };
    try {
      const lease = await untilAborted(
        this.api.createNamespacedLease({ namespace: this.namespace, body }, abortOptions(signal)),
        signal,
      );
      return this.remember(lease);
    } catch (error) {
      throw mapConflict(error);
    }
  }

  async update(record: LeaseRecord, resourceVersion: string, signal: AbortSignal): Promise<VersionedLease> {
    const base = this.last?.metadata?.resourceVersion === resourceVersion ? this.last : null;
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      // The resourceVersion makes the API server reject the PUT with 409 if anyone wrote since.
      metadata: { ...(base?.metadata ?? {}), name: this.name, namespace: this.namespace, resourceVersion },
      spec: toSpec(record),
    };
    try {
      const lease = await untilAborted(
        this.api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body }, abortOptions(signal)),
        signal,
      );
      return this.remember(lease);
    } catch (error) {
      throw mapConflict(error);
    }
  }

  private remember(lease: V1Lease): VersionedLease {
    this.last = lease;
    return fromLease(lease);
  }
}

/** 409 is Conflict on PUT (stale resourceVersion) and AlreadyExists on POST: both mean "lost the race". */
function mapConflict(error: unknown): unknown {
  if (error instanceof ApiException && error.code === 409) {
    return new LeaseConflictError(`lease write conflict (HTTP 409): ${error.message}`, { cause: error });
  }
  return error;
}

/**
 * Lease times are metav1.MicroTime, which the API server parses with exactly six fractional
 * digits: a plain Date would serialize as `.123Z` and be rejected with 400. V1MicroTime's
 * toISOString pads to `.123000Z`.
 */
function toSpec(record: LeaseRecord): V1LeaseSpec {
  const spec: V1LeaseSpec = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
  };
  if (record.acquireTimeMs !== null) spec.acquireTime = new V1MicroTime(record.acquireTimeMs);
  if (record.renewTimeMs !== null) spec.renewTime = new V1MicroTime(record.renewTimeMs);
  return spec;
}

export function fromLease(lease: V1Lease): VersionedLease {
  const spec = lease.spec ?? {};
  return {
    record: {
      holderIdentity: spec.holderIdentity ?? '',
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
      acquireTimeMs: toEpochMs(spec.acquireTime),
      renewTimeMs: toEpochMs(spec.renewTime),
      leaseTransitions: spec.leaseTransitions ?? 0,
    },
    resourceVersion: lease.metadata?.resourceVersion ?? '',
  };
}

/**
 * The model types these fields as V1MicroTime (a Date), but 2.0.1's deserializer does not know
 * that type and leaves the wire string in place; accept both.
 */
function toEpochMs(value: unknown): number | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime();
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}

/** Per-call options that attach `signal` to the request; 'append' keeps the client's own middleware. */
export function abortOptions(signal: AbortSignal): ConfigurationOptions<ObservableMiddleware> {
  const middleware: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(signal);
      return new Observable(Promise.resolve(context));
    },
    post: (response) => new Observable(Promise.resolve(response)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('lease request aborted');
}
