// The run as a table: every figure worth reading, the issue's targets marked met / MISSED. Printed
// at the end of a run and pasted (as Markdown) into bench/README.md.
import type { Results } from './results.js';
import { isFailed } from './results.js';
import type { Target } from './targets.js';
import type { RoundRatios } from '../lib/stats.js';
import { describeSplit } from '../lib/latency-split.js';

interface Row {
  scenario: string;
  figure: string;
  value: string;
  target: string;
  verdict: string;
}

const f = (v: number | null | undefined, unit = 'ms'): string => (v === null || v === undefined ? 'n/a' : `${v}${unit ? ' ' + unit : ''}`);
const pair = (a: number | null | undefined, b: number | null | undefined, unit = 'ms'): string => `${f(a, '')} / ${f(b, '')} ${unit}`.trim();
/** Where a Job's trigger latency went, from the API server's audit log (bench/lib/latency-split.ts). */
const SPLIT = 'at the API server (audit log), p50 / p99 / max: operator share (create received − slot); server share (watch arrival − received)';
const verdict = (t: Target | undefined): string => (t === undefined ? '' : t.met === null ? 'n/a' : t.met ? 'met' : 'MISSED');

export function tableRows(r: Results): Row[] {
  const rows: Row[] = [];
  const target = (scenario: string, figure: string): Target | undefined => r.targets.find((t) => t.scenario === scenario && t.figure === figure);
  const add = (scenario: string, figure: string, value: string, t?: Target): void => {
    rows.push({ scenario, figure, value, target: t?.target ?? '', verdict: verdict(t) });
  };

  if (isFailed(r.floor)) add('floor', 'FAILED', r.floor.error.split('\n')[0] ?? '');
  else {
    const fl = r.floor;
    add('floor', `create round trip p50 / p99, ${fl.concurrent.concurrency} in flight (${fl.concurrent.creates})`, pair(fl.concurrent.rtt.p50_ms, fl.concurrent.rtt.p99_ms));
    add('floor', `create round trip p50 / p99, sequential (${fl.sequential.creates})`, pair(fl.sequential.rtt.p50_ms, fl.sequential.rtt.p99_ms));
    add('floor', 'create → watch arrival p50 / p99, sequential', pair(fl.sequential.createToWatch.p50_ms, fl.sequential.createToWatch.p99_ms));
    add('floor', `create → watch arrival p50 / p99, ${fl.concurrent.concurrency} in flight`, pair(fl.concurrent.createToWatch.p50_ms, fl.concurrent.createToWatch.p99_ms));
    add('floor', `creates per second: ${fl.concurrent.concurrency} in flight / sequential`, `${fl.concurrent.perSecond} / ${fl.sequential.perSecond}`);
    const b = fl.batches;
    add('floor', `${b.size} creates released each whole second, ${fl.concurrent.concurrency} in flight (${b.batches} s): second → watch p50 / p99`, pair(b.secondToWatch.p50_ms, b.secondToWatch.p99_ms));
    add('floor', `the same batches: client CPU per 1000 creates (own process, incl. ${b.client.deletes} history deletions and decoding ${b.client.watch_events} watch events)`, f(b.cpu_s_per_1000_creates, 's'));
    const lb = fl.light_batches;
    add('floor', `${lb.size} creates released each whole second (${lb.batches} s): second → watch p50 / p99; client CPU per 1000 creates`, `${pair(lb.secondToWatch.p50_ms, lb.secondToWatch.p99_ms)}; ${f(lb.cpu_s_per_1000_creates, 's')}`);
    const FLOOR_SPLIT = 'at the API server (audit log), p50 / p99 / max: floor client share (create received − its second); server share (watch arrival − received)';
    add('floor', `batches of ${b.size} ${FLOOR_SPLIT}`, describeSplit(b.split ?? null, 'floor client'));
    add('floor', `batches of ${lb.size} ${FLOOR_SPLIT}`, describeSplit(lb.split ?? null, 'floor client'));
  }

  if (isFailed(r.steady)) add('steady', 'FAILED', r.steady.error.split('\n')[0] ?? '');
  else {
    const s = r.steady;
    add('steady', 'schedules × seconds', `${s.schedules} × ${s.seconds} s`);
    add('steady', 'slot → watch p50', f(s.p50_ms));
    add('steady', 'slot → watch p90', f(s.p90_ms));
    add('steady', 'slot → watch p99', f(s.p99_ms));
    add('steady', 'slot → watch max', f(s.max_ms));
    add('steady', 'p50 / p99 over the floor batches of this run (one round each: judged on the rounds below)', `${f(s.vs_floor_batches.p50_ratio, '')} / ${f(s.vs_floor_batches.p99_ratio, '×')}`);
    if (!isFailed(r.floor)) {
      const fb = r.floor.batches.secondToWatch;
      const d = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : Math.round((a - b) * 100) / 100);
      add('steady', 'minus the floor batches (same shape, no operator): p50 / p99', pair(d(s.p50_ms, fb.p50_ms), d(s.p99_ms, fb.p99_ms)));
    }
    add('steady', `latency split ${SPLIT}`, describeSplit(s.split ?? null, 'operator'));
    add('steady', 'operator share p99 (create received − slot)', f(s.split?.client.p99_ms), target('steady', 'operator share p99 (create received − slot)'));
    add('steady', 'Jobs expected / seen', `${s.expected} / ${s.seen}`);
    add('steady', 'duplicates', String(s.duplicates), target('steady', 'duplicates'));
    add('steady', 'missed', String(s.missed), target('steady', 'missed'));
    add('steady', 'operator: CPU, timer lateness p99, trigger latency p50 / p99', `${f(s.operator.cpu_pct, '%')}, ≤ ${f(s.operator.timer_lateness_p99_ms)}, ≤ ${pair(s.operator.trigger_latency_p50_ms, s.operator.trigger_latency_p99_ms)}`);
    add('steady', 'operator: API requests per second', Object.entries(s.operator.requests_per_s).map(([k, v]) => `${k} ${v}`).join(', '));
    const reasons = Object.entries(s.operator.missed_by_reason);
    if (reasons.length) add('steady', 'operator: slots it counted as missed, by reason', reasons.map(([k, v]) => `${k} ${v}`).join(', '));
  }

  if (isFailed(r.light)) add('light', 'FAILED', r.light.error.split('\n')[0] ?? '');
  else {
    const l = r.light;
    add('light', 'schedules × seconds', `${l.schedules} × ${l.seconds} s`);
    add('light', 'slot → watch p50 / p90 / p99 / max', `${f(l.p50_ms, '')} / ${f(l.p90_ms, '')} / ${f(l.p99_ms, '')} / ${f(l.max_ms)}`);
    add('light', 'floor: sequential create → watch p50 / p99 (same run)', pair(l.floor_p50_ms, l.floor_p99_ms));
    add('light', 'p50 / floor sequential p50', f(l.p50_ratio, '×'), target('light', 'p50 / floor sequential p50'));
    add('light', 'p99 / floor sequential p99', f(l.p99_ratio, '×'), target('light', 'p99 / floor sequential p99'));
    add('light', `p50 / p99 over the floor's batches of ${l.schedules} (its schedules released together, the server alone)`, `${f(l.vs_floor_batches.p50_ratio, '')} / ${f(l.vs_floor_batches.p99_ratio, '×')}`);
    add('light', `latency split ${SPLIT}`, describeSplit(l.split ?? null, 'operator'));
    add('light', 'Jobs expected / seen; duplicates; missed', `${l.expected} / ${l.seen}; ${l.duplicates}; ${l.missed}`);
    add('light', 'operator: CPU, timer lateness p99, trigger latency p50 / p99', `${f(l.operator.cpu_pct, '%')}, ≤ ${f(l.operator.timer_lateness_p99_ms)}, ≤ ${pair(l.operator.trigger_latency_p50_ms, l.operator.trigger_latency_p99_ms)}`);
  }

  if (isFailed(r.rounds)) add('rounds', 'FAILED', r.rounds.error.split('\n')[0] ?? '');
  else {
    const spread = (x: RoundRatios): string => `${f(x.median, '×')} (rounds ${x.rounds.map((v) => f(v, '')).join(', ')})`;
    for (const [name, s] of [['steady', r.rounds.steady], ['light', r.rounds.light]] as const) {
      const judged = (figure: string): Target | undefined => (name === 'steady' ? target('rounds', figure) : undefined);
      add('rounds', `${name}: ${s.schedules} × ${s.seconds} s, operator and floor client in ${r.rounds.rounds} alternating rounds; missed; duplicates`, `${s.missed}; ${s.duplicates}`);
      add('rounds', `${name}: slot → watch p50, operator / floor batches, median of the rounds`, spread(s.ratio.p50), judged('steady p50 / floor batches p50, median of the rounds'));
      add('rounds', `${name}: slot → watch p99, operator / floor batches`, spread(s.ratio.p99), judged('steady p99 / floor batches p99, median of the rounds'));
      add('rounds', `${name}: client share p50 (audit log), operator / floor client`, spread(s.ratio.client_share_p50));
      add('rounds', `${name}: client share p99, operator / floor client`, spread(s.ratio.client_share_p99), judged("steady operator share p99 / the floor client's, median of the rounds"));
    }
  }

  if (isFailed(r.efficiency)) add('efficiency', 'FAILED', r.efficiency.error.split('\n')[0] ?? '');
  else {
    const e = r.efficiency;
    add('efficiency', `steady: API requests per Job, the operator's counter (all, ${e.requests_per_s ?? 'n/a'}/s for ${e.jobs_per_s ?? 'n/a'} Jobs/s)`, f(e.requests_per_job, ''));
    add('efficiency', "steady: API requests per Job, the API server's audit log (same window)", f(e.requests_per_job_audited, ''));
    add('efficiency', `steady: requests per Job by ${e.requests_by}`, Object.entries(e.requests_by_purpose).map(([k, v]) => `${k} ${v}`).join(', '));
    add('efficiency', 'steady: requests per Job by the audit log', Object.entries(e.requests_audited_by).map(([k, v]) => `${k} ${v}`).join(', ') || 'n/a');
    add('efficiency', 'steady: history deletes per Job (< 1: the Job controller was behind)', f(e.history_deletes_per_job, ''));
    const judged = target('efficiency', 'requests per Job');
    add('efficiency', 'steady: requests per Job (the larger of the two counts)', f(judged?.value, ''), judged);
    add('efficiency', 'steady: operator CPU per 1000 Jobs', f(e.cpu_s_per_1000_jobs, 's'), target('efficiency', 'CPU per 1000 Jobs'));
    add('efficiency', 'floor client CPU per 1000 creates; operator / floor', `${f(e.floor_cpu_s_per_1000_creates, 's')}; ${f(e.cpu_vs_floor, '×')}`);
  }

  if (isFailed(r.burst)) add('burst', 'FAILED', r.burst.error.split('\n')[0] ?? '');
  else {
    const b = r.burst;
    const sideRow = (name: string, s: typeof b.secondcron): void =>
      add('burst', `${name}: ${s.seen}/${s.schedules} Jobs; first / p50 / p99 / last after the slot`, `${f(s.first_ms, '')} / ${f(s.p50_ms, '')} / ${f(s.p99_ms, '')} / ${f(s.last_ms)}`);
    sideRow('secondcron (median round)', b.secondcron);
    sideRow('CronJob (upstream, median round)', b.cronjob);
    const lasts = (sides: typeof b.rounds.secondcron): string => sides.map((s) => f(s.last_ms, '')).join(', ');
    add('burst', `last Job in each of ${b.rounds.secondcron.length} rounds: secondcron / CronJob`, `${lasts(b.rounds.secondcron)} / ${lasts(b.rounds.cronjob)} ms`);
    add('burst', `CronJob last / secondcron last (medians; secondcron at its own qps ${b.limits.qps} / burst ${b.limits.burst}, kcm at 100 / 200)${b.timed_out.length ? ` — no ratio: ${b.timed_out.join(' and ')} timed out` : ''}`, f(b.ratio_last, '×'), target('burst', 'CronJob last / ours last'));
    const same = b.ours_at_kcm_limits;
    if ('error' in same) add('burst', "secondcron at kube-controller-manager's limits: FAILED", same.error.split('\n')[0] ?? '');
    else {
      add('burst', `secondcron at kcm's limits (qps ${same.qps}, burst ${same.burst}; token-bucket floor ${same.token_bucket_floor_ms} ms): last Job in each of ${same.rounds.length} rounds`, `${lasts(same.rounds)} ms`);
      add('burst', `like for like, both at qps ${same.qps} / burst ${same.burst}: CronJob last / secondcron last (medians)${same.timed_out ? ' — no ratio: a round timed out' : ''}`, f(same.ratio_last, '×'));
    }
    const d = b.cronjob_default_qps;
    if (d === null || 'error' in d) add('burst', 'CronJob at kube-controller-manager defaults: FAILED', (d?.error ?? 'not run').split('\n')[0] ?? '');
    else {
      sideRow(`CronJob at kcm defaults (qps ${d.kube_api_qps}, burst ${d.kube_api_burst}), median of ${d.rounds.length} rounds`, d);
      add('burst', `CronJob at kcm defaults last in each round`, `${lasts(d.rounds)} ms`);
      add('burst', `each at its defaults: CronJob (kcm ${d.kube_api_qps} / ${d.kube_api_burst}) last / secondcron (${b.limits.qps} / ${b.limits.burst}) last, medians${d.timed_out ? ' — no ratio: a round timed out' : ''}`, f(d.ratio_last, '×'));
    }
    const l = b.limits;
    add('burst', `secondcron (median round) latency split ${SPLIT}; its max is the last create received (token-bucket floor ${f(l.token_bucket_floor_ms)})`, describeSplit(b.secondcron_split ?? null, 'operator'));
    add('burst', 'secondcron (median round): last create received − slot', f(b.secondcron_split?.client.max_ms), target('burst', 'last create received − slot'));
    add('burst', `secondcron limits: token bucket (qps ${l.qps}, burst ${l.burst}) / concurrency ${l.max_concurrent_creates} alone`, `${f(l.token_bucket_floor_ms, '')} / ${f(l.concurrency_floor_ms)}`);
    add('burst', 'secondcron: max queue depth / in flight, 429s, busy before slot', `${l.max_queue_depth} / ${l.max_inflight}, ${l.throttled_429}, ${l.busy_before_slot ? 'yes' : 'no'}`);
    add('burst', 'secondcron operator during its burst: CPU, API requests per second', `${f(l.operator.cpu_pct, '%')}, ${Object.entries(l.operator.requests_per_s).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }

  if (isFailed(r.scale)) add('scale', 'FAILED', r.scale.error.split('\n')[0] ?? '');
  else {
    const s = r.scale;
    add('scale', 'schedules (created before start, per second)', `${s.schedules} (${s.create_per_s}/s)`);
    add('scale', 'RSS peak (VmHWM, /proc)', f(s.rss_mib, 'MiB'), target('scale', 'RSS (peak)'));
    add('scale', 'RSS sampled peak / idle; heap used peak / idle', `${f(s.rss_sampled_mib, '')} / ${f(s.rss_idle_mib, 'MiB')}; ${f(s.heap_used_mib, '')} / ${f(s.heap_used_idle_mib, 'MiB')}`);
    add('scale', `Prometheus every ${s.prometheus_interval_s} s: scrapes (failed), longest, samples`, `${s.prometheus_scrapes ?? 'n/a'} (${s.prometheus_scrapes_failed ?? 'n/a'}), ${f(s.prometheus_scrape_max_ms, 'ms')}, ${s.prometheus_samples ?? 'n/a'}`);
    add('scale', 'start → ready (readyz 200, leading, every schedule compiled and its timer armed)', f(s.ready_s, 's'), target('scale', 'start → ready'));
    add('scale', 'start → caches synced / leader / all finalizers + status written / last start-up write', `${f(s.caches_synced_s, '')} / ${f(s.leader_s, '')} / ${f(s.writes_done_s, '')} / ${f(s.writes_quiet_s, 's')}`);
    add('scale', "start-up requests by the API server's audit log (mean server time)", Object.entries(s.startup_requests_audited ?? {}).map(([k, v]) => `${k} ${v} (${s.startup_server_ms_mean?.[k] ?? 'n/a'} ms)`).join(', ') || 'n/a');
    add('scale', `idle CPU, first ${s.idle_seconds} s after start-up (/proc cross-check)`, `${f(s.idle_cpu_pct_first_window, '%')} (${f(s.idle_cpu_pct_first_window_proc, '%')})`);
    add('scale', `idle CPU, the next ${s.idle_seconds} s: steady (/proc cross-check)${s.settled ? '' : ' — start-up writes NOT finished'}`, `${f(s.idle_cpu_pct, '%')} (${f(s.idle_cpu_pct_proc, '%')})`, target('scale', 'idle CPU'));
    add('scale', '/metrics with per-schedule gauges: samples, size plain / gzip', `${s.scrape_samples ?? 'n/a'}, ${f(s.scrape_kib, '')} / ${f(s.scrape_gzip_kib, 'KiB')}`);
    add('scale', '/metrics scrape time gzip / plain (median of 5); RSS after', `${f(s.scrape_ms, '')} / ${f(s.scrape_identity_ms, 'ms')}; ${f(s.rss_after_scrapes_mib, 'MiB')}`);
    add('scale', 'RSS per schedule above the process baseline (idle − the operator leading with no schedules) ÷ schedules, computed', `${f(s.rss_per_schedule_kib, 'KiB')} (${f(s.rss_idle_mib, '')} − ${f(s.baseline_rss_mib, 'MiB')})`);
    add('scale', 'leader → ready (every schedule compiled and armed)', f(s.ready_after_leading_s, 's'));
    add('scale', 'test control plane over the steady idle window: CPU, RSS', Object.entries(s.control_plane).map(([k, v]) => `${k} ${f(v.cpu_pct, '%')}, ${f(v.rss_mib, 'MiB')}`).join('; '));
    add('scale', 'Lease lost by the operator during the scenario', s.leader_losses === null ? 'n/a' : String(s.leader_losses));
  }

  if (isFailed(r.failover)) add('failover', 'FAILED', r.failover.error.split('\n')[0] ?? '');
  else {
    const x = r.failover;
    const w = x.writes_window_s;
    add('failover', `schedules, replicas, lease duration${x.settled ? '' : ' — start-up writes NOT finished before the kill'}`, `${x.schedules}, ${x.replicas}, ${x.lease_duration_s} s`);
    add('failover', 'leader start → start-up writes over (finalizer + status on every schedule)', f(x.startup_s, 's'));
    add('failover', 'SIGKILL → Lease taken by a survivor (watch) / its "started leading" log', `${f(x.takeover_ms, '')} / ${f(x.takeover_log_ms)}`);
    add('failover', 'SIGKILL → first on-time canary Job (watch arrival); its lateness', `${f(x.first_job_ms)}; ${f(x.first_job_lateness_ms)}`);
    add('failover', `the new leader's canary Jobs: latency split ${SPLIT}`, describeSplit(x.split ?? null, 'operator'));
    add('failover', 'SIGKILL → catch-up Job (latest missed canary slot); canary slots missed', `${f(x.catch_up_job_ms)}; ${x.canary_slots_missed ?? 'n/a'}`);
    add('failover', `new leader's write requests in its first ${w} s: all / Lease / canary`, `${x.writes_60s ?? 'n/a'} / ${x.writes_lease ?? 'n/a'} / ${x.writes_canary ?? 'n/a'}`);
    add('failover', `new leader's writes about schedules not due, first ${w} s`, String(x.writes_60s_non_canary ?? 'n/a'), target('failover', "new leader's writes about schedules not due"));
    const c = x.changed_non_canary;
    add('failover', 'other schedules changed (watch): status / finalizer / other, Events, Jobs', `${c.status} / ${c.finalizer} / ${c.other}, ${c.events}, ${c.jobs}`);
    add('failover', 'writes by verb' + (x.writes_by_purpose ? ' / by purpose' : ''), [x.writes_by_verb, x.writes_by_purpose ?? {}].map((o) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(', ')).filter(Boolean).join(' / '));
    add('failover', 'follower writes in the same window; new leader CPU', `${x.follower_writes ?? 'n/a'}; ${f(x.new_leader_cpu_pct, '%')}`);
  }

  if (isFailed(r.flood)) add('flood', 'FAILED', r.flood.error.split('\n')[0] ?? '');
  else {
    const a = r.flood;
    const w = a.windows;
    const both = (s: { p50_ms: number | null; p99_ms: number | null }): string => `${f(s.p50_ms, '')} / ${f(s.p99_ms)}`;
    const rounds = (x: { median: number | null; rounds: (number | null)[] }): string => `${f(x.median, '×')} (rounds ${x.rounds.map((v) => v ?? 'n/a').join(', ')})`;
    add('flood', `${a.schedules} × 1 s, ${a.rounds} rounds of four ${a.window_s} s windows: seen / expected; duplicates; without an audited create`, `${a.seen} / ${a.expected}; ${a.duplicates}; ${a.unaudited}`);
    add('flood', 'operator share p50 / p99 (slot → create received, audit log): quiet', both(w.quiet.operator_share));
    add('flood', `… ${a.junk_per_window} junk tokens over ${a.junk_connections} connections on the operator`, both(w.junk.operator_share));
    add('flood', `… ${a.connection_attempts} connection attempts on both ports`, both(w.connections.operator_share));
    add('flood', '… the junk on a decoy (control: the operator sees none of it)', both(w.decoy.operator_share));
    add('flood', 'slot → watch p50 / p99: quiet / junk / connections / decoy', [w.quiet, w.junk, w.connections, w.decoy].map((x) => both(x.slot_to_watch)).join('; '));
    add('flood', 'operator share p99 / quiet p99, decoy (control; median of rounds)', rounds(a.p99_ratio.decoy), target('flood', 'operator share p99, decoy / quiet (control)'));
    add('flood', 'operator share p99 / quiet p99, junk (median of rounds)', rounds(a.p99_ratio.junk), target('flood', 'operator share p99, junk / quiet'));
    add('flood', 'operator share p99 / quiet p99, connections (median of rounds)', rounds(a.p99_ratio.connections), target('flood', 'operator share p99, connections / quiet'));
    add('flood', 'junk answers by status; decoy answers', `${JSON.stringify(a.junk_answers)}; ${JSON.stringify(a.decoy_answers)}`);
    const o = a.connection_outcomes;
    const sum = (k: 'connected' | 'closedByOperator' | 'failed' | 'openAtEnd'): number => o.reduce((n, x) => n + x[k], 0);
    add(
      'flood',
      'connection attempts: connected / closed by the operator / never connected / open at the end; most open at once; health probes answered',
      `${sum('connected')} / ${sum('closedByOperator')} / ${sum('failed')} / ${sum('openAtEnd')}; ${Math.max(0, ...o.map((x) => x.peakOpen))}; ${o.reduce((n, x) => n + x.probes.ok, 0)} of ${o.reduce((n, x) => n + x.probes.sent, 0)} (slowest ${Math.max(0, ...o.map((x) => x.probes.max_ms))} ms)`,
    );
    add('flood', 'operator CPU quiet / junk / connections / decoy; CPU s per 1,000 junk (computed)', `${w.quiet.operator_cpu_pct} / ${w.junk.operator_cpu_pct} / ${w.connections.operator_cpu_pct} / ${w.decoy.operator_cpu_pct} %; ${f(a.cpu_s_per_1000_junk, 's')}`);
    add('flood', 'the decoy; the flooding process (own processes, same cores; niceness)', `${a.decoy_cpu_pct} %; ${a.flooder_cpu_pct} % (nice ${a.flooder_nice})`);
  }
  if (isFailed(r.herd)) add('herd', 'FAILED', r.herd.error.split('\n')[0] ?? '');
  else {
    const h = r.herd;
    for (const s of [h.zero, h.hashed]) {
      add('herd', `"${s.schedule}" × ${h.schedules}, ${h.minutes} min: seen / expected; busiest second; seconds used`, `${s.seen} / ${s.expected}; ${s.busiest_second}; ${s.seconds_used}`);
      add('herd', `"${s.schedule}": slot → watch p50 / p99 / longest wait`, `${f(s.p50_ms, '')} / ${f(s.p99_ms, '')} / ${f(s.max_ms)}`);
      add('herd', `"${s.schedule}": latency split ${SPLIT}`, describeSplit(s.split ?? null, 'operator'));
    }
    add('herd', 'zero / H: p99; longest wait', `${f(h.p99_ratio, '×')}; ${f(h.max_ratio, '×')}`);
  }

  if (isFailed(r.scheduler)) add('scheduler', 'FAILED', r.scheduler.error.split('\n')[0] ?? '');
  else {
    const s = r.scheduler;
    add('scheduler', `lateness p50, ${s.spread.entries} timers/s spread 1 ms apart, ${s.spread.seconds} s`, f(s.spread.lateness.p50_ms));
    add('scheduler', 'lateness p99', f(s.spread.lateness.p99_ms), target('scheduler', 'lateness p99'));
    add('scheduler', 'lateness max; fires / expected', `${f(s.spread.lateness.max_ms)}; ${s.spread.fires} / ${s.spread.expected}`);
    add('scheduler', `aligned (${s.aligned.entries} on one whole second): lateness p99; onFire of the last p99`, `${f(s.aligned.lateness.p99_ms)}; ${f(s.aligned.callback.p99_ms)}`);
    add('scheduler', 'machine floor: bare setTimeout(1 ms) lateness p50 / p99 / max', `${f(s.baseline_settimeout.lateness.p50_ms, '')} / ${f(s.baseline_settimeout.lateness.p99_ms, '')} / ${f(s.baseline_settimeout.lateness.max_ms)}`);
  }
  return rows;
}

export function textTable(rows: Row[]): string {
  const header: Row = { scenario: 'scenario', figure: 'figure', value: 'value', target: 'target', verdict: 'verdict' };
  const all = [header, ...rows];
  const w = (k: keyof Row): number => Math.max(...all.map((r) => r[k].length));
  const line = (r: Row): string =>
    [r.scenario.padEnd(w('scenario')), r.figure.padEnd(w('figure')), r.value.padEnd(w('value')), r.target.padEnd(w('target')), r.verdict].join('  ').trimEnd();
  const sep = '-'.repeat(w('scenario') + w('figure') + w('value') + w('target') + w('verdict') + 8);
  return [line(header), sep, ...rows.map(line)].join('\n');
}

export function markdownTable(rows: Row[]): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  return [
    '| scenario | figure | value | target | verdict |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${esc(r.scenario)} | ${esc(r.figure)} | ${esc(r.value)} | ${esc(r.target)} | ${r.verdict === 'MISSED' ? '**MISSED**' : r.verdict} |`),
  ].join('\n');
}
