// What a schedule's slots are computed from, and its hash: status.nextScheduleTime is written with the
// hash, so a leader reading it back knows whether it still speaks for the current schedule — an edit of
// the Job template or a history limit bumps the generation but changes no slot.
import { createHash } from 'node:crypto';

import type { SecondCronJob } from '../../api/resources.js';

/** The fields slots are computed from: an edit of any of them starts the schedule anew. */
export function scheduleSpecOf(spec: SecondCronJob['spec']): string {
  const { schedule, schedules, intervalSeconds, timeZone, notBefore, notAfter } = spec;
  return JSON.stringify([schedule, intervalSeconds, timeZone, schedules, notBefore, notAfter]);
}

// Per spec object: plan() and status read it on every reconcile of a 1 s schedule, and the cache keeps
// the same spec object for a resource until its spec changes (slim.ts).
const hashes = new WeakMap<SecondCronJob['spec'], string>();

export function scheduleHash(scj: SecondCronJob): string {
  let hash = hashes.get(scj.spec);
  if (hash === undefined) {
    hash = hashOfScheduleSpec(scheduleSpecOf(scj.spec));
    // The status's own string when it holds this hash: the cache passes it on from version to version (slim.ts).
    if (scj.status?.scheduleHash === hash) hash = scj.status.scheduleHash;
    hashes.set(scj.spec, hash);
  }
  return hash;
}

/**
 * The hash of a scheduleSpecOf() string (an older spec the controller remembers): the first 8 bytes of
 * its SHA-256, in hex. Written as its own 16 characters: `.slice(0, 16)` of the whole hex digest kept
 * all 64 alive behind every cached hash (~80 bytes a schedule, a heap snapshot at 10,000, issue 36).
 */
export function hashOfScheduleSpec(spec: string): string {
  return createHash('sha256').update(spec).digest().toString('hex', 0, 8);
}
