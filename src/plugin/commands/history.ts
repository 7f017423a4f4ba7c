// `history [NAME…|-A]`: the Jobs SecondCronJobs own, newest first, with the schedule's times.
import { ANNOTATION_INSTANTIATE, type Job, type SecondCronJob } from '../../api/resources.js';
import { listOwnedJobs } from '../../controller/finalizer.js';
import { jobOutcome, jobSlotMs, jobStartMs } from '../../controller/job-state.js';
import { formatDuration, formatInZone } from '../../schedule/format.js';
import type { Output, Scope } from '../args.js';
import type { PluginContext } from '../context.js';
import { emit, table } from '../print.js';
import { call, secondCronJobsIn } from '../resources.js';

export interface HistoryEntry {
  namespace: string;
  secondCronJob: string;
  job: string;
  /** The slot (RFC 3339 in the schedule's zone); absent for a Job started by hand. */
  slot?: string;
  manual: boolean;
  created: string;
  /** Slot to creation (whole seconds: creationTimestamp has no more). */
  triggerLatencySeconds?: number;
  outcome: 'Complete' | 'Failed' | 'Running' | 'Pending' | 'Deleting';
  durationSeconds?: number;
}

export async function historyCommand(cmd: { scope: Scope; output: Output }, ctx: PluginContext): Promise<void> {
  const { rest } = await ctx.target();
  const owners = await secondCronJobsIn(cmd.scope, ctx);
  const nowMs = ctx.nowMs();
  const entries: HistoryEntry[] = [];
  for (const scj of owners) entries.push(...historyOf(scj, await call(rest, () => listOwnedJobs(rest, scj)), nowMs));
  const one = owners.length === 1 && 'names' in cmd.scope ? owners[0] : undefined;
  emit(ctx, cmd.output, entries, () => entries.map((e) => `job.batch/${e.job}`), () => {
    if (one && entries.length === 0) {
      return `No Jobs of secondcronjob.secondcron.io/${one.metadata.name} (history limits keep ${one.spec.successfulJobsHistoryLimit ?? 3} succeeded, ${one.spec.failedJobsHistoryLimit ?? 1} failed).`;
    }
    if (entries.length === 0) return 'No Jobs found.';
    const cells = (e: HistoryEntry): string[] => [
      e.job,
      e.slot ?? 'manual',
      e.created,
      e.triggerLatencySeconds === undefined ? '-' : formatDuration(e.triggerLatencySeconds * 1000),
      e.outcome,
      e.durationSeconds === undefined ? '-' : formatDuration(e.durationSeconds * 1000),
    ];
    if (one && cmd.output.format !== 'wide') return table(['JOB', `SLOT (${one.spec.timeZone || 'UTC'})`, 'CREATED', 'LATENCY', 'OUTCOME', 'DURATION'], entries.map(cells));
    // Several schedules (or -o wide): whose Job, where, and each slot in its own schedule's zone.
    const zone = new Map(owners.map((o) => [`${o.metadata.namespace ?? ''}/${o.metadata.name}`, o.spec.timeZone || 'UTC']));
    return table(
      ['NAMESPACE', 'SECONDCRONJOB', 'JOB', 'SLOT', 'CREATED', 'LATENCY', 'OUTCOME', 'DURATION', 'TIME ZONE'],
      entries.map((e) => [e.namespace, e.secondCronJob, ...cells(e), zone.get(`${e.namespace}/${e.secondCronJob}`) ?? 'UTC']),
    );
  });
}

export function historyOf(scj: SecondCronJob, jobs: readonly Job[], nowMs: number): HistoryEntry[] {
  const zone = scj.spec.timeZone || 'UTC';
  return [...jobs]
    .sort((a, b) => jobStartMs(b) - jobStartMs(a) || b.metadata.name.localeCompare(a.metadata.name))
    .map((job) => {
      const slotMs = jobSlotMs(job);
      const createdMs = Date.parse(job.metadata.creationTimestamp);
      const manual = job.metadata.annotations?.[ANNOTATION_INSTANTIATE] === 'manual' || Number.isNaN(slotMs);
      const entry: HistoryEntry = { namespace: scj.metadata.namespace ?? '', secondCronJob: scj.metadata.name, job: job.metadata.name, manual, created: formatInZone(createdMs, zone), outcome: outcomeOf(job) };
      if (!Number.isNaN(slotMs)) {
        entry.slot = formatInZone(slotMs, zone);
        entry.triggerLatencySeconds = Math.max(0, Math.round((createdMs - Math.floor(slotMs / 1000) * 1000) / 1000));
      }
      const startMs = Date.parse(job.status?.startTime ?? '');
      if (!Number.isNaN(startMs)) {
        const endMs = Date.parse(job.status?.completionTime ?? '') || finishedConditionMs(job) || nowMs;
        entry.durationSeconds = Math.max(0, Math.round((endMs - startMs) / 1000));
      }
      return entry;
    });
}

function outcomeOf(job: Job): HistoryEntry['outcome'] {
  const outcome = jobOutcome(job);
  if (outcome) return outcome;
  if (job.metadata.deletionTimestamp) return 'Deleting';
  return (job.status?.active ?? 0) > 0 ? 'Running' : 'Pending';
}

function finishedConditionMs(job: Job): number | undefined {
  const c = job.status?.conditions?.find((x) => x.status === 'True' && (x.type === 'Complete' || x.type === 'Failed'));
  const ms = Date.parse(c?.lastTransitionTime ?? '');
  return Number.isNaN(ms) ? undefined : ms;
}
