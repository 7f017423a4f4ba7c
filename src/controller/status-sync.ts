// Status: derived from the caches and the ledger (never accumulated by hand), written when it changes,
// coalesced per resource, and written at once for every resource whose change waits when the leader
// hands over (DESIGN §3 "Handover"), so the next leader reads every decided slot back.
import type { MonotonicClock, WallClock } from '../clock/clock.js';
import { isNotFound } from '../kube/api-error.js';
import type { RestClient } from '../kube/rest.js';
import type { SecondCronJob, SecondCronJobStatus } from '../api/resources.js';
import type { Cache } from './cache.js';
import type { Executor } from './executor.js';
import { NotLeaderError } from './fenced-rest.js';
import type { ScheduleRecord, ScheduleRecords } from './schedule-records.js';
import { firstOpenSlotMs } from './slots/plan.js';
import { type ReadyState, desiredStatus, statusEquals } from './status.js';
import { nextStatusWriteMs } from './status-phase.js';
import { writeStatus } from './status-writer.js';
import { nextWindowChangeMs, windowState } from '../schedule/index.js';

// Status is written at most once a second per resource. For a schedule that fires at least every
// FAST_SCHEDULE_MS a change waits for the schedule's own phase in a 4 s cycle (status-phase.ts), so the
// changes of a 1 s schedule (a Job created, then finished, every second) go out together: one patch
// per 4 s instead of one or two per Job (DESIGN §2: for such schedules lastScheduleTime/active may trail
// by up to 5 s), and the patches of many schedules are spread over the cycle, after the creates of
// each second, also when all of them changed at once (an API freeze, a takeover). A new Ready verdict,
// and the changes of other schedules, are written at once.
const STATUS_MIN_INTERVAL_MS = 1_000;
const FAST_SCHEDULE_MS = 5_000;
// Statuses written at once while handing over (bounded: thousands may wait).
const HANDOVER_WRITES_AT_ONCE = 16;

export interface StatusSyncDeps {
  writes: RestClient;
  scjs: Cache<SecondCronJob>;
  records: ScheduleRecords;
  executor: Executor;
  wall: WallClock;
  mono: MonotonicClock;
}

export class StatusSync {
  constructor(private readonly d: StatusSyncDeps) {}

  /**
   * Writes the status when it changed and its moment came; else says when to look again (also when the
   * window opens or ends, so that the Ready reason changes then, slot or no slot).
   */
  async update(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<number | undefined> {
    const windowChange = rec.compiled.ok ? nextWindowChangeMs(rec.compiled.window, this.d.wall.nowMs()) : null;
    const again = await this.whenDue(key, scj, rec);
    if (windowChange === null) return again;
    return Math.min(again ?? Number.POSITIVE_INFINITY, windowChange - this.d.wall.nowMs() + 1);
  }

  private async whenDue(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<number | undefined> {
    const now = this.d.mono.nowMs();
    if (rec.statusDueMonoMs === undefined) {
      const want = this.desired(key, scj, rec);
      if (this.unchanged(scj, rec, want)) return undefined;
      const earliest = Math.max(rec.lastStatusWriteMonoMs + STATUS_MIN_INTERVAL_MS, now);
      // What the resource shows: our last write while the cache has not caught up with it.
      const shown = rec.lastWrittenStatus?.from === scj.metadata.resourceVersion ? rec.lastWrittenStatus.status : scj.status;
      if (!this.firesOften(rec) || readyChanged(shown, want)) rec.statusDueMonoMs = earliest;
      else {
        const wallNow = this.d.wall.nowMs();
        rec.statusDueMonoMs = now + nextStatusWriteMs(key, wallNow + (earliest - now)) - wallNow;
      }
    }
    // A change waits for its moment, and nothing is compared until then: a 1 s schedule is reconciled
    // on every Job event, and comparing its status each time was 5 % of the operator's CPU at 100 Jobs/s.
    if (rec.statusDueMonoMs > now) return rec.statusDueMonoMs - now;
    rec.statusDueMonoMs = undefined;
    await this.write(key, scj, rec);
    return undefined;
  }

  /** Handing over: every status that differs from the cache is written now, whatever its coalescing. */
  async writeAll(): Promise<void> {
    const keys = [...this.d.records.entries()].map(([key]) => key);
    const next = async (): Promise<void> => {
      for (let key = keys.pop(); key !== undefined; key = keys.pop()) {
        const scj = this.d.scjs.get(key);
        const rec = this.d.records.get(key);
        if (!scj || !rec || scj.metadata.deletionTimestamp) continue;
        rec.statusDueMonoMs = undefined;
        await this.write(key, scj, rec).catch(() => undefined); // best effort: the Lease is released next
      }
    };
    await Promise.all(Array.from({ length: HANDOVER_WRITES_AT_ONCE }, next));
  }

  private async write(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<void> {
    const want = this.desired(key, scj, rec);
    if (this.unchanged(scj, rec, want)) return;
    try {
      await writeStatus(this.d.writes, scj, want);
    } catch (err) {
      if (isNotFound(err) || err instanceof NotLeaderError) return;
      throw err;
    } finally {
      rec.lastStatusWriteMonoMs = this.d.mono.nowMs();
    }
    rec.lastWrittenStatus = { status: want, from: scj.metadata.resourceVersion };
  }

  /**
   * Our own patch not in the cache yet: the cache still holds the version we computed it from. Once
   * the cache moved on, it is the truth, also when someone else (a previous leader, a human) wrote
   * status since: a leader elected again must repair it, not trust its memory.
   */
  private unchanged(scj: SecondCronJob, rec: ScheduleRecord, want: SecondCronJobStatus): boolean {
    const written = rec.lastWrittenStatus;
    if (written !== undefined && written.from !== scj.metadata.resourceVersion) {
      // The cache moved on: it is the truth from now on, and the copy would only hold memory (a
      // status per schedule, 8 MiB of a 10,000-schedule heap when kept; heap snapshot, issue 24).
      rec.lastWrittenStatus = undefined;
      return statusEquals(scj.status, want);
    }
    return statusEquals(scj.status, want) || (written !== undefined && statusEquals(written.status, want));
  }

  /** The next two slots are at most FAST_SCHEDULE_MS apart. */
  private firesOften(rec: ScheduleRecord): boolean {
    if (!rec.compiled.ok) return false;
    const first = rec.compiled.source.next(this.d.wall.nowMs());
    const second = first === null ? null : rec.compiled.source.next(first);
    return first !== null && second !== null && second - first <= FAST_SCHEDULE_MS;
  }

  private desired(key: string, scj: SecondCronJob, rec: ScheduleRecord): SecondCronJobStatus {
    const ownedJobs = this.d.executor.ownedJobs(key, scj, rec, true);
    // What a new leader reads back as "decided before this"; while suspended not shown as the next slot.
    const openMs = rec.compiled.ok ? firstOpenSlotMs(rec.compiled.source, scj, ownedJobs, rec.ledger) : null;
    return desiredStatus({
      scj,
      ownedJobs,
      nextSlotMs: scj.spec.suspend ? null : openMs,
      ...(scj.spec.suspend && openMs !== null ? { suspendedNextSlotMs: openMs } : {}),
      resolvedSchedule: rec.compiled.ok ? rec.compiled.resolvedSchedule : undefined,
      resolvedSchedules: rec.compiled.ok ? rec.compiled.resolvedSchedules : undefined,
      lastScheduledMs: rec.ledger.lastScheduledMs,
      ...(rec.ledger.queuedSlotMs !== undefined ? { queuedSlotMs: rec.ledger.queuedSlotMs } : {}),
      ready: readyState(scj, rec, this.d.wall.nowMs()),
      readyGeneration: readyGeneration(scj, rec),
      nowMs: this.d.wall.nowMs(),
    });
  }
}

/** The Ready condition (verdict, reason, generation) is not the one the resource shows: written at once. */
function readyChanged(current: SecondCronJobStatus | undefined, want: SecondCronJobStatus): boolean {
  const a = current?.conditions?.find((c) => c.type === 'Ready');
  const b = want.conditions?.find((c) => c.type === 'Ready');
  return a?.status !== b?.status || a?.reason !== b?.reason || a?.observedGeneration !== b?.observedGeneration;
}

/** An invalid schedule is a complete verdict; a valid one needs the Job template judged too. */
function readyGeneration(scj: SecondCronJob, rec: ScheduleRecord): number | undefined {
  const generation = scj.metadata.generation;
  if (!rec.compiled.ok || rec.templateGeneration === generation) return generation;
  return scj.status?.conditions?.find((c) => c.type === 'Ready')?.observedGeneration;
}

function readyState(scj: SecondCronJob, rec: ScheduleRecord, nowMs: number): ReadyState {
  const compiled = rec.compiled;
  if (!compiled.ok) return { status: 'False', reason: compiled.reason, message: compiled.message };
  if (rec.template.kind === 'invalid' && rec.templateGeneration === scj.metadata.generation) {
    return { status: 'False', reason: 'InvalidJobTemplate', message: rec.template.message };
  }
  if (scj.spec.suspend) return { status: 'True', reason: 'Suspended', message: 'Suspended: no new Jobs are started' };
  // Outside its window nothing is wrong: Ready stays True, the reason says why no Job starts.
  const window = windowState(compiled.window, nowMs);
  if (window === 'NotYetActive') return { status: 'True', reason: 'NotYetActive', message: `Not yet active: the first slot is at or after notBefore ${scj.spec.notBefore ?? ''}` };
  if (window === 'WindowEnded') return { status: 'True', reason: 'WindowEnded', message: `Window ended: no slot after notAfter ${scj.spec.notAfter ?? ''}` };
  return { status: 'True', reason: 'Scheduled', message: `Scheduled: ${compiled.describe}` };
}
