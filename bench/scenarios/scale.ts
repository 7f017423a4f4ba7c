// Scenario 4: many schedules, few firings. N daily SecondCronJobs exist before the operator starts;
// how much memory does it need, how long until everything is scheduled, and what does it cost idle?
//
// Two phases: startScale() runs the start-up (until ready and the operator stopped writing), then
// ScaleRun.measureIdle() measures CPU over the idle window, with nothing else of the bench running.
// From the operator's start a real Prometheus scrapes its whole /metrics every 15 s (gzip, as
// Prometheus does), per-schedule gauges included; the bench's own polling asks only for the
// operator's own families (`name[]`, lib/operator.ts), so the figures are those of an installed
// operator, not of the bench (issue 24).
import type { Cluster } from '../../test/cluster/cluster.js';
import type { OperatorProcess } from '../../test/cluster/operator-process.js';
import type { PromSamples } from '../lib/prom-text.js';
import { auditedRequests } from '../lib/audit-log.js';
import { idleSchedules } from '../lib/idle-schedules.js';
import { bulkCreate, createNamespace, restFor, scjManifest, scjPath } from '../lib/kube.js';
import { type MemoryBreakdown, finishOperator, heapSnapshot, makeOperator, memoryBreakdown, procCpuSeconds, procMemoryMiB, scrape, scrapeCost, startLeadingOperator } from '../lib/operator.js';
import { say, sleep } from '../lib/progress.js';
import { ScjWriteWatcher } from '../lib/scj-watcher.js';
import { PrometheusServer } from '../../test/integration/helpers/prometheus-server.js';
import { round2 } from '../lib/stats.js';

export interface ScaleResult {
  schedules: number;
  /** Peak RSS from start to the end of the idle window: VmHWM from /proc (the kernel's own peak), MiB. */
  rss_mib: number | null;
  /** The peak of process_resident_memory_bytes in the bench's samples (every 1 s during start-up, then at the idle window's ends), MiB. */
  rss_sampled_mib: number | null;
  /**
   * Start → /readyz 200, leading, and secondcron_schedules{state="active"} == schedules: every schedule
   * compiled and its timer armed while this replica leads (issue 36: before, a cached resource counted
   * as active before any reconcile, so this was cache-sync time). Its writes are writes_done_s.
   */
  ready_s: number | null;
  /**
   * Steady idle: over idle_seconds, right after the first idle window (process_cpu_seconds_total), % of
   * one core. The target is judged on this one.
   */
  idle_cpu_pct: number | null;
  idle_seconds: number;
  /** Same window, from /proc/<pid>/stat (utime+stime): a cross-check independent of the process. */
  idle_cpu_pct_proc: number | null;
  /**
   * The first idle window: idle_seconds from 10 s after the operator stopped writing (the only window
   * before issue 24). It holds V8's memory-reducer collections that follow a start-up (~0.4 s of
   * main-thread GC at 10,000 in a profile of issue 24), once per start.
   */
  idle_cpu_pct_first_window: number | null;
  idle_cpu_pct_first_window_proc: number | null;
  heap_used_mib: number | null;
  rss_idle_mib: number | null;
  heap_used_idle_mib: number | null;
  /** VmHWM from /proc at the end: the true peak resident set, sampled or not. */
  rss_hwm_mib: number | null;
  create_s: number;
  create_per_s: number;
  caches_synced_s: number | null;
  leader_s: number | null;
  /** Start → the operator's write requests (patch, create) stopped for QUIET_MS. */
  writes_quiet_s: number | null;
  /** Start → every resource has our finalizer and a status with a Ready condition (seen by a watch). */
  writes_done_s: number | null;
  /** Resources still without our finalizer / without a status when the start-up phase ended. */
  missing_finalizers: number;
  missing_status: number;
  /** Requests the operator made during the start-up phase, by verb and code. */
  startup_requests: Record<string, number>;
  /**
   * The same phase (start → writes_done_s, or the end of start-up) as the API server's audit log
   * counts it, by "verb resource[/subresource]" (dry runs apart): the outsider's count (issue 36).
   */
  startup_requests_audited: Record<string, number> | null;
  /** The same requests: the mean time the API server took for each (its audit log), ms. */
  startup_server_ms_mean: Record<string, number> | null;
  /** Times the operator lost the Lease between start and the end of the idle window (it should be 0). */
  leader_losses: number | null;
  /** The operator had stopped writing before the idle window began: "idle" really was idle. */
  settled: boolean;
  /** Prometheus' scrapes of the operator (every `prometheus_interval_s`) from its start to the end of the idle window, and how many failed. */
  prometheus_interval_s: number;
  prometheus_scrapes: number | null;
  prometheus_scrapes_failed: number | null;
  /** Prometheus' own scrape_duration_seconds (max over the run) and scrape_samples_scraped (last). */
  prometheus_scrape_max_ms: number | null;
  prometheus_samples: number | null;
  /** After the idle window: one /metrics scrape as Prometheus makes it (gzip), median of 5, ms. */
  scrape_ms: number | null;
  /** Its size on the wire (gzip) and uncompressed, KiB; sample lines in it. */
  scrape_gzip_kib: number | null;
  scrape_kib: number | null;
  scrape_samples: number | null;
  /** The same scrape without compression, median of 5, ms. */
  scrape_identity_ms: number | null;
  /** RSS right after those ten scrapes, MiB (the rendered text is transient). */
  rss_after_scrapes_mib: number | null;
  /** ready_s − leader_s: how long after it leads the replica has every schedule compiled and armed (issue 36: ≤ 30 s at 100,000). */
  ready_after_leading_s: number | null;
  /**
   * The process baseline (issue 36): VmRSS of the same operator build leading in an empty namespace,
   * BASELINE_IDLE_MS after it led, MiB, measured before the schedules are created.
   */
  baseline_rss_mib: number | null;
  /** (rss_idle_mib − baseline_rss_mib) × 1024 / schedules: computed from the two measurements, KiB. */
  rss_per_schedule_kib: number | null;
  /** Where the resident memory is, MiB: the baseline operator at its reading and this one at the end of the steady idle window. */
  memory_baseline_mib: MemoryBreakdown | null;
  memory_idle_mib: MemoryBreakdown | null;
  /**
   * The same right after a heap snapshot (BENCH_HEAP_SNAPSHOT), which collects every dead object first:
   * what of memory_idle_mib was garbage not yet collected (heap, external). Its RSS is not comparable:
   * writing the snapshot itself took ~370 MiB at 10,000 schedules. null without a snapshot.
   */
  memory_after_snapshot_mib: MemoryBreakdown | null;
  /** The test control plane's own cost beside the operator's: over the steady idle window (CPU, /proc) and at its end (VmRSS). */
  control_plane: Record<'kube-apiserver' | 'etcd', { cpu_pct: number | null; rss_mib: number | null }>;
}

export interface ScaleRun {
  readonly result: ScaleResult;
  /** Measures the idle window, fills in the remaining figures and stops the operator. */
  measureIdle(): Promise<ScaleResult>;
  /** Stops the operator without measuring (on failure elsewhere). */
  abort(): Promise<void>;
}

const NS = 'bench-scale';
const QUIET_MS = 3_000;
/** After the start-up writes, before the idle window: the garbage of start-up is collected first. */
const SETTLE_MS = 10_000;
const POLL_MS = 250;
/**
 * The operator's families (`name[]`) are read less often than /readyz: rendering them makes the
 * operator count every schedule (secondcron_schedules, ~20 ms at 10,000).
 */
const METRICS_EVERY = 4;

const mib = (bytes: number): number => round2(bytes / 2 ** 20) as number;
/** How long the baseline operator leads with nothing to schedule before its RSS is read: as long as the scale operator settles before its idle windows. */
const BASELINE_IDLE_MS = 20_000;
const CONTROL_PLANE = ['kube-apiserver', 'etcd'] as const;

/** The memory of an operator leading with no schedules at all (its own namespace). */
async function baselineMemory(cluster: Cluster): Promise<MemoryBreakdown> {
  const ns = `${NS}-baseline`;
  await createNamespace(restFor(cluster.kubeconfigPath), ns);
  const op = await startLeadingOperator(cluster, ns);
  try {
    await sleep(BASELINE_IDLE_MS);
    return await memoryBreakdown(op);
  } finally {
    await finishOperator(op);
  }
}
/** How often a Prometheus scrapes the operator here: the kube-prometheus ServiceMonitor default is 30 s; 15 s is the stricter common choice. */
const PROMETHEUS_INTERVAL_S = 15;

export async function startScale(cluster: Cluster, opts: { schedules: number; idleSeconds: number; timeoutS: number; pods: boolean }): Promise<ScaleRun> {
  const rest = restFor(cluster.kubeconfigPath);
  const baseline = await baselineMemory(cluster);
  say(`scale: the operator leading with no schedules, after ${BASELINE_IDLE_MS / 1000} s: ${describeMemory(baseline)}`);
  await createNamespace(rest, NS);
  const n = opts.schedules;
  say(`scale: creating ${n} daily SecondCronJobs (32 concurrent POSTs) before the operator starts`);
  const bulk = await bulkCreate(rest, scjPath(NS), idleSchedules(n).map((s, i) => scjManifest(NS, `idle-${String(i).padStart(5, '0')}`, { schedule: s }, opts.pods)), 32);
  say(`scale: created in ${(bulk.ms / 1000).toFixed(1)} s (${bulk.perSecond}/s)`);
  const writes = await new ScjWriteWatcher(cluster.kubeconfigPath, NS).start();

  const op = makeOperator(cluster, NS);
  const t0 = performance.now();
  const wall0 = Date.now();
  const since = (): number => round2((performance.now() - t0) / 1000) as number;
  await op.start();
  let prometheus: PrometheusServer;
  try {
    prometheus = await PrometheusServer.start({ jobs: [{ name: 'operator', targets: [`127.0.0.1:${op.metricsPort}`], honorLabels: true }], scrapeInterval: `${PROMETHEUS_INTERVAL_S}s` });
  } catch (err) {
    await finishOperator(op);
    throw err;
  }
  const stop = async (): Promise<void> => {
    await prometheus.stop();
    await finishOperator(op);
  };
  say(`scale: operator started (pid ${op.pid}); polling /readyz every ${POLL_MS} ms, /metrics every ${POLL_MS * METRICS_EVERY} ms`);
  const r: ScaleResult = {
    schedules: n,
    rss_mib: null,
    rss_sampled_mib: null,
    ready_s: null,
    idle_cpu_pct: null,
    idle_seconds: opts.idleSeconds,
    idle_cpu_pct_proc: null,
    idle_cpu_pct_first_window: null,
    idle_cpu_pct_first_window_proc: null,
    heap_used_mib: null,
    rss_idle_mib: null,
    heap_used_idle_mib: null,
    rss_hwm_mib: null,
    scrape_ms: null,
    scrape_gzip_kib: null,
    scrape_kib: null,
    scrape_samples: null,
    scrape_identity_ms: null,
    rss_after_scrapes_mib: null,
    ready_after_leading_s: null,
    baseline_rss_mib: baseline.rss,
    memory_baseline_mib: baseline,
    memory_idle_mib: null,
    memory_after_snapshot_mib: null,
    rss_per_schedule_kib: null,
    control_plane: { 'kube-apiserver': { cpu_pct: null, rss_mib: null }, etcd: { cpu_pct: null, rss_mib: null } },
    create_s: round2(bulk.ms / 1000) as number,
    create_per_s: bulk.perSecond,
    caches_synced_s: null,
    leader_s: null,
    writes_quiet_s: null,
    writes_done_s: null,
    missing_finalizers: n,
    missing_status: n,
    startup_requests: {},
    startup_requests_audited: null,
    startup_server_ms_mean: null,
    leader_losses: null,
    settled: false,
    prometheus_interval_s: PROMETHEUS_INTERVAL_S,
    prometheus_scrapes: null,
    prometheus_scrapes_failed: null,
    prometheus_scrape_max_ms: null,
    prometheus_samples: null,
  };
  let peakRss = 0;
  let peakHeap = 0;
  try {
    const deadline = performance.now() + opts.timeoutS * 1000;
    let lastLog = 0;
    let lastWrites = -1;
    let lastWriteChange = performance.now();
    let active = 0;
    for (let poll = 0; performance.now() < deadline; poll++) {
      if (!op.running) throw new Error(`operator exited during start-up\n${op.logs(20)}`);
      const readyz = await fetch(`http://127.0.0.1:${op.healthPort}/readyz`, { signal: AbortSignal.timeout(2_000) })
        .then((res) => res.status)
        .catch(() => 0);
      if (readyz === 200 && r.caches_synced_s === null) r.caches_synced_s = since();
      // Between scrapes only /readyz is new; once it is 200, scrape at once to catch "all scheduled".
      const scrapeNow = poll % METRICS_EVERY === 0 || (readyz === 200 && r.ready_s === null);
      const m = scrapeNow ? await scrape(op, 2_000).catch(() => undefined) : undefined;
      const c = writes.counts();
      if (scrapeNow && m) {
        peakRss = Math.max(peakRss, m.get('process_resident_memory_bytes') ?? 0);
        peakHeap = Math.max(peakHeap, m.get('nodejs_heap_size_used_bytes') ?? 0);
        active = m.get('secondcron_schedules', 'state="active"') ?? 0;
        const leading = m.get('secondcron_leader') === 1;
        if (leading && r.leader_s === null) r.leader_s = since();
        if (readyz === 200 && leading && active === n && r.ready_s === null) {
          r.ready_s = since();
          r.ready_after_leading_s = r.leader_s === null ? null : round2(r.ready_s - r.leader_s);
          say(`scale: ready and all ${n} scheduled after ${r.ready_s} s (RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB so far)`);
        }
        if (c.finalizers >= n && c.status >= n && r.writes_done_s === null) {
          r.writes_done_s = since();
          say(`scale: every resource has its finalizer and status after ${r.writes_done_s} s`);
        }
        const writeCount = m.sum('secondcron_api_requests_total', 'verb="patch"') + m.sum('secondcron_api_requests_total', 'verb="create"');
        if (writeCount !== lastWrites) {
          lastWrites = writeCount;
          lastWriteChange = performance.now();
          r.writes_quiet_s = null;
        } else if (r.writes_quiet_s === null && writeCount > 0 && performance.now() - lastWriteChange >= QUIET_MS) {
          r.writes_quiet_s = round2((lastWriteChange - t0) / 1000);
        }
        for (const verb of ['create', 'patch', 'get', 'list', 'update']) {
          for (const code of ['200', '201', '409', '422', '429', '500', '504', 'error']) {
            const v = m.sum('secondcron_api_requests_total', `verb="${verb}"`, `code="${code}"`);
            if (v > 0) r.startup_requests[`${verb} ${code}`] = v;
          }
        }
        if (performance.now() - lastLog > 5_000) {
          lastLog = performance.now();
          say(`  t=${since()} s readyz ${readyz} active ${active}/${n} finalizers ${c.finalizers} status ${c.status} writes ${writeCount} RSS ${((m.get('process_resident_memory_bytes') ?? 0) / 2 ** 20).toFixed(0)} MiB`);
        }
        // Start-up is over when the operator's own writes stop, not when every resource has a finalizer
        // and a status: dry runs and the Ready verdict they lead to can still be under way then.
        if (r.ready_s !== null && leading && r.writes_quiet_s !== null) break;
      } else if (scrapeNow && performance.now() - lastLog > 5_000) {
        lastLog = performance.now();
        say(`  t=${since()} s readyz ${readyz}, /metrics not answering within 2 s; finalizers ${c.finalizers} status ${c.status}`);
      }
      await sleep(POLL_MS);
    }
    const c = writes.counts();
    const wall1 = r.writes_done_s !== null ? wall0 + r.writes_done_s * 1000 + 1000 : Date.now();
    const audited = cluster.auditLogPath ? await auditedRequests(cluster.auditLogPath, `(${op.identity ?? ''})`, wall0, wall1) : null;
    r.startup_requests_audited = audited?.by ?? null;
    r.startup_server_ms_mean = audited?.server_ms_mean ?? null;
    say(`scale: start-up requests by the API server's audit log: ${JSON.stringify(r.startup_requests_audited)}; mean server time, ms: ${JSON.stringify(r.startup_server_ms_mean)}`);
    r.missing_finalizers = n - c.finalizers;
    r.missing_status = n - c.status;
    r.settled = r.writes_quiet_s !== null;
    if (!r.settled || r.ready_s === null) {
      say(`scale: WARNING start-up not over after ${opts.timeoutS} s (ready ${r.ready_s}, finalizers ${c.finalizers}/${n}, status ${c.status}/${n}, still writing); the idle figures will not be idle`);
    } else if (r.missing_finalizers > 0 || r.missing_status > 0) {
      say(`scale: the operator stopped writing after ${r.writes_quiet_s} s with ${r.missing_finalizers} finalizer(s) and ${r.missing_status} status(es) still missing`);
    }
  } catch (err) {
    writes.stop();
    await stop();
    throw err;
  } finally {
    writes.stop();
  }

  return {
    result: r,
    measureIdle: () => measureIdle(cluster, op, prometheus, r, opts.idleSeconds, { rss: peakRss, heap: peakHeap }).finally(stop),
    abort: stop,
  };
}

async function measureIdle(cluster: Cluster, op: OperatorProcess, prometheus: PrometheusServer, r: ScaleResult, idleSeconds: number, peak: { rss: number; heap: number }): Promise<ScaleResult> {
  const pid = op.pid as number;
  say(`scale: ${SETTLE_MS / 1000} s to settle, then idle CPU over two windows of ${idleSeconds} s (no polling by the bench meanwhile; Prometheus scrapes every ${PROMETHEUS_INTERVAL_S} s)`);
  await sleep(SETTLE_MS);
  // Two windows back to back; the bench reads only the operator's own families at their ends.
  const window = async (): Promise<{ pct: number | null; procPct: number | null; after: PromSamples | undefined }> => {
    const before = await scrape(op, 30_000).catch(() => undefined);
    const proc0 = procCpuSeconds(pid);
    const i0 = performance.now();
    await sleep(idleSeconds * 1000);
    const proc1 = procCpuSeconds(pid);
    const i1 = performance.now();
    const after = await scrape(op, 30_000).catch(() => undefined);
    const wallS = (i1 - i0) / 1000;
    const cpu = (after?.get('process_cpu_seconds_total') ?? NaN) - (before?.get('process_cpu_seconds_total') ?? NaN);
    return { pct: Number.isFinite(cpu) ? round2((cpu / wallS) * 100) : null, procPct: round2(((proc1 - proc0) / wallS) * 100), after };
  };
  const first = await window();
  r.idle_cpu_pct_first_window = first.pct;
  r.idle_cpu_pct_first_window_proc = first.procPct;
  say(`scale: first idle window ${first.pct} % (/proc ${first.procPct} %); the steady window follows`);
  const cpPids = CONTROL_PLANE.map((name) => [name, cluster.pidOf(name)] as const);
  const cp0 = cpPids.map(([, pid]) => (pid === undefined ? NaN : procCpuSeconds(pid)));
  const cpT0 = performance.now();
  const steady = await window();
  const cpS = (performance.now() - cpT0) / 1000;
  cpPids.forEach(([name, pid], i) => {
    if (pid === undefined) return;
    r.control_plane[name] = { cpu_pct: round2(((procCpuSeconds(pid) - (cp0[i] as number)) / cpS) * 100), rss_mib: round2(procMemoryMiB(pid).rss) };
  });
  const after = steady.after;
  r.idle_cpu_pct = steady.pct;
  r.idle_cpu_pct_proc = steady.procPct;
  r.leader_losses = after?.get('secondcron_leader_transitions_total', 'direction="stopped"') ?? null;
  const mem = procMemoryMiB(pid);
  const rssIdle = after?.get('process_resident_memory_bytes') ?? mem.rss * 2 ** 20;
  const heapIdle = after?.get('nodejs_heap_size_used_bytes') ?? 0;
  r.rss_idle_mib = mib(rssIdle);
  r.rss_per_schedule_kib = r.baseline_rss_mib === null ? null : round2(((r.rss_idle_mib - r.baseline_rss_mib) * 1024) / r.schedules);
  r.heap_used_idle_mib = mib(heapIdle);
  r.rss_sampled_mib = mib(Math.max(peak.rss, rssIdle));
  r.heap_used_mib = mib(Math.max(peak.heap, heapIdle));
  r.rss_hwm_mib = round2(mem.hwm);
  r.rss_mib = r.rss_hwm_mib;
  r.memory_idle_mib = await memoryBreakdown(op).catch(() => null);
  await prometheusFigures(prometheus, r);
  if (await heapSnapshot(op)) r.memory_after_snapshot_mib = await memoryBreakdown(op).catch(() => null);
  // The per-schedule gauges make /metrics grow with the schedules: what one scrape costs.
  const gz = await scrapeCost(op, 'gzip');
  const plain = await scrapeCost(op, 'identity');
  r.scrape_ms = round2(gz.ms);
  r.scrape_gzip_kib = round2(gz.bytes / 1024);
  r.scrape_kib = round2(plain.bytes / 1024);
  r.scrape_samples = gz.samples;
  r.scrape_identity_ms = round2(plain.ms);
  r.rss_after_scrapes_mib = round2(procMemoryMiB(pid).rss);
  say(`scale: /metrics ${r.scrape_samples} samples, ${r.scrape_kib} KiB (${r.scrape_gzip_kib} KiB gzip); scrape ${r.scrape_ms} ms gzip, ${r.scrape_identity_ms} ms plain; RSS after ${r.rss_after_scrapes_mib} MiB`);
  say(`scale: idle CPU ${r.idle_cpu_pct} % (/proc: ${r.idle_cpu_pct_proc} %); leader lost ${r.leader_losses} time(s); RSS peak (VmHWM) ${r.rss_mib} MiB (sampled ${r.rss_sampled_mib}), idle ${r.rss_idle_mib} MiB; heap peak ${r.heap_used_mib} MiB, idle ${r.heap_used_idle_mib} MiB`);
  say(`scale: RSS per schedule above the baseline ${r.rss_per_schedule_kib} KiB (idle ${r.rss_idle_mib} − baseline ${r.baseline_rss_mib} MiB, computed); ready ${r.ready_after_leading_s} s after leading; control plane over the idle window: ${CONTROL_PLANE.map((name) => `${name} ${r.control_plane[name].cpu_pct} % CPU, ${r.control_plane[name].rss_mib} MiB`).join(', ')}`);
  if (r.memory_idle_mib) say(`scale: idle memory: ${describeMemory(r.memory_idle_mib)}`);
  if (r.memory_after_snapshot_mib) say(`scale: after the heap snapshot's collection: ${describeMemory(r.memory_after_snapshot_mib)}`);
  say(`scale: Prometheus scraped ${r.prometheus_scrapes} times (${r.prometheus_scrapes_failed} failed), longest ${r.prometheus_scrape_max_ms} ms, ${r.prometheus_samples} samples`);
  return r;
}

/** What Prometheus itself saw of its scrapes over the whole run (its synthetic series). */
async function prometheusFigures(prometheus: PrometheusServer, r: ScaleResult): Promise<void> {
  const one = async (expr: string): Promise<number | null> => {
    const v = (await prometheus.vector(expr).catch(() => []))[0]?.value[1];
    return v === undefined ? null : Number(v);
  };
  const range = '[1h]';
  r.prometheus_scrapes = await one(`count_over_time(up${range})`);
  const up = await one(`sum_over_time(up${range})`);
  r.prometheus_scrapes_failed = r.prometheus_scrapes !== null && up !== null ? r.prometheus_scrapes - up : null;
  const longest = await one(`max_over_time(scrape_duration_seconds${range})`);
  r.prometheus_scrape_max_ms = longest === null ? null : round2(longest * 1000);
  r.prometheus_samples = await one('scrape_samples_scraped');
}

function describeMemory(m: MemoryBreakdown): string {
  return `RSS ${m.rss} MiB (anonymous ${m.rss_anon}, file ${m.rss_file}); heap used ${m.heap_used} of ${m.heap_committed} committed; external ${m.external}; anonymous outside them ${m.anon_outside_heap}`;
}
