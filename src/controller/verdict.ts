// The operator's verdict on a SecondCronJob, shared by the controller and `kubectl secondcron validate`
// so that both say the same thing: the schedule (InvalidSchedule / UnknownTimeZone) and a server-side
// dry run of the Job a slot would create (InvalidJobTemplate).
import { ApiError } from '../kube/api-error.js';
import type { RestClient } from '../kube/rest.js';
import { type CompileResult, compileResourceSchedule } from '../schedule/index.js';
import { type SecondCronJob, jobsPath } from '../api/resources.js';
import { buildJob } from './job-builder.js';

/**
 * Every scheduling field (schedule / schedules / intervalSeconds, timeZone, the window), as the plugin
 * compiles it: intervals anchored on creationTimestamp; `H` hashes namespace/name; nowMs only checks
 * that a cron schedule fires at all.
 */
export function compileSecondCronJob(scj: SecondCronJob, nowMs: number): CompileResult {
  return compileResourceSchedule(scj, nowMs);
}

export type TemplateVerdict = { ok: true } | { ok: false; reason: 'InvalidJobTemplate'; message: string };

/**
 * Asks the API server to admit (without storing) the Job for a slot at nowMs. A 4xx answer is a
 * verdict on the template; anything else (timeout, 5xx, a conflict) is not and is thrown.
 */
export async function dryRunJob(rest: RestClient, scj: SecondCronJob, nowMs: number): Promise<TemplateVerdict> {
  // A generated name: the slot's own name may already exist (the current second's Job of a 1 s
  // schedule), and AlreadyExists would be no verdict on the template.
  const { metadata: { name: _slotName, ...metadata }, ...manifest } = buildJob(scj, Math.floor(nowMs / 1000) * 1000);
  const job = { ...manifest, metadata: { ...metadata, generateName: `${scj.metadata.name}-` } };
  try {
    await rest.request({ verb: 'create', path: jobsPath(scj.metadata.namespace), query: { dryRun: 'All' }, body: job, timeoutMs: 10_000, discardResponse: true, purpose: 'dry_run' });
    return { ok: true };
  } catch (err) {
    if (!(err instanceof ApiError) || err.status < 400 || err.status >= 500 || err.status === 409) throw err;
    return { ok: false, reason: 'InvalidJobTemplate', message: `jobTemplate rejected by the API server: ${err.serverMessage ?? err.message}` };
  }
}
