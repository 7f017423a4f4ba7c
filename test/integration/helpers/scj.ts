// SecondCronJobs and their Jobs in the shared test cluster, through the real kubectl.
import { kubectl, kubectlOk } from './cluster-env.js';

export interface JobInfo {
  name: string;
  slotMs: number;
  createdMs: number;
  deleting: boolean;
  outcome: 'Complete' | 'Failed' | undefined;
  /** status.completionTime (whole seconds), once Complete. */
  completedMs: number | undefined;
}

export interface KubeJob {
  metadata: { name: string; creationTimestamp: string; deletionTimestamp?: string; annotations?: Record<string, string> };
  status?: { conditions?: { type: string; status: string }[]; completionTime?: string };
}

/** A minimal valid Job template; annotations on the pod drive kwok (run time, failure). */
export function podTemplate(podAnnotations: Record<string, string> = {}): Record<string, unknown> {
  return {
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { annotations: podAnnotations },
        spec: { restartPolicy: 'Never', containers: [{ name: 'work', image: 'busybox:1.36', command: ['true'] }] },
      },
    },
  };
}

export function scjManifest(namespace: string, name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'secondcron.io/v1',
    kind: 'SecondCronJob',
    metadata: { name, namespace },
    spec: { jobTemplate: podTemplate(), successfulJobsHistoryLimit: 100, failedJobsHistoryLimit: 100, ...spec },
  };
}

export async function applyScj(namespace: string, name: string, spec: Record<string, unknown>): Promise<{ createdMs: number; uid: string }> {
  const out = await kubectlOk(['apply', '-o', 'json', '-f', '-'], { input: JSON.stringify(scjManifest(namespace, name, spec)) });
  const obj = JSON.parse(out) as { metadata: { creationTimestamp: string; uid: string } };
  return { createdMs: Date.parse(obj.metadata.creationTimestamp), uid: obj.metadata.uid };
}

/** kubectl apply of raw YAML/JSON; returns exit code and stderr (for rejection tests). */
export async function tryApply(manifest: unknown): Promise<{ code: number; stderr: string }> {
  const res = await kubectl(['apply', '-f', '-'], { input: typeof manifest === 'string' ? manifest : JSON.stringify(manifest) });
  return { code: res.code, stderr: res.stderr };
}

export async function getScj<T = Record<string, unknown>>(namespace: string, name: string): Promise<T> {
  return JSON.parse(await kubectlOk(['get', 'secondcronjob', name, '-n', namespace, '-o', 'json'])) as T;
}

export async function patchScj(namespace: string, name: string, patch: Record<string, unknown>): Promise<void> {
  await kubectlOk(['patch', 'secondcronjob', name, '-n', namespace, '--type', 'merge', '-p', JSON.stringify(patch)]);
}

export async function listJobs(namespace: string, scjName: string): Promise<JobInfo[]> {
  const out = await kubectlOk(['get', 'jobs', '-n', namespace, '-l', `secondcron.io/secondcronjob=${scjName}`, '-o', 'json']);
  const items = (JSON.parse(out) as { items: KubeJob[] }).items;
  return items
    .map((j) => ({
      name: j.metadata.name,
      slotMs: Date.parse(j.metadata.annotations?.['secondcron.io/scheduled-at'] ?? ''),
      createdMs: Date.parse(j.metadata.creationTimestamp),
      deleting: j.metadata.deletionTimestamp !== undefined,
      completedMs: j.status?.completionTime ? Date.parse(j.status.completionTime) : undefined,
      outcome: (j.status?.conditions ?? []).find((c) => c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed'))?.type as JobInfo['outcome'],
    }))
    .sort((a, b) => a.slotMs - b.slotMs);
}

export interface KubeEvent {
  reason: string;
  type: string;
  message: string;
  involvedObject: { name: string; kind: string };
}

export async function events(namespace: string, objectName: string): Promise<KubeEvent[]> {
  const out = await kubectlOk(['get', 'events', '-n', namespace, '-o', 'json', '--field-selector', `involvedObject.name=${objectName}`]);
  return (JSON.parse(out) as { items: KubeEvent[] }).items;
}

/** Sleeps until the wall clock reaches `ms` (epoch). */
export async function sleepUntil(ms: number): Promise<void> {
  const wait = ms - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
