import type { LeaseRecord, VersionedLease } from './lease-record.js';

/**
 * Lease I/O as the elector needs it. Implementations must honour `signal`: the elector
 * aborts a call at its per-call timeout (and on stop), and stops waiting for it either way.
 *
 * Errors: throw LeaseConflictError when the write lost an optimistic-concurrency race
 * (HTTP 409 Conflict on update, AlreadyExists on create); any other Error means
 * "unknown outcome" (network, timeout, 5xx) and the elector simply tries again later.
 */
export interface LeaseStore {
  /** null when the Lease does not exist. */
  get(signal: AbortSignal): Promise<VersionedLease | null>;
  create(record: LeaseRecord, signal: AbortSignal): Promise<VersionedLease>;
  /** Replaces the record only if the stored resourceVersion still equals `resourceVersion`. */
  update(record: LeaseRecord, resourceVersion: string, signal: AbortSignal): Promise<VersionedLease>;
  /**
   * Optional: calls `onChange` with every new version of the Lease as it is written (null when it is
   * deleted), until the returned function is called. Nothing about safety rests on it: it only lets a
   * follower see a renew when it happens instead of at its next read.
   */
  watch?(onChange: (lease: VersionedLease | null) => void): () => void;
}

/** Someone else wrote the Lease between our read and our write. */
export class LeaseConflictError extends Error {
  constructor(message = 'lease was modified concurrently (conflict)', options?: ErrorOptions) {
    super(message, options);
    this.name = 'LeaseConflictError';
  }
}

/** The elector gave up on a store call after its per-call timeout. */
export class LeaseTimeoutError extends Error {
  constructor(operation: string, timeoutMs: number) {
    super(`lease ${operation} timed out after ${timeoutMs} ms`);
    this.name = 'LeaseTimeoutError';
  }
}
