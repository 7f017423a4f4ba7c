// bench/results/latency.svg, written by hand (no plotting dependency): the empirical CDF of every
// latency distribution of the run on one logarithmic time axis, so milliseconds (ours) and seconds
// (the CronJob controller) can be read side by side.
import { cdfPoints, percentile, sorted } from '../lib/stats.js';

export interface Series {
  label: string;
  samples: number[];
  color: string;
}

const W = 960;
const M = { left: 64, right: 24, top: 48 };
const PW = W - M.left - M.right;
const PH = 342;
/** Below the plot: axis labels (56 px), then one 16 px legend line per series. */
const height = (series: number): number => M.top + PH + 56 + 16 * series + 8;

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function msLabel(ms: number): string {
  if (ms >= 1000) return `${ms / 1000} s`;
  return `${ms} ms`;
}

export function latencySvg(title: string, subtitle: string, series: Series[]): string {
  const nonEmpty = series.filter((s) => s.samples.length > 0);
  const H = height(nonEmpty.length);
  const all = nonEmpty.flatMap((s) => s.samples).filter((v) => v > 0);
  const lo = Math.max(-2, Math.floor(Math.log10(all.length ? Math.min(...all) : 0.1)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(all.length ? Math.max(...all) : 1000)));
  const x = (ms: number): number => M.left + ((Math.log10(Math.max(ms, 10 ** lo)) - lo) / (hi - lo)) * PW;
  const y = (p: number): number => M.top + (1 - p) * PH;

  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(`<text x="${M.left}" y="20" font-size="15" font-weight="bold">${esc(title)}</text>`);
  parts.push(`<text x="${M.left}" y="37" fill="#555">${esc(subtitle)}</text>`);

  // Grid: decades (labelled) and 2×/5× minor lines; y every 10 % with 50 / 90 / 99 % emphasised.
  for (let d = lo; d <= hi; d++) {
    const ms = 10 ** d;
    parts.push(`<line x1="${x(ms).toFixed(1)}" y1="${M.top}" x2="${x(ms).toFixed(1)}" y2="${M.top + PH}" stroke="#ccc"/>`);
    parts.push(`<text x="${x(ms).toFixed(1)}" y="${M.top + PH + 16}" text-anchor="middle">${msLabel(Number(ms.toPrecision(1)))}</text>`);
    if (d < hi) {
      for (const m of [2, 5]) parts.push(`<line x1="${x(m * ms).toFixed(1)}" y1="${M.top}" x2="${x(m * ms).toFixed(1)}" y2="${M.top + PH}" stroke="#eee"/>`);
    }
  }
  for (let i = 0; i <= 10; i++) {
    const p = i / 10;
    parts.push(`<line x1="${M.left}" y1="${y(p).toFixed(1)}" x2="${M.left + PW}" y2="${y(p).toFixed(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${M.left - 6}" y="${(y(p) + 4).toFixed(1)}" text-anchor="end">${i * 10} %</text>`);
  }
  for (const p of [0.5, 0.99]) {
    parts.push(`<line x1="${M.left}" y1="${y(p).toFixed(1)}" x2="${M.left + PW}" y2="${y(p).toFixed(1)}" stroke="#999" stroke-dasharray="4 3"/>`);
    parts.push(`<text x="${M.left + PW - 4}" y="${(y(p) - 3).toFixed(1)}" text-anchor="end" fill="#777">p${p * 100}</text>`);
  }
  parts.push(`<rect x="${M.left}" y="${M.top}" width="${PW}" height="${PH}" fill="none" stroke="#333"/>`);
  parts.push(`<text x="${M.left + PW / 2}" y="${M.top + PH + 34}" text-anchor="middle">latency (log scale)</text>`);
  parts.push(`<text transform="translate(16 ${M.top + PH / 2}) rotate(-90)" text-anchor="middle">fraction of samples at or below</text>`);

  nonEmpty.forEach((s, i) => {
    const pts = cdfPoints(s.samples);
    // A step function: each sample raises the curve at its own value.
    let d = `M${x(pts[0]?.[0] ?? 1).toFixed(1)},${y(0).toFixed(1)}`;
    let prevP = 0;
    for (const [v, p] of pts) {
      d += ` L${x(v).toFixed(1)},${y(prevP).toFixed(1)} L${x(v).toFixed(1)},${y(p).toFixed(1)}`;
      prevP = p;
    }
    parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
    const sv = sorted(s.samples);
    const legendY = M.top + PH + 56 + i * 16;
    parts.push(`<line x1="${M.left}" y1="${legendY - 4}" x2="${M.left + 24}" y2="${legendY - 4}" stroke="${s.color}" stroke-width="3"/>`);
    const p50 = percentile(sv, 50) ?? 0;
    const p99 = percentile(sv, 99) ?? 0;
    parts.push(`<text x="${M.left + 32}" y="${legendY}">${esc(`${s.label} — n=${sv.length}, p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
