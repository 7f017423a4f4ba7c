// Scenario light: few schedules (10 × 1 s), where the API server is not the limit. Measured exactly
// as steady (runTicking) and judged against the floor's sequential create → watch of the same run:
// what one create costs when nothing queues.
import type { Cluster } from '../../test/cluster/cluster.js';
import type { FloorResult } from './floor.js';
import { type TickingResult, ratio, runTicking } from './steady.js';

export interface LightResult extends TickingResult {
  /** The floor's sequential create → watch arrival of the same run, ms. */
  floor_p50_ms: number | null;
  floor_p99_ms: number | null;
  p50_ratio: number | null;
  p99_ratio: number | null;
  /** Against the floor's batches of light's size (its schedules released together, the server alone): no target, the explanation. */
  vs_floor_batches: { p50_ratio: number | null; p99_ratio: number | null };
}

export const LIGHT_NAMESPACE = 'bench-light';

export async function runLight(
  cluster: Cluster,
  opts: { schedules: number; seconds: number; pods: boolean },
  floor: FloorResult | null,
): Promise<{ result: LightResult; samples: number[] }> {
  const { result, samples } = await runTicking(cluster, 'light', LIGHT_NAMESPACE, opts);
  const floorP50 = floor?.sequential.createToWatch.p50_ms ?? null;
  const floorP99 = floor?.sequential.createToWatch.p99_ms ?? null;
  const batches = floor?.light_batches.secondToWatch;
  return {
    result: {
      ...result,
      floor_p50_ms: floorP50,
      floor_p99_ms: floorP99,
      p50_ratio: ratio(result.p50_ms, floorP50),
      p99_ratio: ratio(result.p99_ms, floorP99),
      vs_floor_batches: { p50_ratio: ratio(result.p50_ms, batches?.p50_ms ?? null), p99_ratio: ratio(result.p99_ms, batches?.p99_ms ?? null) },
    },
    samples,
  };
}
