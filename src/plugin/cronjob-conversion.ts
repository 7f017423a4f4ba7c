// A batch/v1 CronJob → the equivalent SecondCronJob. Pure: the command fetches and applies.
import { API_VERSION, KIND, type SecondCronJobSpec } from '../api/resources.js';
import { parseCron } from '../schedule/cron-expression.js';
import { dayRuleDifference } from '../schedule/day-rules.js';
import { PluginError } from './errors.js';

export interface CronJob {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec: {
    schedule: string;
    timeZone?: string;
    startingDeadlineSeconds?: number;
    concurrencyPolicy?: 'Allow' | 'Forbid' | 'Replace';
    suspend?: boolean;
    successfulJobsHistoryLimit?: number;
    failedJobsHistoryLimit?: number;
    jobTemplate: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown> };
  };
}

export interface SecondCronJobManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec: SecondCronJobSpec;
}

/** Job names append "-<unix seconds>" to ours and must fit in 63 characters. */
const MAX_NAME = 52;

export function fromCronJob(cj: CronJob): { manifest: SecondCronJobManifest; warnings: string[] } {
  const warnings: string[] = [];
  const name = cj.metadata.name;
  if (name.length > MAX_NAME) throw new PluginError(`cronjob.batch/${name}: the name has ${name.length} characters; a SecondCronJob's may have at most ${MAX_NAME}`);

  let schedule = cj.spec.schedule.trim();
  let timeZone = cj.spec.timeZone;
  // CronJobs once accepted the zone inside the schedule ("CRON_TZ=Europe/Berlin 0 5 * * *").
  const prefixed = /^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$/.exec(schedule);
  if (prefixed) {
    timeZone ??= prefixed[1];
    schedule = (prefixed[2] as string).trim();
    warnings.push(`the time zone in the schedule ("${cj.spec.schedule}") became spec.timeZone: ${timeZone}`);
  }
  if (/^@every\s/i.test(schedule)) {
    throw new PluginError(`cronjob.batch/${name}: "${schedule}" counts from when the controller started; use spec.intervalSeconds (anchored on creation) instead`);
  }
  const parsed = parseCron(schedule);
  if (!parsed.ok) throw new PluginError(`cronjob.batch/${name}: ${parsed.message}`);
  const days = dayRuleDifference(schedule);
  if (days) warnings.push(`${days.message}; check that this is what you want`);

  const src = cj.spec;
  const spec: SecondCronJobSpec = { schedule, jobTemplate: stripNulls(templateOf(src.jobTemplate)) };
  if (timeZone) spec.timeZone = timeZone;
  if (src.startingDeadlineSeconds !== undefined) {
    spec.startingDeadlineSeconds = Math.max(1, src.startingDeadlineSeconds);
    if (src.startingDeadlineSeconds < 1) warnings.push('startingDeadlineSeconds 0 can never be met at second granularity; set to 1');
  }
  if (src.concurrencyPolicy) spec.concurrencyPolicy = src.concurrencyPolicy;
  if (src.suspend) {
    spec.suspend = true;
    warnings.push('the CronJob is suspended, so is the SecondCronJob');
  }
  if (src.successfulJobsHistoryLimit !== undefined) spec.successfulJobsHistoryLimit = src.successfulJobsHistoryLimit;
  if (src.failedJobsHistoryLimit !== undefined) spec.failedJobsHistoryLimit = src.failedJobsHistoryLimit;

  const metadata: SecondCronJobManifest['metadata'] = { name };
  if (cj.metadata.namespace) metadata.namespace = cj.metadata.namespace;
  if (cj.metadata.labels && Object.keys(cj.metadata.labels).length > 0) metadata.labels = { ...cj.metadata.labels };
  return { manifest: { apiVersion: API_VERSION, kind: KIND, metadata, spec }, warnings };
}

function templateOf(t: CronJob['spec']['jobTemplate']): SecondCronJobSpec['jobTemplate'] {
  const metadata: NonNullable<SecondCronJobSpec['jobTemplate']['metadata']> = {};
  if (t.metadata?.labels && Object.keys(t.metadata.labels).length > 0) metadata.labels = t.metadata.labels;
  if (t.metadata?.annotations && Object.keys(t.metadata.annotations).length > 0) metadata.annotations = t.metadata.annotations;
  return Object.keys(metadata).length > 0 ? { metadata, spec: t.spec } : { spec: t.spec };
}

/** The API server returns "creationTimestamp: null" in templates; a manifest need not carry it. */
function stripNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map(stripNulls) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, stripNulls(v)])) as T;
  }
  return value;
}
