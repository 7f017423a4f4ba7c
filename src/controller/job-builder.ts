// Builds the Job for one slot. The name is a function of the slot, so a second create of the same
// slot (a retry, a restarted or deposed leader) fails with AlreadyExists: the exactly-once lock.
import { ANNOTATION_SCHEDULED_AT, API_VERSION, type JobManifest, KIND, LABEL_OWNER, type SecondCronJob } from './api.js';

export function jobName(scjName: string, slotMs: number): string {
  return `${scjName}-${Math.floor(slotMs / 1000)}`;
}

export function buildJob(scj: SecondCronJob, slotMs: number): JobManifest {
  const template = scj.spec.jobTemplate;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(scj.metadata.name, slotMs),
      namespace: scj.metadata.namespace,
      labels: { ...template.metadata?.labels, [LABEL_OWNER]: scj.metadata.name },
      annotations: { ...template.metadata?.annotations, [ANNOTATION_SCHEDULED_AT]: new Date(slotMs).toISOString() },
      ownerReferences: [
        { apiVersion: API_VERSION, kind: KIND, name: scj.metadata.name, uid: scj.metadata.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: structuredClone(template.spec),
  };
}
