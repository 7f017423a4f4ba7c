// Summary statistics over latency samples (milliseconds). Nearest-rank percentiles: every figure
// reported is a sample that was actually observed, never an interpolation between two.

export interface Summary {
  count: number;
  min_ms: number | null;
  p50_ms: number | null;
  p90_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  mean_ms: number | null;
}

export function sorted(values: Iterable<number>): Float64Array {
  const out = Float64Array.from(values);
  out.sort();
  return out;
}

/** Nearest-rank percentile of ascending `s` (p in 0..100); null when there are no samples. */
export function percentile(s: Float64Array, p: number): number | null {
  if (s.length === 0) return null;
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))] as number;
}

/** Rounded to 0.01 ms: sub-10 µs digits are noise in every figure here. */
export function round2(v: number | null): number | null {
  return v === null ? null : Math.round(v * 100) / 100;
}

export function summarize(values: Iterable<number>): Summary {
  const s = sorted(values);
  let sum = 0;
  for (const v of s) sum += v;
  return {
    count: s.length,
    min_ms: round2(s.length ? (s[0] as number) : null),
    p50_ms: round2(percentile(s, 50)),
    p90_ms: round2(percentile(s, 90)),
    p99_ms: round2(percentile(s, 99)),
    max_ms: round2(s.length ? (s[s.length - 1] as number) : null),
    mean_ms: round2(s.length ? sum / s.length : null),
  };
}

/** Points of the empirical CDF, thinned to at most `maxPoints` (for the chart). */
export function cdfPoints(values: Iterable<number>, maxPoints = 400): Array<[number, number]> {
  const s = sorted(values);
  if (s.length === 0) return [];
  const step = Math.max(1, Math.floor(s.length / maxPoints));
  const out: Array<[number, number]> = [];
  for (let i = 0; i < s.length; i += step) out.push([s[i] as number, (i + 1) / s.length]);
  const last = s.length - 1;
  if (out[out.length - 1]?.[1] !== 1) out.push([s[last] as number, 1]);
  return out;
}

/**
 * Least-squares slope of y over x with a step for a two-valued `role` (0 or 1) fitted beside it:
 * y = a + b·x + c·role, b returned. A replica's heap is higher while it leads; with a handover every
 * few minutes a plain slope would read that square wave as growth (or hide growth under it).
 * Null with fewer than 4 points or no spread in x; without both roles it is the plain slope.
 */
export function slopeBesideRole(points: [number, number, 0 | 1][]): number | null {
  if (points.length < 4) return null;
  const n = points.length;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const mr = points.reduce((s, p) => s + p[2], 0) / n;
  let sxx = 0;
  let sxr = 0;
  let srr = 0;
  let sxy = 0;
  let sry = 0;
  for (const [x, y, r] of points) {
    const dx = x - mx;
    const dy = y - my;
    const dr = r - mr;
    sxx += dx * dx;
    sxr += dx * dr;
    srr += dr * dr;
    sxy += dx * dy;
    sry += dr * dy;
  }
  if (srr === 0) return sxx === 0 ? null : sxy / sxx;
  const det = sxx * srr - sxr * sxr;
  return det === 0 ? null : (srr * sxy - sxr * sry) / det;
}

/** The median (the mean of the middle two for an even count); null when there are none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** A figure measured once per round, with the median of the rounds and its spread (issues 34 and 36: never a ratio from one round). */
export interface RoundRatios {
  /** Per round, in order (null where a round had no figure). */
  rounds: (number | null)[];
  median: number | null;
  min: number | null;
  max: number | null;
}

export function roundRatios(perRound: (number | null)[]): RoundRatios {
  const known = perRound.filter((v): v is number => v !== null);
  return { rounds: perRound, median: round2(median(known)), min: known.length ? Math.min(...known) : null, max: known.length ? Math.max(...known) : null };
}
