// Clean deletion: while our finalizer is on a SecondCronJob, its Jobs are deleted before it goes.
// Both finalizer edits are JSON patches that first test the uid and the finalizer list we read, so a
// concurrent finalizer change makes them fail (422) and the caller retries on fresh data instead of
// overwriting someone else's finalizer. They do not carry the resourceVersion: a status patch landing
// first (every new resource gets both at once) would otherwise fail them with 409 — 8,667 times for
// 10,000 new resources in the benchmark.
import { isNotFound } from '../kube/api-error.js';
import type { RestClient } from '../kube/rest.js';
import type { ListResponse } from '../kube/types.js';
import { FINALIZER, type Job, LABEL_OWNER, type SecondCronJob, collectionPath, jobsPath } from '../api/resources.js';
import { isOwnedBy } from './job-state.js';

export function hasFinalizer(scj: SecondCronJob): boolean {
  return scj.metadata.finalizers?.includes(FINALIZER) ?? false;
}

export async function addFinalizer(rest: RestClient, scj: SecondCronJob): Promise<void> {
  await setFinalizers(rest, scj, [...(scj.metadata.finalizers ?? []), FINALIZER]);
}

export async function removeFinalizer(rest: RestClient, scj: SecondCronJob): Promise<void> {
  await setFinalizers(rest, scj, (scj.metadata.finalizers ?? []).filter((f) => f !== FINALIZER));
}

async function setFinalizers(rest: RestClient, scj: SecondCronJob, finalizers: string[]): Promise<void> {
  await rest.request({
    verb: 'patch',
    path: `${collectionPath(scj.metadata.namespace)}/${scj.metadata.name}`,
    body: [
      { op: 'test', path: '/metadata/uid', value: scj.metadata.uid },
      // null matches an absent list (the API server drops empty ones).
      { op: 'test', path: '/metadata/finalizers', value: scj.metadata.finalizers?.length ? scj.metadata.finalizers : null },
      { op: 'add', path: '/metadata/finalizers', value: finalizers },
    ],
    patchType: 'json',
    timeoutMs: 10_000,
    discardResponse: true,
    purpose: 'finalizer',
  });
}

/** Lists from the API, not the cache: deletion must not miss a Job the cache has not seen yet. */
export async function listOwnedJobs(rest: RestClient, scj: SecondCronJob): Promise<Job[]> {
  const list = await rest.request<ListResponse<Job>>({
    verb: 'list',
    path: jobsPath(scj.metadata.namespace),
    query: { labelSelector: `${LABEL_OWNER}=${scj.metadata.name}` },
    timeoutMs: 30_000,
  });
  return list.items.filter((j) => isOwnedBy(j, scj));
}

/**
 * Background propagation: the Job goes now, the garbage collector removes its Pods after. The uid
 * precondition is left out for a Job known only by name (created, but not yet read back).
 */
export async function deleteJob(rest: RestClient, job: Job): Promise<'deleted' | 'gone'> {
  try {
    await rest.request({
      verb: 'delete',
      path: `${jobsPath(job.metadata.namespace)}/${job.metadata.name}`,
      body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', ...(job.metadata.uid ? { preconditions: { uid: job.metadata.uid } } : {}) },
      timeoutMs: 10_000,
      discardResponse: true,
      purpose: 'job_delete',
    });
    return 'deleted';
  } catch (err) {
    if (!isNotFound(err)) throw err;
    return 'gone';
  }
}
