// Issue 36: like-for-like ratios from interleaved rounds. On two shared cores one steady run against
// one floor run read anywhere from 0.97× to 2.11× with nothing changed: the machine drifts between
// the two measurements. Here the operator (runTicking: N schedules × intervalSeconds 1) and the floor
// client (the same N creates released together on each whole second, from its own process) take
// turns, ABAB… with the order swapped every round, and each round gives its own ratio of two
// measurements minutes apart at most. The figure is the median of the per-round ratios, with every
// round's and the spread. Both end to end (slot → watch) and the client's share alone (slot → the
// API server received the create, from its audit log), for the steady shape and the light one.
import type { Cluster } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import { parseConfig } from '../../src/config.js';
import { drainJobs } from '../lib/job-drain.js';
import { restFor } from '../lib/kube.js';
import { say } from '../lib/progress.js';
import { type RoundRatios, type Summary, round2, roundRatios } from '../lib/stats.js';
import type { LatencySplit } from '../lib/latency-split.js';
import { floorBatchPhase, floorOwner } from './floor.js';
import { runTicking } from './steady.js';

/** One side of one round: end to end, and the share before the API server had the create. */
export interface RoundSide {
  slot_to_watch: Pick<Summary, 'p50_ms' | 'p99_ms' | 'max_ms'>;
  client_share: LatencySplit['client'] | null;
  jobs: number;
  /** Operator side only: slots without a Job, and slots with more than one. */
  missed?: number;
  duplicates?: number;
}

export interface Round {
  round: number;
  first: 'floor' | 'operator';
  floor: RoundSide;
  operator: RoundSide;
}

export interface ShapeRounds {
  schedules: number;
  seconds: number;
  rounds: Round[];
  /** Operator / floor client, per round and the median of the rounds. */
  ratio: { p50: RoundRatios; p99: RoundRatios; client_share_p50: RoundRatios; client_share_p99: RoundRatios };
  missed: number;
  duplicates: number;
}

export interface RoundsResult {
  rounds: number;
  steady: ShapeRounds;
  light: ShapeRounds;
}

const FLOOR_NS = 'bench-rounds-floor';
const CONCURRENCY = parseConfig([], {}).maxConcurrentCreates;

const ratio = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a === null || a === undefined || b === null || b === undefined || b <= 0 ? null : round2(a / b);

export async function runRounds(
  cluster: Cluster,
  opts: { rounds: number; seconds: number; steadySchedules: number; lightSchedules: number; pods: boolean },
): Promise<RoundsResult> {
  const rest = restFor(cluster.kubeconfigPath);
  const owner = await floorOwner(rest, FLOOR_NS, opts.pods);
  const watcher = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: FLOOR_NS }).start();
  let slot = 2_000_000_000;
  try {
    const shape = async (name: 'steady' | 'light', schedules: number): Promise<ShapeRounds> => {
      const rounds: Round[] = [];
      for (let r = 0; r < opts.rounds; r++) {
        const first = r % 2 === 0 ? 'floor' : 'operator';
        const floorSide = async (): Promise<RoundSide> => {
          say(`rounds: ${name} round ${r + 1}/${opts.rounds}: the floor client, ${opts.seconds} batches of ${schedules}`);
          const f = await floorBatchPhase(
            watcher,
            { kubeconfigPath: cluster.kubeconfigPath, namespace: FLOOR_NS, scj: owner, firstSlotS: slot, batches: opts.seconds, size: schedules, concurrency: CONCURRENCY },
            cluster.auditLogPath,
          );
          slot += (opts.seconds + 1) * schedules; // and the client's warm-up batch
          await drainJobs(cluster.kubeconfigPath, FLOOR_NS, 180_000);
          const s = f.b.secondToWatch;
          return { slot_to_watch: { p50_ms: s.p50_ms, p99_ms: s.p99_ms, max_ms: s.max_ms }, client_share: f.b.split?.client ?? null, jobs: s.count };
        };
        const operatorSide = async (): Promise<RoundSide> => {
          const ns = `bench-rounds-${name}-${r + 1}`;
          const t = await runTicking(cluster, `rounds: ${name} round ${r + 1}/${opts.rounds}`, ns, { schedules, seconds: opts.seconds, pods: opts.pods });
          await drainJobs(cluster.kubeconfigPath, ns, 180_000);
          const o = t.result;
          return { slot_to_watch: { p50_ms: o.p50_ms, p99_ms: o.p99_ms, max_ms: o.max_ms }, client_share: o.split?.client ?? null, jobs: o.seen, missed: o.missed, duplicates: o.duplicates };
        };
        let floor: RoundSide;
        let operator: RoundSide;
        if (first === 'floor') {
          floor = await floorSide();
          operator = await operatorSide();
        } else {
          operator = await operatorSide();
          floor = await floorSide();
        }
        const round: Round = { round: r + 1, first, floor, operator };
        rounds.push(round);
        say(
          `rounds: ${name} round ${r + 1}: operator / floor p50 ×${ratio(round.operator.slot_to_watch.p50_ms, round.floor.slot_to_watch.p50_ms)} p99 ×${ratio(round.operator.slot_to_watch.p99_ms, round.floor.slot_to_watch.p99_ms)}; client share p99 ${round.operator.client_share?.p99_ms ?? 'n/a'} vs ${round.floor.client_share?.p99_ms ?? 'n/a'} ms`,
        );
      }
      const per = (pick: (s: RoundSide) => number | null | undefined): RoundRatios => roundRatios(rounds.map((x) => ratio(pick(x.operator), pick(x.floor))));
      return {
        schedules,
        seconds: opts.seconds,
        rounds,
        ratio: {
          p50: per((s) => s.slot_to_watch.p50_ms),
          p99: per((s) => s.slot_to_watch.p99_ms),
          client_share_p50: per((s) => s.client_share?.p50_ms),
          client_share_p99: per((s) => s.client_share?.p99_ms),
        },
        missed: rounds.reduce((n, x) => n + (x.operator.missed ?? 0), 0),
        duplicates: rounds.reduce((n, x) => n + (x.operator.duplicates ?? 0), 0),
      };
    };
    const steady = await shape('steady', opts.steadySchedules);
    const light = await shape('light', opts.lightSchedules);
    for (const [name, s] of [['steady', steady], ['light', light]] as const) {
      say(`rounds: ${name} operator / floor, median of ${opts.rounds} rounds: p50 ×${s.ratio.p50.median} (${s.ratio.p50.rounds.join(', ')}), p99 ×${s.ratio.p99.median} (${s.ratio.p99.rounds.join(', ')}); client share p99 ×${s.ratio.client_share_p99.median} (${s.ratio.client_share_p99.rounds.join(', ')}); missed ${s.missed}, duplicates ${s.duplicates}`);
    }
    return { rounds: opts.rounds, steady, light };
  } finally {
    watcher.stop();
  }
}
