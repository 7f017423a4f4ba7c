// The one slot accounting of the failure tests (failover, restarts, injected API faults): over a
// window of slots (fromMs, toMs], which slots of each schedule got no Job, the longest run of them
// (a missing tail included: a leader that never creates another Job shows up here), and whether the
// operators' own count of missed slots equals that number, both ways. Pure: the tests collect Jobs
// (from a watcher or a list) and counters (from the replicas' /metrics or Prometheus) themselves.

export interface ScheduleJobs {
  name: string;
  /** Slots (epoch ms) that got a Job; slots outside the window are ignored, repeats count once. */
  jobSlots: readonly number[];
}

export interface SlotWindow {
  /** Exclusive: the window's first slot is the first one after fromMs. */
  fromMs: number;
  /** Inclusive: the last slot of the window (choose it so its Job, if any, has had time to appear). */
  toMs: number;
  /** Slots are phaseMs + k·periodMs (1 s schedules: every whole second). Default 1000. */
  periodMs?: number;
  /** E.g. 7000 for a once-a-minute schedule at second 7 (periodMs 60000). Default 0. */
  phaseMs?: number;
}

export interface SlotAudit {
  fromMs: number;
  toMs: number;
  periodMs: number;
  /** Slots in the window, over every schedule. */
  slots: number;
  /** Slots in the window without a Job, over every schedule. */
  withoutJob: number;
  withoutJobBySchedule: Record<string, number>;
  /** Each slot without a Job. */
  missing: { schedule: string; slotMs: number }[];
  /** Longest run of slots without a Job, over every schedule. */
  longestRun: { schedule: string; firstMs: number; slots: number; atTail: boolean } | undefined;
  /** Largest distance between consecutive Jobs' slots in the window (a missing tail counts as if a Job followed the window): (longest run + 1) × period. */
  largestGapMs: number;
}

export interface SlotExpectations {
  /** Bound on largestGapMs. */
  maxGapMs: number;
  /** Missed slots the operators counted over the window (Σ secondcron_triggers_missed_total deltas); must equal withoutJob. */
  counted: number;
  /** secondcron_jobs_created_total{result="already_exists"} delta, when it must be 0 (no create timed out). */
  alreadyExists?: number;
}

export function auditSlots(schedules: readonly ScheduleJobs[], window: SlotWindow): SlotAudit {
  const periodMs = window.periodMs ?? 1000;
  const phaseMs = window.phaseMs ?? 0;
  const first = (Math.floor((window.fromMs - phaseMs) / periodMs) + 1) * periodMs + phaseMs;
  const last = Math.floor((window.toMs - phaseMs) / periodMs) * periodMs + phaseMs;
  let slots = 0;
  let withoutJob = 0;
  const withoutJobBySchedule: Record<string, number> = {};
  const missingSlots: SlotAudit['missing'] = [];
  let longestRun: SlotAudit['longestRun'];
  for (const schedule of schedules) {
    const have = new Set(schedule.jobSlots);
    let missing = 0;
    let run = 0;
    for (let s = first; s <= last; s += periodMs) {
      slots++;
      if (have.has(s)) {
        run = 0;
        continue;
      }
      missing++;
      missingSlots.push({ schedule: schedule.name, slotMs: s });
      run++;
      if (run > (longestRun?.slots ?? 0)) longestRun = { schedule: schedule.name, firstMs: s - (run - 1) * periodMs, slots: run, atTail: s === last };
    }
    withoutJobBySchedule[schedule.name] = missing;
    withoutJob += missing;
  }
  return { fromMs: window.fromMs, toMs: window.toMs, periodMs, slots, withoutJob, withoutJobBySchedule, missing: missingSlots, longestRun, largestGapMs: ((longestRun?.slots ?? 0) + 1) * periodMs };
}

/** One line for the test's diagnostics. */
export function describeAudit(audit: SlotAudit): string {
  const run = audit.longestRun;
  const longest = run ? `; longest run ${run.slots} slot(s) of ${run.schedule} from ${new Date(run.firstMs).toISOString()}${run.atTail ? ' up to the end of the window' : ''}` : '';
  return `${audit.slots} slots in (${new Date(audit.fromMs).toISOString()}, ${new Date(audit.toMs).toISOString()}], ${audit.withoutJob} without a Job; largest gap ${audit.largestGapMs} ms${longest}`;
}

/** What is wrong with the audit against the expectations; [] when nothing is. */
export function slotProblems(audit: SlotAudit, expect: SlotExpectations): string[] {
  const problems: string[] = [];
  const run = audit.longestRun;
  if (audit.largestGapMs > expect.maxGapMs) {
    const where = run?.atTail ? `no Job for the last ${run.slots} slot(s) of ${run.schedule} up to the end of the window (a leader that stopped creating Jobs)` : `${run?.slots ?? 0} slot(s) of ${run?.schedule ?? '?'} without a Job from ${new Date(run?.firstMs ?? 0).toISOString()}`;
    problems.push(`largest gap ${audit.largestGapMs} ms > ${expect.maxGapMs} ms: ${where}`);
  }
  if (expect.counted !== audit.withoutJob) {
    problems.push(`missed slots counted ${expect.counted} != slots without a Job ${audit.withoutJob} (${expect.counted > audit.withoutJob ? 'over' : 'under'}-counted by ${Math.abs(expect.counted - audit.withoutJob)})`);
  }
  if (expect.alreadyExists !== undefined && expect.alreadyExists !== 0) {
    problems.push(`${expect.alreadyExists} create(s) answered AlreadyExists: two decisions for one slot`);
  }
  return problems;
}

/** Instant of the middle of the current second (slots up to the current one are decided by then). */
export function nextMidSecond(nowMs: number): number {
  return Math.floor(nowMs / 1000) * 1000 + (nowMs % 1000 < 500 ? 500 : 1500);
}

/**
 * Misses compared schedule by schedule, both ways: for each schedule of the audit, the missed slots
 * the operators counted for it (`countedBySchedule`, keyed by schedule name) must equal its slots
 * without a Job. A sum over schedules lets one schedule's over-count hide another's under-count.
 * `exported` false (no process exported a per-schedule count): one problem saying so.
 */
/**
 * Per schedule, the operators' count of missed slots against the slots without a Job, both ways.
 * `overCountUpTo` (per schedule, default 0): slots a killed leader decided in the last seconds before
 * it died, which its status did not record yet (status trails by up to 5 s, DESIGN §2), are decided —
 * and counted — again by the next leader (I1 holds per leader term); only that many, never fewer.
 */
export function perScheduleProblems(audit: SlotAudit, counted: { exported: boolean; bySchedule: Record<string, number> }, overCountUpTo: Record<string, number> = {}): string[] {
  if (!counted.exported) return ['no per-schedule count of missed slots exported by the operator (misses cannot be compared schedule by schedule)'];
  const problems: string[] = [];
  for (const [schedule, withoutJob] of Object.entries(audit.withoutJobBySchedule)) {
    const c = counted.bySchedule[schedule] ?? 0;
    if (c >= withoutJob && c - withoutJob <= (overCountUpTo[schedule] ?? 0)) continue;
    problems.push(`${schedule}: missed slots counted ${c} != slots without a Job ${withoutJob} (${c > withoutJob ? 'over' : 'under'}-counted by ${Math.abs(c - withoutJob)}${overCountUpTo[schedule] ? `; up to ${overCountUpTo[schedule]} over allowed` : ''})`);
  }
  return problems;
}
