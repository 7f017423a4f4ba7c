// What a schedule's slots are computed from, and its hash: status.nextScheduleTime is written with the
// hash, so a leader reading it back knows whether it still speaks for the current schedule — an edit of
// the Job template or a history limit bumps the generation but changes no slot.
import { createHash } from 'node:crypto';

import type { SecondCronJob } from '../../api/resources.js';

/** The fields slots are computed from: an edit of any of them starts the schedule anew. */
export function scheduleSpecOf(scj: SecondCronJob): string {
  const { schedule, schedules, intervalSeconds, timeZone, notBefore, notAfter } = scj.spec;
  return JSON.stringify([schedule, intervalSeconds, timeZone, schedules, notBefore, notAfter]);
}

// Per spec object: plan() and status read it on every reconcile of a 1 s schedule, and the cache keeps
// the same spec object for a resource until its spec changes (slim.ts).
const hashes = new WeakMap<SecondCronJob['spec'], string>();

export function scheduleHash(scj: SecondCronJob): string {
  let hash = hashes.get(scj.spec);
  if (hash === undefined) hashes.set(scj.spec, (hash = hashOfScheduleSpec(scheduleSpecOf(scj))));
  return hash;
}

/** The hash of a scheduleSpecOf() string (an older spec the controller remembers). */
export function hashOfScheduleSpec(spec: string): string {
  return createHash('sha256').update(spec).digest('hex').slice(0, 16);
}
