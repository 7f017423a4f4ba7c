// `node build/bench/report/compare.js BEFORE.json AFTER.json`: the headline figures of two full
// `make bench` runs side by side, as a Markdown table (bench/README.md's before/after table).
// Figures missing from one side (a scenario added later, or failed) print as "—"; nothing is computed
// here beyond the after/before ratio.
import { readFileSync } from 'node:fs';

type Json = Record<string, unknown>;

/** One row: a label and the path of the figure in latest.json. */
const ROWS: [string, string][] = [
  ['floor: create round trip p50 / p99 (ms)', 'floor.p50_ms|floor.p99_ms'],
  ['steady 100 × 1 s: slot → watch p50 / p99 (ms)', 'steady.p50_ms|steady.p99_ms'],
  ['steady: missed / duplicates', 'steady.missed|steady.duplicates'],
  ['steady: operator share p50 / p99 at the API server (ms)', 'steady.split.client.p50_ms|steady.split.client.p99_ms'],
  ['floor batches: floor client share p50 / p99 at the API server (ms)', 'floor.batches.split.client.p50_ms|floor.batches.split.client.p99_ms'],
  ['steady vs floor batches: p50 / p99 ratio', 'steady.vs_floor_batches.p50_ratio|steady.vs_floor_batches.p99_ratio'],
  ['light 10 × 1 s: p50 / p99 (ms)', 'light.p50_ms|light.p99_ms'],
  ['light vs sequential floor: p50 / p99 ratio', 'light.p50_ratio|light.p99_ratio'],
  ['requests per Job: operator counter / API server audit log', 'efficiency.requests_per_job|efficiency.requests_per_job_audited'],
  ['history deletes per Job', 'efficiency.history_deletes_per_job'],
  ['operator CPU s per 1,000 Jobs / floor client per 1,000 creates', 'efficiency.cpu_s_per_1000_jobs|efficiency.floor_cpu_s_per_1000_creates'],
  ['burst 500: ours last / CronJob last (ms)', 'burst.secondcron_last_ms|burst.cronjob_last_ms'],
  ['burst: CronJob last ÷ ours last', 'burst.ratio_last'],
  ['scale 10,000: RSS peak VmHWM (MiB)', 'scale.rss_mib'],
  ['scale: RSS idle / heap used idle (MiB)', 'scale.rss_idle_mib|scale.heap_used_idle_mib'],
  ['scale: idle CPU, first window after start-up (%)', 'scale.idle_cpu_pct_first_window'],
  ['scale: idle CPU, steady (%) (before: the only window, 10 s after start-up)', 'scale.idle_cpu_pct'],
  ['scale: /metrics gzip scrape (ms)', 'scale.scrape_ms'],
  ['scale: start → ready (s) (before issue 36: cache-sync time) / every finalizer + status written (s)', 'scale.ready_s|scale.writes_done_s'],
  ['failover 10,000: takeover / first Job after kill (ms)', 'failover.takeover_ms|failover.first_job_ms'],
  ['failover: writes in 60 s not about the canary', 'failover.writes_60s_non_canary'],
  ['herd 2,000: p99 `0 * …` / `H * …` (ms)', 'herd.zero.p99_ms|herd.hashed.p99_ms'],
  ['scheduler: timer lateness p99 (ms)', 'scheduler.p99_ms'],
];

function at(doc: Json, path: string): number | null {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return null;
    cur = (cur as Json)[part];
  }
  return typeof cur === 'number' ? cur : null;
}

const show = (v: number | null): string => (v === null ? '—' : String(v));

function row(before: Json, after: Json, label: string, paths: string): string {
  const parts = paths.split('|');
  const b = parts.map((p) => at(before, p));
  const a = parts.map((p) => at(after, p));
  const first = [b[0], a[0]];
  const ratio = first[0] !== null && first[1] !== null && first[0] !== 0 ? `${Math.round(((first[1] as number) / (first[0] as number)) * 100) / 100}×` : '';
  return `| ${label} | ${b.map(show).join(' / ')} | ${a.map(show).join(' / ')} | ${ratio} |`;
}

export function compareTable(before: Json, after: Json): string {
  const head = (d: Json): string => `${String(d.commit ?? '?').slice(0, 7)} (${String(d.date ?? '?').slice(0, 16)}Z)`;
  return [
    `| figure | before: ${head(before)} | after: ${head(after)} | after ÷ before (first figure) |`,
    '|---|---|---|---|',
    ...ROWS.map(([label, paths]) => row(before, after, label, paths)),
  ].join('\n');
}

const [beforePath, afterPath] = process.argv.slice(2);
if (beforePath && afterPath) {
  const read = (p: string): Json => JSON.parse(readFileSync(p, 'utf8')) as Json;
  process.stdout.write(compareTable(read(beforePath), read(afterPath)) + '\n');
}
