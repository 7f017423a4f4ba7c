// The pure election API. The Kubernetes adapter (KubeLeaseStore) is deliberately not
// re-exported here: import it from './kube-lease-store.js' in the composition root, so that
// importing the elector never loads @kubernetes/client-node.
export { LeaderElector } from './elector.js';
export type {
  ElectorCounters,
  ElectorHooks,
  ElectorOperation,
  ElectorState,
  LeaderElectorOptions,
} from './elector.js';
export {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  JITTER_FACTOR,
  defaultCallTimeoutMs,
  resolveElectionTiming,
} from './elector-config.js';
export type { ElectionTiming, ElectionTimingOptions } from './elector-config.js';
export { makeIdentity } from './identity.js';
export { leaseChanged } from './lease-record.js';
export type { LeaseRecord, VersionedLease } from './lease-record.js';
export { LeaseConflictError, LeaseTimeoutError } from './lease-store.js';
export type { LeaseStore } from './lease-store.js';
