// What a leader's reconcile does besides deciding slots: the finalizer (on, and off after the owned
// Jobs are deleted), a server-side dry run of the Job template once per generation, and pruning the
// history beyond its limits.
import { isNotFound } from '../kube/api-error.js';
import type { RestClient } from '../kube/rest.js';
import type { Logger } from '../log.js';
import type { WallClock } from '../clock/clock.js';
import type { SecondCronJob } from '../api/resources.js';
import type { EventSink } from './events.js';
import type { Executor } from './executor.js';
import { addFinalizer, deleteJob, hasFinalizer, listOwnedJobs, removeFinalizer } from './finalizer.js';
import { type ScheduleRecord, TEMPLATE_VALID } from './schedule-records.js';
import { dryRunJob } from './verdict.js';

export interface HousekeepingDeps {
  /** Reads (the owned Jobs listed before the finalizer goes). */
  rest: RestClient;
  /** Fenced writes. */
  writes: RestClient;
  executor: Executor;
  events: EventSink;
  wall: WallClock;
  log: Logger;
}

export class Housekeeping {
  constructor(private readonly d: HousekeepingDeps) {}

  async ensureFinalizer(scj: SecondCronJob): Promise<void> {
    if (!hasFinalizer(scj)) await addFinalizer(this.d.writes, scj);
  }

  /**
   * Deletes the finished Jobs beyond the history limits, chosen now, when the deletes go out; the
   * executor deletes (it remembers the accepted deletes in the ledger).
   */
  async prune(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<void> {
    const jobs = this.d.executor.historyToPrune(key, scj, rec);
    if (jobs.length > 0) await this.d.executor.deleteJobs(scj, rec, jobs, 'history limit');
  }

  async finalize(key: string, scj: SecondCronJob, rec: ScheduleRecord): Promise<void> {
    const owned = await listOwnedJobs(this.d.rest, scj);
    await Promise.all(owned.map((j) => deleteJob(this.d.writes, j)));
    try {
      await removeFinalizer(this.d.writes, scj);
    } catch (err) {
      if (!isNotFound(err)) throw err; // gone already: someone else finished it
    }
    // The Job deletions above queue this key again before the cache shows the resource gone: it must
    // not be finalized twice (a JSON patch test against a finalizer list that is no longer there).
    rec.finalized = true;
    if (owned.length > 0) this.d.events.record(scj, 'Normal', 'SuccessfulDelete', `Deleted ${owned.length} job(s) before removing the SecondCronJob`);
    this.d.log.info('finalized', { key, jobsDeleted: owned.length });
  }

  /** Server-side dry run of the Job template once per generation: catches what the CRD schema cannot. */
  async judgeTemplate(scj: SecondCronJob, rec: ScheduleRecord): Promise<void> {
    const generation = scj.metadata.generation;
    if (rec.templateGeneration === generation) return;
    // A previous leader already judged this generation: its Ready condition is the verdict. This keeps
    // a failover (or a restart with thousands of resources) from re-running every dry run.
    const ready = scj.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.observedGeneration !== undefined && ready.observedGeneration === generation) {
      rec.templateGeneration = generation;
      rec.template = ready.reason === 'InvalidJobTemplate' ? { kind: 'invalid', message: ready.message } : TEMPLATE_VALID;
      return;
    }
    // The manifest is built when its turn comes: thousands queued at start-up would otherwise all be in
    // memory. A timeout or 5xx is no verdict on the template: it throws, and the queue retries with backoff.
    const verdict = await dryRunJob(this.d.writes, scj, this.d.wall.nowMs());
    if (verdict.ok) {
      rec.template = TEMPLATE_VALID;
    } else {
      rec.template = { kind: 'invalid', message: verdict.message };
      this.d.events.record(scj, 'Warning', verdict.reason, verdict.message);
    }
    rec.templateGeneration = generation;
  }
}
