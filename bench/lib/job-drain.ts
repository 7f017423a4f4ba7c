// Waits until the Job controller has finished the Jobs of a namespace (Complete or Failed), so that
// one scenario's backlog in kube-controller-manager (whose client is rate-limited) does not spill
// its API load into the next scenario.
import { KubeConfig, Watch } from '@kubernetes/client-node';

import { say, waitUntil } from './progress.js';

interface WatchedJob {
  metadata: { uid: string };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

export async function drainJobs(kubeconfigPath: string, namespace: string, timeoutMs: number): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const seen = new Set<string>();
  const finished = new Set<string>();
  const t0 = performance.now();
  // No resourceVersion: every existing Job arrives first as ADDED, then its updates.
  const abort = await new Watch(kc).watch(
    `/apis/batch/v1/namespaces/${namespace}/jobs`,
    {},
    (type: string, job: WatchedJob) => {
      const uid = job.metadata.uid;
      if (type === 'DELETED') {
        seen.delete(uid);
        finished.delete(uid);
        return;
      }
      seen.add(uid);
      if (job.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')) finished.add(uid);
    },
    () => undefined,
  );
  try {
    const drained = await waitUntil(() => seen.size > 0 && finished.size >= seen.size, timeoutMs, 250);
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    say(drained ? `  the Job controller finished the ${seen.size} Jobs of ${namespace} after ${s} s` : `  WARNING: ${seen.size - finished.size} of ${seen.size} Jobs in ${namespace} still unfinished after ${s} s`);
  } finally {
    abort.abort();
  }
}
