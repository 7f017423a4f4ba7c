// The few API calls the plugin makes, with kubectl's wording when they fail.
import { ApiError } from '../kube/api-error.js';
import type { KubeRest } from '../kube/rest.js';
import { type SecondCronJob, collectionPath } from '../controller/api.js';
import { PluginError, describeApiError } from './errors.js';

/** The field manager our writes are recorded under (managedFields, server-side apply). */
export const FIELD_MANAGER = 'kubectl-secondcron';

export function scjPath(namespace: string, name: string): string {
  return `${collectionPath(namespace)}/${encodeURIComponent(name)}`;
}

/** Runs one API call; an API error becomes a PluginError worded like kubectl's. */
export async function call<T>(rest: KubeRest, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asPluginError(err, rest);
  }
}

export function asPluginError(err: unknown, rest: KubeRest): unknown {
  return err instanceof ApiError ? new PluginError(describeApiError(err, rest.server)) : err;
}

export function getSecondCronJob(rest: KubeRest, namespace: string, name: string): Promise<SecondCronJob> {
  return call(rest, () => rest.request<SecondCronJob>({ verb: 'get', path: scjPath(namespace, name) }));
}

/** Server-side apply (create or update) as FIELD_MANAGER; unknown fields are errors, not dropped. */
export function serverSideApply<T>(rest: KubeRest, path: string, body: unknown): Promise<T> {
  return rest.request<T>({ verb: 'patch', patchType: 'apply', path, body, query: { fieldManager: FIELD_MANAGER, fieldValidation: 'Strict' } });
}
