// History limits: keep the newest N successful and M failed Jobs, delete the older finished ones.
// Newest by start time, as upstream's CronJob controller (`byJobStartTime`): a Job that ran long and
// finished last is still older than the Job that started after it.
import type { Job } from '../api/resources.js';
import { jobOutcome } from './job-state.js';

export function jobsToPrune(jobs: readonly Job[], successfulLimit: number, failedLimit: number): Job[] {
  const byStartDesc = (a: Job, b: Job): number => startedAtMs(b) - startedAtMs(a);
  const live = jobs.filter((j) => !j.metadata.deletionTimestamp);
  const succeeded = live.filter((j) => jobOutcome(j) === 'Complete').sort(byStartDesc);
  const failed = live.filter((j) => jobOutcome(j) === 'Failed').sort(byStartDesc);
  return [...succeeded.slice(successfulLimit), ...failed.slice(failedLimit)];
}

/** When the Job controller started the Job; its creation when it never did. */
function startedAtMs(job: Job): number {
  return Date.parse(job.status?.startTime ?? job.metadata.creationTimestamp);
}
