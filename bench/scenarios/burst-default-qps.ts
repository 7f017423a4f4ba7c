// The CronJob side of the burst once more, with kube-controller-manager at its upstream default
// client limits (--kube-api-qps 20 --kube-api-burst 30) instead of the test cluster's 100/200: what
// a user of a stock control plane gets. The whole controller-manager restarts with the defaults (the
// Job controller too, as upstream), and is restored to the test limits afterwards, also on failure.
//
// Separate namespace and a new minute slot; the first burst's Jobs are finished first so its backlog
// does not count against the defaults.
import type { Cluster } from '../../test/cluster/cluster.js';
import { KCM_DEFAULT_LIMITS } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import { drainJobs } from '../lib/job-drain.js';
import { CRONJOB_LABEL, CRONJOB_SLOT_ANNOTATION, bulkCreate, createNamespace, cronJobManifest, cronJobPath, restFor } from '../lib/kube.js';
import { say } from '../lib/progress.js';
import { round2 } from '../lib/stats.js';
import { type BurstSide, measureUpstream, names } from './burst-side.js';

/** The median round's (by its last Job), with every round. */
export interface CronJobAtDefaults extends BurstSide {
  kube_api_qps: number;
  kube_api_burst: number;
  rounds: BurstSide[];
  timed_out: boolean;
  /** The median round's CronJob last / secondcron's median last of the same bench run (both at their defaults); null when a round timed out. */
  ratio_last: number | null;
  /** kube-controller-manager stopped → healthy again with the defaults, ms. */
  restart_ms: number;
}

/** The fixed names kept (null) when this part failed; the burst's other figures still stand. */
export interface CronJobAtDefaultsFailed {
  error: string;
  last_ms: null;
  ratio_last: null;
}

const NS = 'bench-burst-cronjob-default-qps';

export async function cronJobAtDefaultQps(
  cluster: Cluster,
  opts: { schedules: number; pods: boolean; leadMs: number; rounds: number; drainFirst: string; oursLastMs: number | null },
): Promise<{ result: CronJobAtDefaults | CronJobAtDefaultsFailed; latencies: number[] }> {
  const n = opts.schedules;
  const limits = KCM_DEFAULT_LIMITS;
  const rest = restFor(cluster.kubeconfigPath);
  let watcher: JobWatcher | undefined;
  try {
    await drainJobs(cluster.kubeconfigPath, opts.drainFirst, 120_000);
    await createNamespace(rest, NS);
    say(`burst: restarting kube-controller-manager with its upstream defaults --kube-api-qps ${limits.qps} --kube-api-burst ${limits.burst}`);
    const t0 = performance.now();
    await cluster.restartControllerManager(limits);
    const restartMs = Math.round(performance.now() - t0);
    const w = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: NS, ownerLabel: CRONJOB_LABEL, slotAnnotation: CRONJOB_SLOT_ANNOTATION }).start();
    watcher = w;
    const rounds: { side: BurstSide; latencies: number[]; done: boolean }[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      if (round > 1) await drainJobs(cluster.kubeconfigPath, NS, 120_000);
      const slot = Math.ceil((Date.now() + opts.leadMs) / 60_000) * 60_000;
      const at = new Date(slot);
      const schedule = `${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
      const b = await bulkCreate(rest, cronJobPath(NS), names(`cron-r${round}`, n).map((name) => cronJobManifest(NS, name, schedule, opts.pods)), 16);
      say(`burst: round ${round} of ${opts.rounds}: ${n} CronJobs "${schedule}" created in ${b.ms} ms (slot ${at.toISOString()}, in ${((slot - Date.now()) / 1000).toFixed(1)} s), kube-controller-manager at qps ${limits.qps} / burst ${limits.burst}`);
      rounds.push(await measureUpstream(w, n, slot, `CronJob (kcm ${limits.qps}/${limits.burst})`));
    }
    const c = [...rounds].sort((a, b) => (a.side.last_ms ?? Infinity) - (b.side.last_ms ?? Infinity))[Math.floor((rounds.length - 1) / 2)] as { side: BurstSide; latencies: number[] };
    const timedOut = rounds.some((r) => !r.done);
    const ratio = !timedOut && opts.oursLastMs && c.side.last_ms ? round2(c.side.last_ms / opts.oursLastMs) : null;
    return {
      result: { ...c.side, kube_api_qps: limits.qps, kube_api_burst: limits.burst, rounds: rounds.map((r) => r.side), timed_out: timedOut, ratio_last: ratio, restart_ms: restartMs },
      latencies: c.latencies,
    };
  } catch (err) {
    say(`burst: the CronJob run at kube-controller-manager's defaults FAILED: ${err instanceof Error ? err.message : String(err)}`);
    return { result: { error: err instanceof Error ? err.message : String(err), last_ms: null, ratio_last: null }, latencies: [] };
  } finally {
    watcher?.stop();
    say('burst: kube-controller-manager back to the test limits');
    await cluster.restartControllerManager();
  }
}
