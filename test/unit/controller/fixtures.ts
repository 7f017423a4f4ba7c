// Small builders for SecondCronJobs and Jobs as the API server would return them.
import { ANNOTATION_SCHEDULED_AT, type Job, type SecondCronJob, type SecondCronJobSpec } from '../../../src/api/resources.js';

export function scj(spec: Partial<SecondCronJobSpec> = {}, meta: Partial<SecondCronJob['metadata']> = {}): SecondCronJob {
  return {
    apiVersion: 'secondcron.io/v1',
    kind: 'SecondCronJob',
    metadata: { name: 'hb', namespace: 'ns', uid: 'uid-1', resourceVersion: '1', generation: 1, creationTimestamp: '2026-12-02T10:00:00Z', ...meta },
    spec: { intervalSeconds: 1, jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } } }, ...spec },
  };
}

export function job(name: string, opts: { slot: string; outcome?: 'Complete' | 'Failed'; completion?: string; ownerUid?: string; deleting?: boolean }): Job {
  const conditions = opts.outcome ? [{ type: opts.outcome, status: 'True', lastTransitionTime: opts.completion ?? opts.slot }] : [];
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      resourceVersion: '1',
      creationTimestamp: opts.slot,
      labels: { 'secondcron.io/secondcronjob': 'hb' },
      annotations: { [ANNOTATION_SCHEDULED_AT]: opts.slot },
      ownerReferences: [{ apiVersion: 'secondcron.io/v1', kind: 'SecondCronJob', name: 'hb', uid: opts.ownerUid ?? 'uid-1', controller: true }],
      ...(opts.deleting ? { deletionTimestamp: opts.slot } : {}),
    },
    status: { conditions, ...(opts.outcome === 'Complete' ? { completionTime: opts.completion ?? opts.slot } : {}) },
  };
}
