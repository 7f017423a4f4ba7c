// `next NAME | -f FILE`: the next fire times, computed by the operator's own slot math (src/schedule).
import type { SecondCronJob } from '../../controller/api.js';
import { rfc3339 } from '../../controller/status.js';
import { compileSecondCronJob } from '../../controller/verdict.js';
import { formatDuration, formatInZone } from '../../schedule/format.js';
import type { OutputFormat } from '../args.js';
import type { PluginContext } from '../context.js';
import { PluginError } from '../errors.js';
import { readResources } from '../manifests.js';
import { serialize, table } from '../print.js';
import { getSecondCronJob } from '../resources.js';

export interface NextFires {
  name: string;
  namespace?: string;
  schedule?: string;
  /** spec.schedule as it runs (`H` resolved for namespace/name); absent for intervalSeconds. */
  resolvedSchedule?: string;
  timeZone: string;
  suspended: boolean;
  /** Each slot in the schedule's zone (with its offset) and in UTC. */
  next: { time: string; utc: string }[];
}

export async function nextCommand(cmd: { resource?: string; files: string[]; count: number; output: OutputFormat }, ctx: PluginContext): Promise<void> {
  const nowMs = ctx.nowMs();
  let resources: SecondCronJob[];
  if (cmd.resource !== undefined) {
    const { rest, namespace } = await ctx.target();
    resources = [await getSecondCronJob(rest, namespace, cmd.resource)];
  } else {
    resources = readResources(cmd.files, ctx.readStdin).map(({ object }) => {
      if (object.metadata.creationTimestamp) return object;
      if (object.spec.intervalSeconds !== undefined) ctx.warn(`${object.metadata.name}: intervalSeconds counts from the resource's creation; shown as if created now`);
      return { ...object, metadata: { ...object.metadata, creationTimestamp: rfc3339(nowMs) } };
    });
    // H hashes namespace/name: a file without a namespace lands in kubectl's (-n, else the context's).
    if (resources.some((r) => !r.metadata.namespace && usesHash(r))) {
      const { namespace } = await ctx.target();
      resources = resources.map((r) => (r.metadata.namespace ? r : { ...r, metadata: { ...r.metadata, namespace } }));
    }
  }
  const results = resources.map((scj) => fires(scj, nowMs, cmd.count));
  for (const r of results) if (r.suspended) ctx.warn(`${r.name} is suspended: no Jobs start at these times until it is resumed`);
  if (cmd.output !== 'table') {
    ctx.out(serialize(results, cmd.output));
    return;
  }
  ctx.out(
    results
      .map((r) => {
        const rows = r.next.map((n, i) => [String(i + 1), n.time, n.utc, `in ${formatDuration(Date.parse(n.utc) - nowMs)}`]);
        const body = table(['#', `TIME (${r.timeZone})`, 'UTC', 'FROM NOW'], rows);
        const hashed = r.resolvedSchedule === r.schedule ? '' : `schedule ${JSON.stringify(r.schedule)} resolved to ${JSON.stringify(r.resolvedSchedule)} for ${r.namespace ?? ''}/${r.name}\n`;
        return results.length > 1 ? `${r.name}:\n${hashed}${body}` : `${hashed}${body}`;
      })
      .join('\n\n'),
  );
}

function fires(scj: SecondCronJob, nowMs: number, count: number): NextFires {
  const compiled = compileSecondCronJob(scj, nowMs);
  if (!compiled.ok) throw new PluginError(`${scj.metadata.name}: ${compiled.reason}: ${compiled.message}`);
  const timeZone = scj.spec.timeZone || 'UTC';
  const next: NextFires['next'] = [];
  for (let t = nowMs; next.length < count; ) {
    const slot = compiled.source.next(t);
    if (slot === null) break;
    next.push({ time: formatInZone(slot, timeZone), utc: formatInZone(slot, 'UTC') });
    t = slot;
  }
  return {
    name: scj.metadata.name,
    ...(scj.metadata.namespace ? { namespace: scj.metadata.namespace } : {}),
    ...(scj.spec.schedule !== undefined ? { schedule: scj.spec.schedule } : {}),
    ...(compiled.resolvedSchedule !== undefined ? { resolvedSchedule: compiled.resolvedSchedule } : {}),
    timeZone,
    suspended: scj.spec.suspend === true,
    next,
  };
}

function usesHash(scj: SecondCronJob): boolean {
  return typeof scj.spec.schedule === 'string' && scj.spec.schedule.includes('H');
}
