// History limits: keep the newest N successful and M failed Jobs, delete the older finished ones.
import type { Job } from './api.js';
import { finishedAtMs, jobOutcome } from './job-state.js';

export function jobsToPrune(jobs: readonly Job[], successfulLimit: number, failedLimit: number): Job[] {
  const byAgeDesc = (a: Job, b: Job): number => finishedAtMs(b) - finishedAtMs(a);
  const live = jobs.filter((j) => !j.metadata.deletionTimestamp);
  const succeeded = live.filter((j) => jobOutcome(j) === 'Complete').sort(byAgeDesc);
  const failed = live.filter((j) => jobOutcome(j) === 'Failed').sort(byAgeDesc);
  return [...succeeded.slice(successfulLimit), ...failed.slice(failedLimit)];
}
