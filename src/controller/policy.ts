// Whether a due slot becomes a Job: starting deadline and concurrency policy, judged on our own Jobs.
import type { Job, SecondCronJobSpec } from './api.js';

export type FireDecision =
  | { kind: 'create'; replace: Job[] }
  | { kind: 'skip'; reason: 'deadline' | 'forbid' };

export function decideFire(spec: SecondCronJobSpec, activeJobs: readonly Job[], slotMs: number, nowMs: number): FireDecision {
  if (pastDeadline(spec, slotMs, nowMs)) return { kind: 'skip', reason: 'deadline' };
  const policy = spec.concurrencyPolicy ?? 'Allow';
  if (activeJobs.length > 0 && policy === 'Forbid') return { kind: 'skip', reason: 'forbid' };
  if (activeJobs.length > 0 && policy === 'Replace') return { kind: 'create', replace: [...activeJobs] };
  return { kind: 'create', replace: [] };
}

export function pastDeadline(spec: SecondCronJobSpec, slotMs: number, nowMs: number): boolean {
  return spec.startingDeadlineSeconds !== undefined && nowMs - slotMs > spec.startingDeadlineSeconds * 1000;
}

/**
 * How long a create for this slot may wait in the queue and keep retrying: until the starting
 * deadline when one is set, otherwise one minute (which also bounds the queue if the API server
 * stays slower than the schedules for long).
 */
export function createDeadlineMs(spec: SecondCronJobSpec, slotMs: number): number {
  return slotMs + (spec.startingDeadlineSeconds ?? 60) * 1000;
}
