import { compileSchedule } from './compile.js';
import { hashIdentity } from './hashed-fields.js';
import type { CompileResult, ScheduleSpec } from './types.js';

/** The parts of a SecondCronJob that decide its slots. */
export interface ScheduledResource {
  metadata: { name: string; namespace?: string; creationTimestamp: string };
  spec: ScheduleSpec;
}

/**
 * A SecondCronJob's schedule, as the operator and the plugin both compile it: every scheduling field
 * of the spec (schedule / schedules / intervalSeconds, timeZone, notBefore / notAfter), intervals
 * anchored on creationTimestamp, `H` hashed from namespace/name. nowMs only checks that a cron
 * expression fires at all.
 */
export function compileResourceSchedule(resource: ScheduledResource, nowMs: number): CompileResult {
  const { spec, metadata } = resource;
  return compileSchedule(
    { schedule: spec.schedule, schedules: spec.schedules, intervalSeconds: spec.intervalSeconds, timeZone: spec.timeZone, notBefore: spec.notBefore, notAfter: spec.notAfter },
    Date.parse(metadata.creationTimestamp),
    nowMs,
    hashIdentity(metadata.namespace, metadata.name),
  );
}
