// Waits until the Job controller has finished the Jobs of a namespace (Complete or Failed), so that
// one scenario's backlog in kube-controller-manager (whose client is rate-limited) does not spill
// its API load into the next scenario.
//
// A list first, then a watch from its resourceVersion: a watch without one replays the existing
// Jobs as ADDED events over time, and "every Job seen so far is finished" held after the first few
// hundred of them (a full floor run: "finished the 742 Jobs" of 3,050 after 0.3 s).
import { jobsPath } from '../../src/api/resources.js';
import { restFor } from './kube.js';
import { say, waitUntil } from './progress.js';

interface WatchedJob {
  metadata: { uid: string };
  status?: { conditions?: Array<{ type: string; status: string }> };
}

const finished = (job: WatchedJob): boolean => job.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') ?? false;

export async function drainJobs(kubeconfigPath: string, namespace: string, timeoutMs: number): Promise<void> {
  const rest = restFor(kubeconfigPath);
  const path = jobsPath(namespace);
  const t0 = performance.now();
  const list = await rest.request<{ metadata: { resourceVersion: string }; items: WatchedJob[] }>({ verb: 'list', path, timeoutMs: 60_000 });
  const unfinished = new Set(list.items.filter((j) => !finished(j)).map((j) => j.metadata.uid));
  let total = list.items.length;
  const abort = new AbortController();
  const watching = rest
    .watch(
      path,
      { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
      (type, obj) => {
        const job = obj as WatchedJob;
        if (type === 'BOOKMARK' || type === 'ERROR') return;
        if (type === 'ADDED') total++;
        if (type === 'DELETED' || finished(job)) unfinished.delete(job.metadata.uid);
        else unfinished.add(job.metadata.uid);
      },
      abort.signal,
    )
    .catch(() => undefined); // an ended or failed watch shows as a drain that timed out
  try {
    const drained = await waitUntil(() => unfinished.size === 0, timeoutMs, 250);
    const s = ((performance.now() - t0) / 1000).toFixed(1);
    // A backlog left behind would spill its API load into the next scenario: that scenario's figures
    // would not be its own, so the drain failing fails the scenario that left it.
    if (!drained) throw new Error(`${unfinished.size} of ${total} Jobs in ${namespace} still unfinished after ${s} s`);
    say(`  the Job controller finished the ${total} Jobs of ${namespace} after ${s} s`);
  } finally {
    abort.abort();
    await watching;
  }
}
