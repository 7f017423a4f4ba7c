// What the caches keep of each object. managedFields and kubectl's last-applied-configuration
// annotation often outweigh the rest of a SecondCronJob; a Job's pod template is never read.
// Dropping them on ingest is what makes 10,000 schedules fit in a small pod.
import { ANNOTATION_SCHEDULED_AT, type Job, type SecondCronJob } from '../api/resources.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * `cached`: the version the cache holds. The same object at the same generation has the same spec
 * (the API server bumps metadata.generation on every spec change of a resource with a status
 * subresource), so the cached spec is kept and the new copy dies young: at 10,000 schedules each
 * start-up status and finalizer write otherwise left a whole spec behind in V8's old space.
 */
export function slimSecondCronJob(scj: SecondCronJob, cached?: SecondCronJob): SecondCronJob {
  const { managedFields: _managed, ...metadata } = scj.metadata as SecondCronJob['metadata'] & { managedFields?: unknown };
  if (metadata.annotations?.[LAST_APPLIED] !== undefined) {
    const { [LAST_APPLIED]: _applied, ...annotations } = metadata.annotations;
    metadata.annotations = annotations;
  }
  const sameSpec = cached !== undefined && metadata.generation !== undefined && cached.metadata.uid === metadata.uid && cached.metadata.generation === metadata.generation;
  return { ...scj, metadata, spec: sameSpec ? cached.spec : scj.spec };
}

export function slimJob(job: Job): Job {
  const m = job.metadata;
  const scheduledAt = m.annotations?.[ANNOTATION_SCHEDULED_AT];
  return {
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
      ...(m.labels ? { labels: m.labels } : {}),
      ...(scheduledAt ? { annotations: { [ANNOTATION_SCHEDULED_AT]: scheduledAt } } : {}),
      ...(m.ownerReferences ? { ownerReferences: m.ownerReferences } : {}),
    },
    ...(job.status ? { status: job.status } : {}),
  };
}
