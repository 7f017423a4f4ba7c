// Reads the operator's /metrics (Prometheus text format, as prom-client writes it: no timestamps)
// into a lookup by series. Enough for gauges, counters and histogram buckets; not a general parser.

export class PromSamples {
  private readonly series: Map<string, number>;

  constructor(text: string | Map<string, number>) {
    if (typeof text !== 'string') {
      this.series = text;
      return;
    }
    this.series = new Map();
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const at = line.lastIndexOf(' ');
      if (at <= 0) continue;
      this.series.set(line.slice(0, at), Number(line.slice(at + 1)));
    }
  }

  /** What counters and histograms gained between `before` and this scrape (gauges: the change). */
  since(before: PromSamples): PromSamples {
    const out = new Map<string, number>();
    for (const [key, value] of this.series) out.set(key, value - (before.series.get(key) ?? 0));
    return new PromSamples(out);
  }

  /** One series: get('secondcron_leader') or get('secondcron_schedules', 'state="active"'). */
  get(name: string, labels = ''): number | undefined {
    return this.series.get(labels ? `${name}{${labels}}` : name);
  }

  /** Sum over every series of `name` whose labels contain all of `mustContain`. */
  sum(name: string, ...mustContain: string[]): number {
    let total = 0;
    for (const [key, value] of this.series) {
      const brace = key.indexOf('{');
      const base = brace < 0 ? key : key.slice(0, brace);
      if (base !== name) continue;
      if (mustContain.every((m) => key.includes(m))) total += value;
    }
    return total;
  }

  /** Sums of `name` per value of `label` (series without that label are left out). */
  sumByLabel(name: string, label: string): Map<string, number> {
    const out = new Map<string, number>();
    const pattern = new RegExp(`[{,]${label}="([^"]*)"`);
    for (const [key, value] of this.series) {
      if (!key.startsWith(`${name}{`)) continue;
      const v = pattern.exec(key)?.[1];
      if (v !== undefined) out.set(v, (out.get(v) ?? 0) + value);
    }
    return out;
  }

  /**
   * A quantile estimated from a histogram's cumulative buckets (upper bound of the bucket holding
   * the rank, as Prometheus' histogram_quantile does without interpolation), in the metric's unit.
   */
  histogramQuantile(name: string, q: number): number | undefined {
    const buckets: Array<[number, number]> = [];
    for (const [key, value] of this.series) {
      if (!key.startsWith(`${name}_bucket{`)) continue;
      const le = /le="([^"]+)"/.exec(key)?.[1];
      if (le !== undefined) buckets.push([le === '+Inf' ? Infinity : Number(le), value]);
    }
    buckets.sort((a, b) => a[0] - b[0]);
    const total = buckets[buckets.length - 1]?.[1] ?? 0;
    if (total === 0) return undefined;
    const rank = q * total;
    return buckets.find(([, count]) => count >= rank)?.[0];
  }
}
