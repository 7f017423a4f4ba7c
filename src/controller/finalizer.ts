// Clean deletion: while our finalizer is on a SecondCronJob, its Jobs are deleted before it goes.
// Both finalizer edits carry the resourceVersion read, so a concurrent change makes them fail (409)
// and the next reconcile retries on fresh data instead of overwriting someone else's finalizer.
import { isNotFound } from '../kube/api-error.js';
import type { KubeRest } from '../kube/rest.js';
import type { ListResponse } from '../kube/types.js';
import { FINALIZER, type Job, LABEL_OWNER, type SecondCronJob, collectionPath, jobsPath } from './api.js';
import { isOwnedBy } from './job-state.js';

export function hasFinalizer(scj: SecondCronJob): boolean {
  return scj.metadata.finalizers?.includes(FINALIZER) ?? false;
}

export async function addFinalizer(rest: KubeRest, scj: SecondCronJob): Promise<void> {
  await setFinalizers(rest, scj, [...(scj.metadata.finalizers ?? []), FINALIZER]);
}

export async function removeFinalizer(rest: KubeRest, scj: SecondCronJob): Promise<void> {
  await setFinalizers(rest, scj, (scj.metadata.finalizers ?? []).filter((f) => f !== FINALIZER));
}

async function setFinalizers(rest: KubeRest, scj: SecondCronJob, finalizers: string[]): Promise<void> {
  await rest.request({
    verb: 'patch',
    path: `${collectionPath(scj.metadata.namespace)}/${scj.metadata.name}`,
    body: { metadata: { resourceVersion: scj.metadata.resourceVersion, finalizers } },
    patchType: 'merge',
    timeoutMs: 10_000,
    metadataOnly: true,
  });
}

/** Lists from the API, not the cache: deletion must not miss a Job the cache has not seen yet. */
export async function listOwnedJobs(rest: KubeRest, scj: SecondCronJob): Promise<Job[]> {
  const list = await rest.request<ListResponse<Job>>({
    verb: 'list',
    path: jobsPath(scj.metadata.namespace),
    query: { labelSelector: `${LABEL_OWNER}=${scj.metadata.name}` },
    timeoutMs: 30_000,
  });
  return list.items.filter((j) => isOwnedBy(j, scj));
}

/** Background propagation: the Job goes now, the garbage collector removes its Pods after. */
export async function deleteJob(rest: KubeRest, job: Job): Promise<void> {
  try {
    await rest.request({
      verb: 'delete',
      path: `${jobsPath(job.metadata.namespace)}/${job.metadata.name}`,
      body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: job.metadata.uid } },
      timeoutMs: 10_000,
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}
