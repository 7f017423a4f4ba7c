// `history NAME`: the Jobs a SecondCronJob owns, newest first, with the schedule's times.
import { ANNOTATION_INSTANTIATE, type Job, type SecondCronJob } from '../../controller/api.js';
import { listOwnedJobs } from '../../controller/finalizer.js';
import { jobOutcome, jobSlotMs, jobStartMs } from '../../controller/job-state.js';
import { formatDuration, formatInZone } from '../../schedule/format.js';
import type { OutputFormat } from '../args.js';
import type { PluginContext } from '../context.js';
import { serialize, table } from '../print.js';
import { call, getSecondCronJob } from '../resources.js';

export interface HistoryEntry {
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

export async function historyCommand(cmd: { resource: string; output: OutputFormat }, ctx: PluginContext): Promise<void> {
  const { rest, namespace } = await ctx.target();
  const scj = await getSecondCronJob(rest, namespace, cmd.resource);
  const jobs = await call(rest, () => listOwnedJobs(rest, scj));
  const entries = historyOf(scj, jobs, ctx.nowMs());
  if (cmd.output !== 'table') {
    ctx.out(serialize(entries, cmd.output));
    return;
  }
  if (entries.length === 0) {
    ctx.out(`No Jobs of secondcronjob.secondcron.io/${cmd.resource} (history limits keep ${scj.spec.successfulJobsHistoryLimit ?? 3} succeeded, ${scj.spec.failedJobsHistoryLimit ?? 1} failed).`);
    return;
  }
  const rows = entries.map((e) => [
    e.job,
    e.slot ?? 'manual',
    e.created,
    e.triggerLatencySeconds === undefined ? '-' : formatDuration(e.triggerLatencySeconds * 1000),
    e.outcome,
    e.durationSeconds === undefined ? '-' : formatDuration(e.durationSeconds * 1000),
  ]);
  ctx.out(table(['JOB', `SLOT (${scj.spec.timeZone || 'UTC'})`, 'CREATED', 'LATENCY', 'OUTCOME', 'DURATION'], rows));
}

export function historyOf(scj: SecondCronJob, jobs: readonly Job[], nowMs: number): HistoryEntry[] {
  const zone = scj.spec.timeZone || 'UTC';
  return [...jobs]
    .sort((a, b) => jobStartMs(b) - jobStartMs(a) || b.metadata.name.localeCompare(a.metadata.name))
    .map((job) => {
      const slotMs = jobSlotMs(job);
      const createdMs = Date.parse(job.metadata.creationTimestamp);
      const manual = job.metadata.annotations?.[ANNOTATION_INSTANTIATE] === 'manual' || Number.isNaN(slotMs);
      const entry: HistoryEntry = { job: job.metadata.name, manual, created: formatInZone(createdMs, zone), outcome: outcomeOf(job) };
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
