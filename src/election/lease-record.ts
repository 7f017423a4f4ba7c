/**
 * The part of a coordination.k8s.io/v1 Lease that leader election reads and writes,
 * free of any Kubernetes client types so the elector stays a pure state machine.
 */
export interface LeaseRecord {
  /** '' means nobody holds the lease (after a release): any candidate may take it at once. */
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** Wall-clock epoch ms, informational only: the elector never compares remote timestamps with its clock. */
  acquireTimeMs: number | null;
  renewTimeMs: number | null;
  leaseTransitions: number;
}

/** A record plus the resourceVersion it was read at, for optimistic concurrency on update. */
export interface VersionedLease {
  record: LeaseRecord;
  resourceVersion: string;
}

/**
 * True when two observations differ in anything that proves the holder (or someone) wrote
 * the lease. resourceVersion alone would do on a real API server; the record fields are
 * compared too so that stores without meaningful versions still behave.
 */
export function leaseChanged(a: VersionedLease | null, b: VersionedLease): boolean {
  if (a === null) return true;
  return (
    a.resourceVersion !== b.resourceVersion ||
    a.record.holderIdentity !== b.record.holderIdentity ||
    a.record.renewTimeMs !== b.record.renewTimeMs ||
    a.record.leaseDurationSeconds !== b.record.leaseDurationSeconds ||
    a.record.leaseTransitions !== b.record.leaseTransitions
  );
}
