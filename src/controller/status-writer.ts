// Writes a SecondCronJob's status through the status subresource as a merge patch. The controller's
// reconcile decides when (coalesced per resource, skipped when nothing changed); this only writes.
import type { RestClient } from '../kube/rest.js';
import { type SecondCronJob, type SecondCronJobStatus, collectionPath } from '../api/resources.js';

export async function writeStatus(rest: RestClient, scj: SecondCronJob, status: SecondCronJobStatus, timeoutMs = 10_000): Promise<void> {
  // Merge patch: keys we no longer want must be sent as null to be removed.
  const patch: Record<string, unknown> = { ...status };
  for (const k of Object.keys(scj.status ?? {})) if (!(k in patch)) patch[k] = null;
  const { namespace, name } = scj.metadata;
  await rest.request({
    verb: 'patch',
    path: `${collectionPath(namespace)}/${name}/status`,
    body: { status: patch },
    patchType: 'merge',
    timeoutMs,
    discardResponse: true,
    purpose: 'status',
  });
}
