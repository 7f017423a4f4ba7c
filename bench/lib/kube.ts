// The bench's own API access: the operator's KubeRest (one keep-alive dispatcher, JSON bodies), so
// bulk set-up and the floor scenario use exactly the client path the operator uses for Jobs.
import { readKubeconfig } from '../../src/kube/connection.js';
import pLimit from 'p-limit';

import { ApiError } from '../../src/kube/api-error.js';
import { KubeRest } from '../../src/kube/rest.js';
import { sleep } from './progress.js';

/** Label the bench puts on CronJob Job templates, so the watcher can find the upstream Jobs. */
export const CRONJOB_LABEL = 'bench.secondcron.io/cronjob';
/** Set by the upstream CronJob controller on every Job it creates (RFC 3339, whole seconds). */
export const CRONJOB_SLOT_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

export function restFor(kubeconfigPath: string): KubeRest {
  const connection = readKubeconfig(kubeconfigPath);
  if (!connection) throw new Error(`${kubeconfigPath}: the test control plane's kubeconfig should be a plain token one`);
  return new KubeRest(connection);
}

/** Creates the namespace and waits for its default ServiceAccount (pods need it to be admitted). */
export async function createNamespace(rest: KubeRest, name: string): Promise<void> {
  await rest.request({ verb: 'create', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await rest.request({ verb: 'get', path: `/api/v1/namespaces/${name}/serviceaccounts/default` });
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404) || Date.now() > deadline) throw err;
    }
    await sleep(100);
  }
}

/**
 * The Job template of every schedule in the bench. By default `completions: 0`: a real Job
 * (validated, stored, watched) that the Job controller marks Complete at once without starting a
 * pod, so the whole Job life cycle runs (create → Complete → history limit → delete) while the
 * 2-core machine does not spend itself on pod churn (scheduler, kwok) outside the trigger path.
 * (Suspended Jobs would never finish: status.active would grow every second and skew the operator's
 * status work.) BENCH_PODS=1 runs one real (kwok) pod per Job instead.
 */
export function jobTemplateSpec(pods: boolean): Record<string, unknown> {
  return {
    ...(pods ? {} : { completions: 0 }),
    backoffLimit: 0,
    template: {
      spec: { restartPolicy: 'Never', containers: [{ name: 'work', image: 'busybox:1.36', command: ['true'] }] },
    },
  };
}

export function scjManifest(namespace: string, name: string, spec: Record<string, unknown>, pods: boolean): Record<string, unknown> {
  return {
    apiVersion: 'secondcron.io/v1',
    kind: 'SecondCronJob',
    metadata: { name, namespace },
    spec: { jobTemplate: { spec: jobTemplateSpec(pods) }, ...spec },
  };
}

/** An upstream CronJob whose Jobs carry CRONJOB_LABEL=<name> (schedule in UTC). */
export function cronJobManifest(namespace: string, name: string, schedule: string, pods: boolean): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace },
    spec: {
      schedule,
      timeZone: 'Etc/UTC',
      jobTemplate: { metadata: { labels: { [CRONJOB_LABEL]: name } }, spec: jobTemplateSpec(pods) },
    },
  };
}

export const scjPath = (ns: string): string => `/apis/secondcron.io/v1/namespaces/${ns}/secondcronjobs`;
export const cronJobPath = (ns: string): string => `/apis/batch/v1/namespaces/${ns}/cronjobs`;

export interface BulkResult {
  created: number;
  ms: number;
  perSecond: number;
}

/** POSTs every body to `path` with `concurrency` requests in flight; throws on the first failure. */
export async function bulkCreate(rest: KubeRest, path: string, bodies: unknown[], concurrency: number): Promise<BulkResult> {
  const limit = pLimit(concurrency);
  const t0 = performance.now();
  await Promise.all(bodies.map((body) => limit(() => rest.request({ verb: 'create', path, body, timeoutMs: 60_000 }))));
  const ms = performance.now() - t0;
  return { created: bodies.length, ms: Math.round(ms), perSecond: Math.round((bodies.length / ms) * 1000) };
}

/** gitVersion of the API server, e.g. v1.36.3. */
export async function serverVersion(rest: KubeRest): Promise<string> {
  const v = await rest.request<{ gitVersion?: string }>({ verb: 'get', path: '/version' });
  return v.gitVersion ?? 'unknown';
}
