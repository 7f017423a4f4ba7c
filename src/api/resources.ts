// The SecondCronJob resource (secondcron.io/v1) as the operator sees it, and the Job fields it reads.
import type { KubeObject, ObjectMeta } from '../kube/types.js';

export const GROUP = 'secondcron.io';
export const VERSION = 'v1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'SecondCronJob';
export const PLURAL = 'secondcronjobs';

export const FINALIZER = 'secondcron.io/cleanup';
export const LABEL_OWNER = 'secondcron.io/secondcronjob';
export const ANNOTATION_SCHEDULED_AT = 'secondcron.io/scheduled-at';
/** On Jobs started by hand (`kubectl secondcron run`), as kubectl marks CronJob runs: value "manual". */
export const ANNOTATION_INSTANTIATE = 'secondcron.io/instantiate';

/** Enqueue: a due slot that finds no free place waits for one (DESIGN §2 "Beyond CronJob"). */
export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace' | 'Enqueue';

export interface SecondCronJobSpec {
  schedule?: string;
  /** 1–16 cron expressions, exclusive with schedule and intervalSeconds; the union of their instants. */
  schedules?: string[];
  intervalSeconds?: number;
  timeZone?: string;
  /** RFC 3339: no slot before it (inclusive bound). */
  notBefore?: string;
  /** RFC 3339: no slot after it (inclusive bound); later than notBefore. */
  notAfter?: string;
  /** Forbid and Enqueue: at most this many Jobs active or being created (default 1). */
  maxConcurrency?: number;
  startingDeadlineSeconds?: number;
  concurrencyPolicy?: ConcurrencyPolicy;
  suspend?: boolean;
  successfulJobsHistoryLimit?: number;
  failedJobsHistoryLimit?: number;
  jobTemplate: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: Record<string, unknown>;
  };
}

export interface ObjectReference {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface SecondCronJobStatus {
  observedGeneration?: number;
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
  nextScheduleTime?: string;
  /** While suspended: what nextScheduleTime said then (the first slot not yet decided). */
  suspendedNextScheduleTime?: string;
  /** spec.schedule with `H` resolved (as it runs). */
  resolvedSchedule?: string;
  /** Each cron expression as it runs (`H` resolved), in spec order; one item for spec.schedule. */
  resolvedSchedules?: string[];
  /** Enqueue: the slot waiting for a free place (RFC 3339), absent when none waits. */
  queuedScheduleTime?: string;
  /** Hash of the fields slots are computed from, when nextScheduleTime or suspendedNextScheduleTime was written (slots/schedule-hash.ts). */
  scheduleHash?: string;
  activeCount?: number;
  active?: ObjectReference[];
  conditions?: Condition[];
}

export interface SecondCronJob extends KubeObject {
  spec: SecondCronJobSpec;
  status?: SecondCronJobStatus;
}

export interface JobCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
}

export interface Job extends KubeObject {
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: {
    conditions?: JobCondition[];
    startTime?: string;
    completionTime?: string;
    active?: number;
  };
}

/** A Job as we send it: the server fills in uid, resourceVersion and creationTimestamp. */
export type JobManifest = Omit<Job, 'metadata'> & {
  metadata: Omit<ObjectMeta, 'uid' | 'resourceVersion' | 'creationTimestamp'>;
};

export function collectionPath(namespace: string | undefined, plural = PLURAL): string {
  return namespace ? `/apis/${API_VERSION}/namespaces/${namespace}/${plural}` : `/apis/${API_VERSION}/${plural}`;
}

export function jobsPath(namespace?: string): string {
  return namespace ? `/apis/batch/v1/namespaces/${namespace}/jobs` : '/apis/batch/v1/jobs';
}
