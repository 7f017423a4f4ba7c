// An API server for the property test of the real controller: it keeps its own Jobs and the one
// SecondCronJob, answers each replica's requests (with faults the test chooses: late 429/503, 500s and
// timeouts that did or did not store, quota refusals), sends watch events, and judges from its own
// records what no operator counter can hide: a second stored create of one Job name (I11), more Jobs
// running at once than maxConcurrency under Forbid or Enqueue (I2), a create under Replace beside a running Job (I3), a create for an
// older slot after a newer one (I4).
import { FINALIZER, type Job, type SecondCronJob } from '../../../../src/api/resources.js';
import { ApiError } from '../../../../src/kube/api-error.js';
import type { RequestOptions, RestClient } from '../../../../src/kube/rest.js';
import type { FakeClock } from '../../../../src/clock/fake-clock.js';
import { isActive, jobSlotMs } from '../../../../src/controller/job-state.js';

export type CreateFault =
  | 'ok' //              201 at once
  | 'slow' //            stored at once, 201 after 1.5–2.5 s
  | 'throttled' //       429 at once (Retry-After 0.2–1 s)
  | 'throttled-late' //  429 after 1.5–2.5 s: APF's queue wait timed out
  | 'unavailable-late' //503 after 1.5–2.5 s
  | 'error-stored' //    stored, then 500
  | 'error-nothing' //   500, nothing stored
  | 'timeout-stored' //  stored, no answer before the client's timeout
  | 'timeout-nothing' // no answer, nothing stored
  | 'timeout-stored-late' // no answer; stored `lateStoreMs` after the client's timeout (a create still inside a frozen API server at its thaw)
  | 'quota' //           403 exceeded quota
  | 'invalid'; //        422

export type WatchEvent = { kind: 'job'; type: 'ADDED' | 'MODIFIED' | 'DELETED'; obj: Job } | { kind: 'scj'; type: 'MODIFIED'; obj: SecondCronJob };

export interface CreateRecord {
  name: string;
  slotMs: number;
  atMonoMs: number;
  replica: string;
  stored: boolean;
}

const SCJ_PATH = '/apis/secondcron.io/v1/namespaces/ns/secondcronjobs/hb';
const JOBS_PATH = '/apis/batch/v1/namespaces/ns/jobs';

export class FakeApiServer {
  readonly jobs = new Map<string, Job>();
  scj: SecondCronJob;
  /** Every create request received (not dry runs), in order. */
  readonly creates: CreateRecord[] = [];
  /** Stored creates (201s and the ones stored before a failed answer) per Job name. */
  readonly stored = new Map<string, number>();
  /** What the server saw that breaks an invariant (thrown inside a request it would be an answer). */
  readonly violations: string[] = [];
  /** Hard answers given, for the coverage check: 409s, 429/503s answered after the next slot, unknown outcomes (monotonic ms). */
  readonly hard = { alreadyExists: 0, lateRefusals: 0, unknownAtMonoMs: [] as number[], runningJobsDeleted: 0 };
  fault: CreateFault = 'ok';
  deletesFail = false;
  /** GETs of Jobs go unanswered (a timeout), as from a frozen API server. */
  getsFail = false;
  /** 'timeout-stored-late': how long after the client's timeout the Job is stored. */
  lateStoreMs = 0;
  /** A deleted Job stays (deletionTimestamp set) this long before it is gone. */
  deleteLingerMs = 0;
  /** Finished Jobs are deleted at once (ttlSecondsAfterFinished: 0). */
  ttlZero = false;
  /**
   * Whether every running replica's cache shows the Job. Hands and the TTL controller delete only such
   * Jobs: a Job stored by an attempt whose answer was lost and deleted before any watch showed it cannot
   * be told from one never stored, by any controller (a known limit, in docs/design-notes).
   */
  seenByAll: (name: string) => boolean = () => true;
  private readonly subscribers = new Set<(ev: WatchEvent) => void>();
  private rv = 1;
  private uid = 0;
  private maxSlotReceived = Number.NEGATIVE_INFINITY;
  /**
   * A schedule edited after the wall clock stepped back by this much starts anew at instants the old
   * schedule had already decided: its slots may come that much before the newest slot sent (a known
   * limit, in the closing note of issue 32). 0 otherwise.
   */
  reorderToleranceMs = 0;

  constructor(
    private readonly clock: FakeClock,
    scj: SecondCronJob,
    private readonly random: () => number,
  ) {
    this.scj = scj;
  }

  subscribe(fn: (ev: WatchEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  /** The client of one replica. */
  client(replica: string): RestClient {
    return {
      request: <T>(opts: RequestOptions): Promise<T> => this.handle(replica, opts) as Promise<T>,
      watch: () => new Promise<void>(() => {}),
    };
  }

  // ---- what the test does to the world ------------------------------------------------------

  /** A spec edit: generation bumped, as the API server does. */
  editSpec(edit: (spec: SecondCronJob['spec']) => SecondCronJob['spec']): void {
    this.scj = { ...this.scj, metadata: { ...this.scj.metadata, generation: (this.scj.metadata.generation ?? 1) + 1, resourceVersion: String(++this.rv) }, spec: edit(this.scj.spec) };
    this.emit({ kind: 'scj', type: 'MODIFIED', obj: this.scj });
  }

  /** The Job controller finishes the oldest running Job. */
  finishOldest(ok: boolean): void {
    const running = [...this.jobs.values()].filter((j) => isActive(j) && !j.metadata.deletionTimestamp).sort((a, b) => jobSlotMs(a) - jobSlotMs(b));
    const job = running[0];
    if (job) this.finish(job.metadata.name, ok);
  }

  finish(name: string, ok: boolean): void {
    const job = this.jobs.get(name);
    if (!job || !isActive(job)) return;
    const at = new Date(this.clock.wall.nowMs()).toISOString();
    const type = ok ? 'Complete' : 'Failed';
    this.update({ ...job, status: { ...job.status, conditions: [{ type, status: 'True', lastTransitionTime: at }], ...(ok ? { completionTime: at } : {}) } });
    if (this.ttlZero) this.removeOnceSeen(name);
  }

  private removeOnceSeen(name: string): void {
    if (!this.jobs.has(name)) return;
    if (this.seenByAll(name)) this.remove(name);
    else this.clock.timers.set(50, () => this.removeOnceSeen(name));
  }

  /** Someone deletes a Job (kubectl, a TTL). */
  deleteByHand(pick: number): void {
    const names = [...this.jobs.keys()].filter((n) => this.seenByAll(n));
    const name = names[pick % Math.max(1, names.length)];
    if (name !== undefined) this.remove(name);
  }

  running(): Job[] {
    return [...this.jobs.values()].filter(isActive);
  }

  // ---- requests -----------------------------------------------------------------------------

  private async handle(replica: string, opts: RequestOptions): Promise<unknown> {
    const { verb, path } = opts;
    if (verb === 'create' && path === JOBS_PATH) return opts.query?.dryRun ? {} : this.create(replica, opts);
    if (verb === 'get' && path.startsWith(`${JOBS_PATH}/`)) {
      if (this.getsFail) throw new ApiError(0, 'Timeout', 'request timed out');
      const job = this.jobs.get(path.slice(JOBS_PATH.length + 1));
      if (!job) throw new ApiError(404, 'NotFound', 'not found');
      return structuredClone(job);
    }
    if (verb === 'list' && path === JOBS_PATH) return { metadata: { resourceVersion: String(this.rv) }, items: [...this.jobs.values()].map((j) => structuredClone(j)) };
    if (verb === 'delete' && path.startsWith(`${JOBS_PATH}/`)) {
      if (this.deletesFail) throw new ApiError(500, 'InternalError', 'delete failed');
      const name = path.slice(JOBS_PATH.length + 1);
      const job = this.jobs.get(name);
      if (!job) throw new ApiError(404, 'NotFound', 'not found');
      if (isActive(job)) this.hard.runningJobsDeleted++;
      this.remove(name);
      return {};
    }
    if (verb === 'patch' && path === `${SCJ_PATH}/status`) {
      const patch = (opts.body as { status: Record<string, unknown> }).status;
      const status: Record<string, unknown> = { ...(this.scj.status ?? {}) };
      for (const [k, v] of Object.entries(patch)) {
        if (v === null) delete status[k];
        else status[k] = v;
      }
      this.scj = { ...this.scj, metadata: { ...this.scj.metadata, resourceVersion: String(++this.rv) }, status: structuredClone(status) };
      this.emit({ kind: 'scj', type: 'MODIFIED', obj: this.scj });
      return {};
    }
    if (verb === 'patch' && path === SCJ_PATH) {
      this.scj = { ...this.scj, metadata: { ...this.scj.metadata, resourceVersion: String(++this.rv), finalizers: [FINALIZER] } };
      this.emit({ kind: 'scj', type: 'MODIFIED', obj: this.scj });
      return {};
    }
    throw new ApiError(404, 'NotFound', `fake API server: no route for ${verb} ${path}`);
  }

  private create(replica: string, opts: RequestOptions): Promise<unknown> {
    const body = structuredClone(opts.body as Job);
    const name = body.metadata.name;
    const slotMs = jobSlotMs(body);
    if (slotMs < this.maxSlotReceived - this.reorderToleranceMs) this.violations.push(`I4: ${replica} sent a create for slot ${iso(slotMs)} after one for ${iso(this.maxSlotReceived)}`);
    this.maxSlotReceived = Math.max(this.maxSlotReceived, slotMs);
    const record: CreateRecord = { name, slotMs, atMonoMs: this.clock.mono.nowMs(), replica, stored: false };
    this.creates.push(record);
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const late = 1_500 + Math.floor(this.random() * 1_000);
    const retryAfter = 200 + Math.floor(this.random() * 800);
    const fault = this.fault;
    const interval = (this.scj.spec.intervalSeconds ?? 1) * 1000;
    const store = (): Job => {
      if (this.jobs.has(name)) {
        this.hard.alreadyExists++;
        throw new ApiError(409, 'AlreadyExists', `jobs.batch "${name}" already exists`);
      }
      const job = this.store(body);
      record.stored = true;
      return job;
    };
    const answerAfter = (ms: number, answer: () => unknown): Promise<unknown> =>
      new Promise((resolve, reject) => {
        // The client gives up at its timeout: an answer later than that is a timeout to it.
        const timedOut = ms >= timeoutMs;
        this.clock.timers.set(timedOut ? timeoutMs : ms, () => {
          if (timedOut) return reject(new ApiError(0, 'Timeout', 'request timed out'));
          try {
            resolve(answer());
          } catch (err) {
            reject(err);
          }
        });
      });
    switch (fault) {
      case 'ok':
        return Promise.resolve().then(() => metadataOf(store()));
      case 'slow': {
        const job = Promise.resolve().then(store);
        return job.then((j) => answerAfter(late, () => metadataOf(j)));
      }
      case 'throttled':
        return Promise.reject(new ApiError(429, 'TooManyRequests', 'throttled', retryAfter));
      case 'throttled-late':
        return answerAfter(late, () => {
          if (this.clock.wall.nowMs() >= slotMs + interval) this.hard.lateRefusals++;
          throw new ApiError(429, 'TooManyRequests', 'the request waited too long in its queue', retryAfter);
        });
      case 'unavailable-late':
        return answerAfter(late, () => {
          if (this.clock.wall.nowMs() >= slotMs + interval) this.hard.lateRefusals++;
          throw new ApiError(503, 'ServiceUnavailable', 'unavailable', retryAfter);
        });
      case 'error-stored':
        return Promise.resolve().then(() => {
          this.hard.unknownAtMonoMs.push(this.clock.mono.nowMs());
          store();
          throw new ApiError(500, 'InternalError', 'etcd answered late');
        });
      case 'error-nothing':
        this.hard.unknownAtMonoMs.push(this.clock.mono.nowMs());
        return Promise.reject(new ApiError(500, 'InternalError', 'etcd unavailable'));
      case 'timeout-stored':
        return Promise.resolve().then(() => {
          this.hard.unknownAtMonoMs.push(this.clock.mono.nowMs() + timeoutMs);
          store();
          return answerAfter(timeoutMs, () => undefined);
        });
      case 'timeout-nothing':
        this.hard.unknownAtMonoMs.push(this.clock.mono.nowMs() + timeoutMs);
        return answerAfter(timeoutMs, () => undefined);
      case 'timeout-stored-late':
        this.hard.unknownAtMonoMs.push(this.clock.mono.nowMs() + timeoutMs);
        this.clock.timers.set(timeoutMs + this.lateStoreMs, () => {
          // Unless a retry stored it meanwhile (the late write would be a 409 inside the server).
          if (!this.stored.has(name)) store();
        });
        return answerAfter(timeoutMs, () => undefined);
      case 'quota':
        return Promise.reject(new ApiError(403, 'Forbidden', `jobs "${name}" is forbidden: exceeded quota: jobs`, undefined, 'exceeded quota: jobs'));
      case 'invalid':
        return Promise.reject(new ApiError(422, 'Invalid', 'spec.template: Invalid value'));
    }
  }

  private store(body: Job): Job {
    const name = body.metadata.name;
    const now = new Date(this.clock.wall.nowMs()).toISOString();
    const job: Job = { ...body, metadata: { ...body.metadata, uid: `job-${++this.uid}`, resourceVersion: String(++this.rv), creationTimestamp: now }, status: { startTime: now } };
    const count = (this.stored.get(name) ?? 0) + 1;
    this.stored.set(name, count);
    if (count > 1) this.violations.push(`I11: Job ${name} stored ${count} times`);
    const policy = this.scj.spec.concurrencyPolicy ?? 'Allow';
    const others = this.running().filter((j) => j.metadata.name !== name);
    const max = this.scj.spec.maxConcurrency ?? 1;
    if ((policy === 'Forbid' || policy === 'Enqueue') && others.length >= max) this.violations.push(`I2: ${policy}, maxConcurrency ${max}: ${name} created while ${others.map((j) => j.metadata.name).join(', ')} run`);
    const undeleted = others.filter((j) => !j.metadata.deletionTimestamp);
    if (policy === 'Replace' && undeleted.length > 0) this.violations.push(`I3: Replace: ${name} created before ${undeleted.map((j) => j.metadata.name).join(', ')} was deleted`);
    this.jobs.set(name, job);
    this.emit({ kind: 'job', type: 'ADDED', obj: job });
    return job;
  }

  private update(job: Job): void {
    const next = { ...job, metadata: { ...job.metadata, resourceVersion: String(++this.rv) } };
    this.jobs.set(job.metadata.name, next);
    this.emit({ kind: 'job', type: 'MODIFIED', obj: next });
  }

  private remove(name: string): void {
    const job = this.jobs.get(name);
    if (!job) return;
    if (this.deleteLingerMs > 0 && !job.metadata.deletionTimestamp) {
      this.update({ ...job, metadata: { ...job.metadata, deletionTimestamp: new Date(this.clock.wall.nowMs()).toISOString() } });
      this.clock.timers.set(this.deleteLingerMs, () => this.gone(name));
      return;
    }
    this.gone(name);
  }

  private gone(name: string): void {
    const job = this.jobs.get(name);
    if (!job) return;
    this.jobs.delete(name);
    this.emit({ kind: 'job', type: 'DELETED', obj: job });
  }

  private emit(ev: WatchEvent): void {
    for (const fn of this.subscribers) fn(ev);
  }
}

function metadataOf(job: Job): Pick<Job, 'metadata'> {
  return { metadata: structuredClone(job.metadata) };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
