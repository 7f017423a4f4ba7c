// What the caches keep of each object. managedFields and kubectl's last-applied-configuration
// annotation often outweigh the rest of a SecondCronJob; a Job's pod template is never read.
// Dropping them on ingest is what makes 10,000 schedules fit in a small pod.
import { ANNOTATION_SCHEDULED_AT, type Job, type SecondCronJob } from './api.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

export function slimSecondCronJob(scj: SecondCronJob): SecondCronJob {
  const { managedFields: _managed, ...metadata } = scj.metadata as SecondCronJob['metadata'] & { managedFields?: unknown };
  if (metadata.annotations?.[LAST_APPLIED] !== undefined) {
    const { [LAST_APPLIED]: _applied, ...annotations } = metadata.annotations;
    metadata.annotations = annotations;
  }
  return { ...scj, metadata };
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
