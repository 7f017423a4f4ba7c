// Scenario light: few schedules (10 × 1 s), where the API server is not the limit. Measured exactly
// as steady (runTicking) and judged against the floor's sequential create → watch of the same run:
// what one create costs when nothing queues.
import type { Cluster } from '../../test/cluster/cluster.js';
import type { FloorResult } from './floor.js';
import { type Ratios, type TickingResult, ratios, runTicking } from './steady.js';

export interface LightResult extends TickingResult {
  /** The floor's sequential create → watch arrival of the same run, ms. */
  floor_p50_ms: number | null;
  floor_p99_ms: number | null;
  p50_ratio: number | null;
  p99_ratio: number | null;
  /** Against the floor's batches of light's size (its schedules released together, the server alone): no target, the explanation. */
  vs_floor_batches: Ratios;
}

export const LIGHT_NAMESPACE = 'bench-light';

export async function runLight(
  cluster: Cluster,
  opts: { schedules: number; seconds: number; pods: boolean },
  floor: FloorResult | null,
): Promise<{ result: LightResult; samples: number[] }> {
  const { result, samples } = await runTicking(cluster, 'light', LIGHT_NAMESPACE, opts);
  const sequential = floor?.sequential.createToWatch;
  return {
    result: {
      ...result,
      floor_p50_ms: sequential?.p50_ms ?? null,
      floor_p99_ms: sequential?.p99_ms ?? null,
      ...ratios(result, sequential),
      vs_floor_batches: ratios(result, floor?.light_batches.secondToWatch),
    },
    samples,
  };
}
