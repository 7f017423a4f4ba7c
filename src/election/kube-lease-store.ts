/**
 * LeaseStore on a coordination.k8s.io/v1 Lease, through the operator's REST client: Lease calls share
 * its keep-alive connection (a renew must not pay a TLS handshake on a loaded node), carry the
 * elector's AbortSignal, and are counted in secondcron_api_requests_total like every other call.
 * Its watch is a reflector on that one Lease (a field selector on its name, which RBAC grants by name).
 */
import type { MonotonicClock, Timers } from '../clock/clock.js';
import type { Logger } from '../log.js';
import { ApiError } from '../kube/api-error.js';
import { Reflector } from '../kube/reflector.js';
import type { RestClient } from '../kube/rest.js';
import type { ObjectMeta } from '../kube/types.js';
import type { LeaseRecord, VersionedLease } from './lease-record.js';
import { LeaseConflictError, type LeaseStore } from './lease-store.js';

export interface KubeLeaseStoreOptions {
  rest: RestClient;
  namespace: string;
  name: string;
  /** What the watch's reflector needs. */
  log: Logger;
  mono: MonotonicClock;
  timers: Timers;
  random: () => number;
}

interface LeaseObject {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export class KubeLeaseStore implements LeaseStore {
  private readonly path: string;
  /** The last Lease read or written: PUT replaces the object, so keep labels/annotations others set. */
  private last: LeaseObject | null = null;

  constructor(private readonly opts: KubeLeaseStoreOptions) {
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${opts.namespace}/leases`;
  }

  async get(signal: AbortSignal): Promise<VersionedLease | null> {
    try {
      return this.remember(await this.opts.rest.request<LeaseObject>({ verb: 'get', path: `${this.path}/${this.opts.name}`, signal, purpose: 'lease' }));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        this.last = null;
        return null;
      }
      throw err;
    }
  }

  async create(record: LeaseRecord, signal: AbortSignal): Promise<VersionedLease> {
    const body: LeaseObject = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.opts.name, namespace: this.opts.namespace }, spec: toSpec(record) };
    return this.write({ verb: 'create', path: this.path, body, signal });
  }

  async update(record: LeaseRecord, resourceVersion: string, signal: AbortSignal): Promise<VersionedLease> {
    const base = this.last?.metadata.resourceVersion === resourceVersion ? this.last.metadata : {};
    // The resourceVersion makes the API server reject the PUT with 409 if anyone wrote since our read.
    const metadata = { ...base, name: this.opts.name, namespace: this.opts.namespace, resourceVersion };
    const body: LeaseObject = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec: toSpec(record) };
    return this.write({ verb: 'update', path: `${this.path}/${this.opts.name}`, body, signal });
  }

  private async write(req: { verb: 'create' | 'update'; path: string; body: LeaseObject; signal: AbortSignal }): Promise<VersionedLease> {
    try {
      return this.remember(await this.opts.rest.request<LeaseObject>({ ...req, purpose: 'lease' }));
    } catch (err) {
      // 409 is Conflict on PUT (stale resourceVersion) and AlreadyExists on POST: both mean "lost the race".
      if (err instanceof ApiError && err.status === 409) throw new LeaseConflictError(`lease write conflict: ${err.message}`, { cause: err });
      throw err;
    }
  }

  watch(onChange: (lease: VersionedLease | null) => void): () => void {
    const { rest, namespace, name, log, mono, timers, random } = this.opts;
    const reflector = new Reflector<LeaseObject & { metadata: ObjectMeta }>({ name: `lease ${namespace}/${name}`, rest, path: this.path, fieldSelector: `metadata.name=${name}`, log, mono, timers, random });
    reflector.addEventHandler({
      added: (lease) => onChange(versioned(lease)),
      updated: (_old, lease) => onChange(versioned(lease)),
      deleted: () => onChange(null),
    });
    reflector.start();
    return () => reflector.stop();
  }

  private remember(lease: LeaseObject): VersionedLease {
    this.last = lease;
    return versioned(lease);
  }
}

function versioned(lease: LeaseObject): VersionedLease {
  const spec = lease.spec ?? {};
  return {
    record: {
      holderIdentity: spec.holderIdentity ?? '',
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
      acquireTimeMs: parseTime(spec.acquireTime),
      renewTimeMs: parseTime(spec.renewTime),
      leaseTransitions: spec.leaseTransitions ?? 0,
    },
    resourceVersion: lease.metadata.resourceVersion ?? '',
  };
}

function toSpec(record: LeaseRecord): LeaseObject['spec'] {
  const spec: LeaseObject['spec'] = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
  };
  if (record.acquireTimeMs !== null) spec.acquireTime = microTime(record.acquireTimeMs);
  if (record.renewTimeMs !== null) spec.renewTime = microTime(record.renewTimeMs);
  return spec;
}

/** metav1.MicroTime: the API server insists on exactly six fractional digits (".123000Z"). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

function parseTime(value: string | undefined): number | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}
