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

export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace';

export interface SecondCronJobSpec {
  schedule?: string;
  intervalSeconds?: number;
  timeZone?: string;
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
  /** spec.schedule with `H` resolved (as it runs). */
  resolvedSchedule?: string;
  /** Hash of the fields slots are computed from, when nextScheduleTime was written (slots/schedule-hash.ts). */
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
