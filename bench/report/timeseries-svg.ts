// bench/results/soak.svg, written by hand like latency.svg: lines over time (MiB against minutes),
// with vertical marks (the leader handovers) and a shaded warm-up.
export interface Line {
  label: string;
  color: string;
  /** [minutes since start, MiB] */
  points: [number, number][];
  dashed?: boolean;
}

const W = 960;
const M = { left: 64, right: 24, top: 48 };
const PW = W - M.left - M.right;
const PH = 342;

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A round step for about `n` grid lines over `span`. */
function step(span: number, n: number): number {
  const raw = span / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag) as number;
}

export function timeSeriesSvg(title: string, subtitle: string, lines: Line[], marks: { atMin: number; label: string }[], warmupMin: number): string {
  const H = M.top + PH + 56 + 16 * lines.length + 8;
  const xs = lines.flatMap((l) => l.points.map((p) => p[0]));
  const ys = lines.flatMap((l) => l.points.map((p) => p[1]));
  const xMax = Math.max(1, ...xs);
  const yStep = step(Math.max(1, ...ys), 6);
  const yMax = Math.ceil(Math.max(1, ...ys) / yStep) * yStep;
  const x = (min: number): number => M.left + (min / xMax) * PW;
  const y = (mib: number): number => M.top + (1 - mib / yMax) * PH;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(`<text x="${M.left}" y="20" font-size="15" font-weight="bold">${esc(title)}</text>`);
  parts.push(`<text x="${M.left}" y="37" fill="#555">${esc(subtitle)}</text>`);
  parts.push(`<rect x="${M.left}" y="${M.top}" width="${(x(Math.min(warmupMin, xMax)) - M.left).toFixed(1)}" height="${PH}" fill="#f3f3f3"/>`);
  const xStep = step(xMax, 10);
  for (let m = 0; m <= xMax + 1e-9; m += xStep) {
    parts.push(`<line x1="${x(m).toFixed(1)}" y1="${M.top}" x2="${x(m).toFixed(1)}" y2="${M.top + PH}" stroke="#eee"/>`);
    parts.push(`<text x="${x(m).toFixed(1)}" y="${M.top + PH + 16}" text-anchor="middle">${Number(m.toPrecision(3))}</text>`);
  }
  for (let v = 0; v <= yMax + 1e-9; v += yStep) {
    parts.push(`<line x1="${M.left}" y1="${y(v).toFixed(1)}" x2="${M.left + PW}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${M.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${Number(v.toPrecision(3))}</text>`);
  }
  for (const mark of marks) {
    parts.push(`<line x1="${x(mark.atMin).toFixed(1)}" y1="${M.top}" x2="${x(mark.atMin).toFixed(1)}" y2="${M.top + PH}" stroke="#c60" stroke-dasharray="3 3"/>`);
    parts.push(`<text x="${(x(mark.atMin) + 3).toFixed(1)}" y="${M.top + 12}" fill="#c60">${esc(mark.label)}</text>`);
  }
  parts.push(`<rect x="${M.left}" y="${M.top}" width="${PW}" height="${PH}" fill="none" stroke="#333"/>`);
  parts.push(`<text x="${M.left + PW / 2}" y="${M.top + PH + 34}" text-anchor="middle">minutes since the operators started (grey: warm-up, not judged)</text>`);
  parts.push(`<text transform="translate(16 ${M.top + PH / 2}) rotate(-90)" text-anchor="middle">MiB</text>`);
  lines.forEach((l, i) => {
    const d = l.points.map(([m, v], k) => `${k ? 'L' : 'M'}${x(m).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    parts.push(`<path d="${d}" fill="none" stroke="${l.color}" stroke-width="1.5"${l.dashed ? ' stroke-dasharray="5 3"' : ''}/>`);
    const legendY = M.top + PH + 56 + i * 16;
    parts.push(`<line x1="${M.left}" y1="${legendY - 4}" x2="${M.left + 24}" y2="${legendY - 4}" stroke="${l.color}" stroke-width="3"${l.dashed ? ' stroke-dasharray="5 3"' : ''}/>`);
    parts.push(`<text x="${M.left + 32}" y="${legendY}">${esc(l.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
