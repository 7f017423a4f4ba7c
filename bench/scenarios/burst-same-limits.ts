// Issue 36: the burst like for like. In the main rounds the operator runs at its own defaults (--qps
// 200 --burst 400) and kube-controller-manager at the test cluster's 100 / 200, so "ours last / theirs
// last" compared different client limits. Here our side runs again, ROUNDS new rounds, with the
// operator at kube-controller-manager's limits of this cluster: the ratio of the two medians is the
// one where both clients may send as much. (The row at each one's upstream defaults is the CronJob
// side at --kube-api-qps 20 --kube-api-burst 30 against our main rounds: burst-default-qps.ts.)
import type { Cluster } from '../../test/cluster/cluster.js';
import { KCM_TEST_LIMITS } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import { drainJobs } from '../lib/job-drain.js';
import { createNamespace, restFor } from '../lib/kube.js';
import { finishOperator, startLeadingOperator } from '../lib/operator.js';
import { say } from '../lib/progress.js';
import { round2 } from '../lib/stats.js';
import { type BurstSide } from './burst-side.js';
import { measureOurs } from './burst-ours.js';

export interface OursAtSameLimits {
  qps: number;
  burst: number;
  /** The earliest the last create can be sent under these limits' token bucket. */
  token_bucket_floor_ms: number;
  /** The median round's (by its last Job). */
  last_ms: number | null;
  p50_ms: number | null;
  /** Every round, in order. */
  rounds: BurstSide[];
  timed_out: boolean;
  /** The CronJob side's median last (kcm at the same limits, the main rounds) / ours here; null when a round timed out. */
  ratio_last: number | null;
}

export interface OursAtSameLimitsFailed {
  error: string;
  last_ms: null;
  ratio_last: null;
}

const NS = 'bench-burst-secondcron-same-limits';

export async function oursAtKcmLimits(
  cluster: Cluster,
  opts: { schedules: number; pods: boolean; leadMs: number; rounds: number; cronJobLastMs: number | null },
): Promise<OursAtSameLimits | OursAtSameLimitsFailed> {
  const { qps, burst } = KCM_TEST_LIMITS;
  const rest = restFor(cluster.kubeconfigPath);
  try {
    await createNamespace(rest, NS);
    say(`burst: our side again with the operator at kube-controller-manager's limits (--qps ${qps} --burst ${burst}), ${opts.rounds} rounds`);
    const op = await startLeadingOperator(cluster, NS, ['--qps', String(qps), '--burst', String(burst)]);
    const ours = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: NS }).start();
    try {
      const rounds: { side: BurstSide; done: boolean }[] = [];
      for (let round = 1; round <= opts.rounds; round++) {
        if (round > 1) await drainJobs(cluster.kubeconfigPath, NS, 120_000);
        const m = await measureOurs(rest, op, ours, NS, opts.schedules, opts.pods, opts.leadMs, `same-r${round}`);
        rounds.push({ side: m.side.side, done: m.done });
      }
      const median = [...rounds].sort((a, b) => (a.side.last_ms ?? Infinity) - (b.side.last_ms ?? Infinity))[Math.floor((rounds.length - 1) / 2)] as { side: BurstSide };
      const timedOut = rounds.some((r) => !r.done);
      const last = median.side.last_ms;
      const ratio = !timedOut && last && opts.cronJobLastMs ? round2(opts.cronJobLastMs / last) : null;
      say(`burst: ours at qps ${qps} / burst ${burst}: last ${last} ms (rounds ${rounds.map((r) => r.side.last_ms).join(', ')}); CronJob last / ours ×${ratio ?? 'n/a'}`);
      return {
        qps,
        burst,
        token_bucket_floor_ms: Math.round((Math.max(0, opts.schedules - burst) / qps) * 1000),
        last_ms: last,
        p50_ms: median.side.p50_ms,
        rounds: rounds.map((r) => r.side),
        timed_out: timedOut,
        ratio_last: ratio,
      };
    } finally {
      ours.stop();
      await finishOperator(op);
      await drainJobs(cluster.kubeconfigPath, NS, 120_000);
    }
  } catch (err) {
    say(`burst: our side at kube-controller-manager's limits FAILED: ${err instanceof Error ? err.message : String(err)}`);
    return { error: err instanceof Error ? err.message : String(err), last_ms: null, ratio_last: null };
  }
}
