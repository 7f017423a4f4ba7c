// Scenario: failover at scale. N SecondCronJobs that are not due during the run (daily, like the
// scale scenario) plus one canary every second, three replicas of the operator competing for one
// Lease. Once the leader has adopted every schedule (finalizer, status) and stopped writing, it is
// killed (SIGKILL: no Lease release, as a crashed node). Measured from outside the operators:
//
// - takeover: kill → the Lease names a surviving replica (watch arrival here);
// - the first on-time Job: kill → watch arrival of the canary's first Job whose slot is after the
//   takeover, and its own lateness (arrival − slot);
// - the new leader's writes in its first `windowS` seconds: its own request counters (every write
//   verb), minus the Lease renewals and what the canary's own Jobs, status and Events account for
//   (seen by watches). Everything else is a write to a schedule that was not due: a new leader must
//   not rewrite finalizers or status that are already right (issue 14: under 1 % of the schedules).
import type { Cluster } from '../../test/cluster/cluster.js';
import { JobWatcher } from '../../test/cluster/job-watcher.js';
import { type LatencySplit, describeSplit, splitLatency } from '../lib/latency-split.js';
import type { OperatorProcess } from '../../test/cluster/operator-process.js';
import { parseConfig } from '../../src/config.js';
import { idleSchedules } from '../lib/idle-schedules.js';
import { bulkCreate, createNamespace, restFor, scjManifest, scjPath } from '../lib/kube.js';
import { type Change, NamespaceWrites, type ScjChange } from '../lib/namespace-writes.js';
import { finishOperator, makeOperator, procCpuSeconds, scrape } from '../lib/operator.js';
import type { PromSamples } from '../lib/prom-text.js';
import { say, sleep, sleepUntil, waitUntil } from '../lib/progress.js';
import { round2 } from '../lib/stats.js';

export interface FailoverResult {
  schedules: number;
  replicas: number;
  lease_duration_s: number;
  /** Kill → the Lease names a surviving replica (its watch event arriving here), ms. */
  takeover_ms: number | null;
  takeover_by: 'lease holder change (watch)';
  /** Kill → "started leading" in the new leader's own log (its clock is this machine's), ms. */
  takeover_log_ms: number | null;
  /** Kill → watch arrival of the canary's first Job with a slot after the takeover, ms. */
  first_job_ms: number | null;
  first_job_slot: string | null;
  /** That Job's arrival − its slot, ms. */
  first_job_lateness_ms: number | null;
  /**
   * The new leader's canary Jobs (slots after the takeover, to the end of the window) split at the
   * API server's door (its audit log): the operator's share and the server's.
   */
  split: LatencySplit | null;
  /** The latest canary slot missed while nobody led, run by the new leader's catch-up: kill → arrival, ms. */
  catch_up_job_ms: number | null;
  /** Canary slots between the old leader's last Job and the first on-time one that got no Job. */
  canary_slots_missed: number | null;
  /** Every write request (create, patch, update, delete) of the new leader in its first writes_window_s. */
  writes_60s: number | null;
  writes_window_s: number;
  writes_by_verb: Record<string, number>;
  /** By the operator's `purpose` label, when its /metrics has one (null otherwise). */
  writes_by_purpose: Record<string, number> | null;
  /** Lease acquisition and renewals among those writes. */
  writes_lease: number | null;
  /** The canary's own writes among them, from watches: Job creates and deletes, status, Events. */
  writes_canary: number | null;
  /** writes_60s − writes_lease − writes_canary: writes about schedules that were not due (target < 1 % of schedules). */
  writes_60s_non_canary: number | null;
  /** The same as changes seen by watches on the other schedules: status / finalizer / other changes, Events, Jobs. */
  changed_non_canary: { status: number; finalizer: number; other: number; events: number; jobs: number };
  /** The replica that stayed a follower: its write requests in the same window (expected 0 but the Lease). */
  follower_writes: number | null;
  /** The new leader's CPU over the window (/proc), % of one core. */
  new_leader_cpu_pct: number | null;
  /** First leader start → every schedule had its finalizer and status and its writes were quiet, s. */
  startup_s: number | null;
  /** The start-up was over before the kill (else the window holds start-up writes and the target is not judged). */
  settled: boolean;
  old_leader: string | null;
  new_leader: string | null;
}

const NS = 'bench-failover';
const CANARY = 'canary';
const REPLICAS = ['a', 'b', 'c'];
const QUIET_MS = 3_000;
const WRITE_VERBS = ['create', 'patch', 'update', 'delete'];

const writesOf = (m: PromSamples, ...labels: string[]): number => WRITE_VERBS.reduce((n, verb) => n + m.sum('secondcron_api_requests_total', `verb="${verb}"`, ...labels), 0);
const inWindow = (list: Change[], from: number, to: number): Change[] => list.filter((c) => c.arrivedMs >= from && c.arrivedMs <= to);

/** When the operator's log says it started leading (its JSON `time`), epoch ms. */
function startedLeadingAt(op: OperatorProcess): number | null {
  const line = op.logs().split('\n').reverse().find((l) => l.includes('"started leading"'));
  const time = line ? /"time":"([^"]+)"/.exec(line)?.[1] : undefined;
  return time ? Date.parse(time) : null;
}

export async function runFailover(cluster: Cluster, opts: { schedules: number; windowS: number; settleTimeoutS: number; pods: boolean }): Promise<FailoverResult> {
  const rest = restFor(cluster.kubeconfigPath);
  const n = opts.schedules;
  const lease = parseConfig([], {});
  await createNamespace(rest, NS);
  say(`failover: creating ${n} daily SecondCronJobs (none due during the run)`);
  const bulk = await bulkCreate(rest, scjPath(NS), idleSchedules(n).map((s, i) => scjManifest(NS, `idle-${String(i).padStart(5, '0')}`, { schedule: s }, opts.pods)), 32);
  say(`failover: created in ${(bulk.ms / 1000).toFixed(1)} s; starting ${REPLICAS.length} replicas`);

  const r: FailoverResult = {
    schedules: n,
    replicas: REPLICAS.length,
    lease_duration_s: lease.leaseDurationMs / 1000,
    takeover_ms: null,
    takeover_by: 'lease holder change (watch)',
    takeover_log_ms: null,
    first_job_ms: null,
    first_job_slot: null,
    first_job_lateness_ms: null,
    catch_up_job_ms: null,
    canary_slots_missed: null,
    writes_60s: null,
    writes_window_s: opts.windowS,
    writes_by_verb: {},
    writes_by_purpose: null,
    writes_lease: null,
    writes_canary: null,
    writes_60s_non_canary: null,
    changed_non_canary: { status: 0, finalizer: 0, other: 0, events: 0, jobs: 0 },
    split: null,
    follower_writes: null,
    new_leader_cpu_pct: null,
    startup_s: null,
    settled: false,
    old_leader: null,
    new_leader: null,
  };
  const seen = await new NamespaceWrites(cluster.kubeconfigPath, NS, lease.leaseName).start();
  const jobs = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: NS }).start();
  const ops = REPLICAS.map((id) => makeOperator(cluster, NS, `bench-failover-${id}`));
  try {
    const t0 = performance.now();
    await Promise.all(ops.map((op) => op.start()));
    await Promise.all(ops.map((op) => op.ready(120_000)));
    const leaderOf = (): OperatorProcess | undefined => ops.find((op) => op.identity === seen.holder());
    if (!(await waitUntil(() => leaderOf() !== undefined, 60_000))) throw new Error(`failover: no replica took the Lease within 60 s\n${ops[0]?.logs(20)}`);
    say(`failover: ${leaderOf()?.identity} leads; waiting for its start-up writes (finalizer and status on each of ${n}) to end`);

    // Start-up: the leader's write counters quiet for QUIET_MS and every resource adopted.
    const deadline = performance.now() + opts.settleTimeoutS * 1000;
    let last = -1;
    let lastChange = performance.now();
    let lastLog = 0;
    while (performance.now() < deadline) {
      const dead = ops.find((op) => !op.running);
      if (dead) throw new Error(`failover: ${dead.identity} exited during start-up\n${dead.logs(20)}`);
      const leader = leaderOf();
      const m = leader ? await scrape(leader, 5_000).catch(() => undefined) : undefined;
      const c = seen.counts();
      if (m) {
        const w = m.sum('secondcron_api_requests_total', 'verb="patch"') + m.sum('secondcron_api_requests_total', 'verb="create"');
        if (w !== last) {
          last = w;
          lastChange = performance.now();
        } else if (c.finalizers >= n && c.status >= n && performance.now() - lastChange >= QUIET_MS) {
          r.settled = true;
          r.startup_s = round2((lastChange - t0) / 1000);
          break;
        }
      }
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        say(`  t=${((performance.now() - t0) / 1000).toFixed(0)} s leader ${leader?.identity ?? 'none'}: finalizers ${c.finalizers}/${n}, status ${c.status}/${n}, its writes ${last}`);
      }
      await sleep(1_000);
    }
    if (!r.settled) say(`failover: WARNING start-up not over after ${opts.settleTimeoutS} s; the new leader's window will hold start-up writes (target not judged)`);
    else say(`failover: start-up writes over after ${r.startup_s} s`);

    // The canary: due every second, so the takeover shows in its Jobs.
    await rest.request({ verb: 'create', path: scjPath(NS), body: scjManifest(NS, CANARY, { intervalSeconds: 1 }, opts.pods) });
    const canaryJobs = (): typeof jobs.seen => jobs.seen.filter((j) => j.owner === CANARY);
    if (!(await waitUntil(() => canaryJobs().length >= 3, 30_000))) throw new Error('failover: the canary made fewer than 3 Jobs in 30 s');

    const old = leaderOf();
    if (!old || old.pid === undefined) throw new Error('failover: no leader to kill');
    const survivors = ops.filter((op) => op !== old);
    const before = new Map<OperatorProcess, PromSamples>();
    for (const op of survivors) before.set(op, await scrape(op, 10_000));
    r.old_leader = old.identity ?? null;
    const killAt = Date.now();
    await old.kill();
    say(`failover: SIGKILL ${old.identity}; waiting for a survivor to take the Lease (lease duration ${r.lease_duration_s} s)`);

    const takeover = (): { holder: string; arrivedMs: number } | undefined =>
      seen.lease.find((l) => l.arrivedMs >= killAt && l.holder !== '' && l.holder !== old.identity);
    if (!(await waitUntil(() => takeover() !== undefined, 4 * lease.leaseDurationMs, 20))) throw new Error(`failover: no survivor took the Lease within ${(4 * lease.leaseDurationMs) / 1000} s`);
    const t = takeover() as { holder: string; arrivedMs: number };
    const next = survivors.find((op) => op.identity === t.holder);
    if (!next) throw new Error(`failover: the Lease names ${t.holder}, not one of the replicas`);
    const follower = survivors.find((op) => op !== next);
    r.new_leader = t.holder;
    r.takeover_ms = t.arrivedMs - killAt;
    const cpu0 = procCpuSeconds(next.pid as number);
    say(`failover: ${t.holder} took the Lease ${r.takeover_ms} ms after the kill; counting its writes for ${opts.windowS} s`);

    const end = t.arrivedMs + opts.windowS * 1000;
    await sleepUntil(end);
    const after = await scrape(next, 10_000);
    const followerAfter = follower ? await scrape(follower, 10_000).catch(() => undefined) : undefined;
    r.new_leader_cpu_pct = round2(((procCpuSeconds(next.pid as number) - cpu0) / ((Date.now() - t.arrivedMs) / 1000)) * 100);
    const logAt = startedLeadingAt(next);
    r.takeover_log_ms = logAt === null ? null : logAt - killAt;

    // The canary's Jobs around the gap.
    const canary = canaryJobs().sort((a, b) => a.slotMs - b.slotMs);
    const lastBefore = Math.max(...canary.filter((j) => j.arrivedMs <= killAt).map((j) => j.slotMs));
    const first = canary.find((j) => j.slotMs > t.arrivedMs);
    const catchUp = canary.filter((j) => j.slotMs > lastBefore && j.slotMs <= t.arrivedMs).pop();
    if (first) {
      r.first_job_ms = first.arrivedMs - killAt;
      r.first_job_slot = new Date(first.slotMs).toISOString();
      r.first_job_lateness_ms = first.arrivedMs - first.slotMs;
      r.canary_slots_missed = Math.round((first.slotMs - lastBefore) / 1000) - 1 - (catchUp ? 1 : 0);
    }
    r.catch_up_job_ms = catchUp ? catchUp.arrivedMs - killAt : null;
    const canarySplit = await splitLatency(
      cluster.auditLogPath,
      canary.filter((j) => j.slotMs > t.arrivedMs && j.slotMs <= end).map((j) => ({ namespace: j.namespace, name: j.name, dueMs: j.slotMs, arrivedMs: j.arrivedMs })),
    );
    r.split = canarySplit?.split ?? null;
    say(`failover: the new leader's canary Jobs split at the API server: ${describeSplit(r.split, 'operator')}`);

    // The new leader's writes over [kill, end]: before the takeover it only asked for the Lease.
    const delta = after.since(before.get(next) as PromSamples);
    for (const verb of WRITE_VERBS) {
      const v = delta.sum('secondcron_api_requests_total', `verb="${verb}"`);
      if (v > 0) r.writes_by_verb[verb] = v;
    }
    r.writes_60s = writesOf(delta);
    const purposes = [...delta.sumByLabel('secondcron_api_requests_total', 'purpose').keys()];
    if (purposes.length > 0) {
      r.writes_by_purpose = {};
      for (const p of purposes) {
        const v = writesOf(delta, `purpose="${p}"`);
        if (v > 0) r.writes_by_purpose[p] = v;
      }
    }
    // Only the Lease store sends `update` (src/election/kube-lease-store.ts).
    r.writes_lease = r.writes_by_purpose ? (r.writes_by_purpose.lease ?? 0) : (r.writes_by_verb.update ?? 0);
    const from = t.arrivedMs;
    const isCanary = (c: Change): boolean => c.name === CANARY;
    const scj = (kind: ScjChange): Change[] => inWindow(seen.scjChanges.get(kind) ?? [], from, end);
    const allScj = [...scj('status'), ...scj('finalizer'), ...scj('other')];
    const created = jobs.seen.filter((j) => j.arrivedMs >= from && j.arrivedMs <= end).map((j) => ({ name: j.owner, arrivedMs: j.arrivedMs }));
    const deleted = inWindow(seen.jobDeletes, from, end);
    const events = inWindow(seen.events, from, end);
    r.writes_canary = [...allScj, ...created, ...deleted, ...events].filter(isCanary).length;
    r.writes_60s_non_canary = Math.max(0, r.writes_60s - r.writes_lease - r.writes_canary);
    r.changed_non_canary = {
      status: scj('status').filter((c) => !isCanary(c)).length,
      finalizer: scj('finalizer').filter((c) => !isCanary(c)).length,
      other: scj('other').filter((c) => !isCanary(c)).length,
      events: events.filter((c) => !isCanary(c)).length,
      jobs: [...created, ...deleted].filter((c) => !isCanary(c)).length,
    };
    if (follower && followerAfter) r.follower_writes = writesOf(followerAfter.since(before.get(follower) as PromSamples));
    say(`failover: takeover ${r.takeover_ms} ms (log ${r.takeover_log_ms} ms); first on-time canary Job ${r.first_job_ms} ms after the kill (${r.first_job_lateness_ms} ms late); ` +
      `new leader's writes in ${opts.windowS} s: ${r.writes_60s} (Lease ${r.writes_lease}, canary ${r.writes_canary}, other ${r.writes_60s_non_canary}); ` +
      `other schedules changed: status ${r.changed_non_canary.status}, finalizer ${r.changed_non_canary.finalizer}, Events ${r.changed_non_canary.events}`);
    if (r.writes_by_purpose) say(`failover: new leader's writes by purpose: ${JSON.stringify(r.writes_by_purpose)}`);
    return r;
  } finally {
    jobs.stop();
    seen.stop();
    for (const op of ops) await finishOperator(op);
  }
}
