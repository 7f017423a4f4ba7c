// The few API calls the plugin makes, with kubectl's wording when they fail.
import { ApiError } from '../kube/api-error.js';
import type { KubeRest } from '../kube/rest.js';
import { type SecondCronJob, collectionPath } from '../api/resources.js';
import type { DryRun, Scope } from './args.js';
import type { PluginContext } from './context.js';
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

/** The named SecondCronJobs of the namespace, else all of it, else (-A) all of every namespace, by namespace and name. */
export async function secondCronJobsIn(scope: Scope, ctx: PluginContext): Promise<SecondCronJob[]> {
  const { rest, namespace } = await ctx.target();
  if ('names' in scope && scope.names.length > 0) return Promise.all(scope.names.map((n) => getSecondCronJob(rest, namespace, n)));
  const all = 'allNamespaces' in scope && scope.allNamespaces;
  const list = await call(rest, () => rest.request<{ items: SecondCronJob[] }>({ verb: 'list', path: collectionPath(all ? undefined : namespace) }));
  return list.items.sort((a, b) => (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || a.metadata.name.localeCompare(b.metadata.name));
}

/** Server-side apply (create or update) as FIELD_MANAGER; unknown fields are errors, not dropped. */
export function serverSideApply<T>(rest: KubeRest, path: string, body: unknown): Promise<T> {
  return rest.request<T>({ verb: 'patch', patchType: 'apply', path, body, query: { fieldManager: FIELD_MANAGER, fieldValidation: 'Strict' } });
}

/** The query of a write: our field manager, and dryRun=All for --dry-run=server. */
export function writeQuery(dryRun: DryRun): Record<string, string> {
  return dryRun === 'server' ? { fieldManager: FIELD_MANAGER, dryRun: 'All' } : { fieldManager: FIELD_MANAGER };
}

/** kubectl's suffix after "created", "patched", …: " (dry run)", " (server dry run)" or nothing. */
export function dryRunSuffix(dryRun: DryRun): string {
  return dryRun === 'client' ? ' (dry run)' : dryRun === 'server' ? ' (server dry run)' : '';
}
