// What the caches keep of each object. managedFields and kubectl's last-applied-configuration
// annotation often outweigh the rest of a SecondCronJob; a Job's pod template is never read.
// Dropping them on ingest is what makes 10,000 schedules fit in a small pod.
import { ANNOTATION_SCHEDULED_AT, type Condition, type Job, type ObjectReference, type SecondCronJob, type SecondCronJobStatus } from '../api/resources.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * One copy of the strings that recur from object to object (apiVersion, kind, namespace, finalizer
 * names, condition type, status, reason and message): JSON.parse gives every object its own. At most
 * MAX_INTERNED distinct strings are kept; past that, new ones are not shared, never dropped.
 */
const MAX_INTERNED = 1024;
const interned = new Map<string, string>();
const internedLists = new Map<string, readonly string[]>();

function intern(s: string): string {
  const kept = interned.get(s);
  if (kept !== undefined) return kept;
  if (interned.size < MAX_INTERNED) interned.set(s, s);
  return s;
}

function internList(list: string[]): string[] {
  const key = list.join('\n');
  const kept = internedLists.get(key);
  if (kept !== undefined) return kept as string[];
  const shared = Object.freeze(list.map(intern));
  if (internedLists.size < MAX_INTERNED) internedLists.set(key, shared);
  return shared as string[];
}

type JobTemplate = SecondCronJob['spec']['jobTemplate'];

/**
 * The Job template's spec as JSON text, made into objects again for each Job: only the Job builder
 * reads it, once a slot. As objects it was the largest part of a cached resource, ~450 bytes a schedule
 * for the bench's one-container template where the text is ~130 (a heap snapshot at 10,000, issue 36),
 * and a real template (env, resources, volumes) is larger still. Spreading the template drops `spec`
 * (a getter): read it as `template.spec`; JSON.stringify writes it whole.
 */
class PackedJobTemplate implements JobTemplate {
  readonly metadata?: JobTemplate['metadata'];
  readonly #spec: string;

  constructor(template: JobTemplate) {
    if (template.metadata !== undefined) this.metadata = template.metadata;
    this.#spec = JSON.stringify(template.spec);
  }

  /** A new copy each time: the caller may change it. */
  get spec(): JobTemplate['spec'] {
    return JSON.parse(this.#spec) as JobTemplate['spec'];
  }

  /** JSON.stringify writes the template as it came. */
  toJSON(): JobTemplate {
    return { ...(this.metadata !== undefined ? { metadata: this.metadata } : {}), spec: this.spec };
  }
}

/** A template the schema would reject (no spec object) stays as it came, for the verdict to name. */
function packedSpec(spec: SecondCronJob['spec']): SecondCronJob['spec'] {
  const template = spec.jobTemplate as JobTemplate | undefined;
  if (typeof template?.spec !== 'object' || template.spec === null) return spec;
  return { ...spec, jobTemplate: new PackedJobTemplate(template) };
}

/**
 * `cached`: the version the cache holds. The same object at the same generation has the same spec
 * (the API server bumps metadata.generation on every spec change of a resource with a status
 * subresource), so the cached spec is kept and the new copy dies young: at 10,000 schedules each
 * start-up status and finalizer write otherwise left a whole spec behind in V8's old space.
 */
export function slimSecondCronJob(scj: SecondCronJob, cached?: SecondCronJob): SecondCronJob {
  const { managedFields: _managed, ...metadata } = scj.metadata as SecondCronJob['metadata'] & { managedFields?: unknown };
  if (metadata.annotations?.[LAST_APPLIED] !== undefined) {
    const { [LAST_APPLIED]: _applied, ...annotations } = metadata.annotations;
    metadata.annotations = annotations;
  }
  if (metadata.namespace !== undefined) metadata.namespace = intern(metadata.namespace);
  if (metadata.finalizers) metadata.finalizers = internList(metadata.finalizers);
  const sameObject = cached !== undefined && cached.metadata.uid === metadata.uid;
  if (sameObject) {
    // The same strings as the version the cache holds: the new copies die young.
    metadata.uid = cached.metadata.uid;
    metadata.name = cached.metadata.name;
    metadata.creationTimestamp = cached.metadata.creationTimestamp;
  }
  const sameSpec = sameObject && metadata.generation !== undefined && cached.metadata.generation === metadata.generation;
  const slim: SecondCronJob = { ...scj, metadata, spec: sameSpec ? cached.spec : packedSpec(scj.spec) };
  if (scj.status) slim.status = slimStatus(scj.status, slim.spec, sameObject ? cached.status : undefined);
  if (slim.apiVersion !== undefined) slim.apiVersion = intern(slim.apiVersion);
  if (slim.kind !== undefined) slim.kind = intern(slim.kind);
  return slim;
}

/** Most schedules have no Job running most of the time: one empty list for all of them (frozen). */
const NO_ACTIVE_JOBS = Object.freeze([]) as unknown as ObjectReference[];

/**
 * The status with one copy of each string it repeats: the resolved schedule is the spec's own when they
 * are equal (no `H`), and the schedule hash the cached version's (the controller keeps the hash it
 * computed, scheduleHash: the same string). A heap snapshot at 10,000 found the expression three times
 * a schedule and the hash twice (issue 36), and an empty `active` list in each.
 */
function slimStatus(status: SecondCronJobStatus, spec: SecondCronJob['spec'], cached: SecondCronJobStatus | undefined): SecondCronJobStatus {
  const slim: SecondCronJobStatus = { ...status };
  if (status.conditions) {
    slim.conditions = status.conditions.map((c) => ({ ...c, type: intern(c.type), status: intern(c.status) as Condition['status'], reason: intern(c.reason), message: intern(c.message) }));
  }
  if (status.active?.length === 0) slim.active = NO_ACTIVE_JOBS;
  const expressions = spec.schedules ?? (spec.schedule !== undefined ? [spec.schedule] : []);
  if (status.resolvedSchedule !== undefined && status.resolvedSchedule === spec.schedule) slim.resolvedSchedule = spec.schedule;
  if (status.resolvedSchedules) slim.resolvedSchedules = status.resolvedSchedules.map((r, i) => (r === expressions[i] ? expressions[i] : r));
  if (status.scheduleHash !== undefined && status.scheduleHash === cached?.scheduleHash) slim.scheduleHash = cached.scheduleHash;
  return slim;
}

export function slimJob(job: Job): Job {
  const m = job.metadata;
  const scheduledAt = m.annotations?.[ANNOTATION_SCHEDULED_AT];
  return {
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
      ...(m.labels ? { labels: m.labels } : {}),
      ...(scheduledAt ? { annotations: { [ANNOTATION_SCHEDULED_AT]: scheduledAt } } : {}),
      ...(m.ownerReferences ? { ownerReferences: m.ownerReferences } : {}),
    },
    ...(job.status ? { status: job.status } : {}),
  };
}
