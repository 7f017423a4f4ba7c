// What the operator needs to know about one of its Jobs.
import { ANNOTATION_SCHEDULED_AT, type Job, type JobManifest, type SecondCronJob } from '../api/resources.js';

export type JobOutcome = 'Complete' | 'Failed' | undefined;

export function jobOutcome(job: Job): JobOutcome {
  for (const c of job.status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    // Like the upstream CronJob controller: only the terminal conditions count, not the
    // *Target/*CriteriaMet ones that appear while pods are still terminating.
    if (c.type === 'Complete') return 'Complete';
    if (c.type === 'Failed') return 'Failed';
  }
  return undefined;
}

/** Not finished. A Job being deleted stays active until it is gone, as in upstream's status.active. */
export function isActive(job: Job): boolean {
  return jobOutcome(job) === undefined;
}

/** The slot a Job was created for, from our annotation; NaN if absent or malformed. */
export function jobSlotMs(job: Pick<JobManifest, 'metadata'>): number {
  const v = job.metadata.annotations?.[ANNOTATION_SCHEDULED_AT];
  return v ? Date.parse(v) : Number.NaN;
}

/** When a Job was meant to start: its slot, or its creation for a Job started by hand (no slot). */
export function jobStartMs(job: Job): number {
  const slot = jobSlotMs(job);
  return Number.isNaN(slot) ? Date.parse(job.metadata.creationTimestamp) : slot;
}

/** Ours = controlled by this SecondCronJob's uid (a label alone could be copied by anyone). */
export function isOwnedBy(job: Job, scj: SecondCronJob): boolean {
  return (job.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === scj.metadata.uid);
}
