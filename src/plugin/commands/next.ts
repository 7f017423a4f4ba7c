// `next [NAME…|-A] | -f FILE`: the next fire times, computed by the operator's own slot math (src/schedule).
import type { SecondCronJob } from '../../api/resources.js';
import { rfc3339 } from '../../controller/status.js';
import { formatDuration, formatInZone } from '../../schedule/format.js';
import { type ScheduleSpec, type WindowState, compileResourceSchedule, windowState } from '../../schedule/index.js';
import type { Output, Scope } from '../args.js';
import type { PluginContext } from '../context.js';
import { PluginError } from '../errors.js';
import { readResources } from '../manifests.js';
import { emit, table } from '../print.js';
import { secondCronJobsIn } from '../resources.js';

export interface NextFires {
  name: string;
  namespace?: string;
  schedule?: string;
  /** spec.schedule as it runs (`H` resolved for namespace/name); absent for intervalSeconds. */
  resolvedSchedule?: string;
  /** spec.schedules as written and as they run (in order); absent otherwise. */
  schedules?: string[];
  resolvedSchedules?: string[];
  /** spec.notBefore / notAfter, and where now lies (no slot is listed outside the window). */
  notBefore?: string;
  notAfter?: string;
  window?: WindowState;
  timeZone: string;
  suspended: boolean;
  /** Each slot in the schedule's zone (with its offset) and in UTC. */
  next: { time: string; utc: string }[];
}

export async function nextCommand(cmd: { scope: Scope; files: string[]; count: number; output: Output }, ctx: PluginContext): Promise<void> {
  const nowMs = ctx.nowMs();
  let resources: SecondCronJob[];
  if (cmd.files.length === 0) {
    resources = await secondCronJobsIn(cmd.scope, ctx);
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
  // One schedule the operator rejects does not hide the others; it is reported and fails the command.
  const results: NextFires[] = [];
  const invalid: string[] = [];
  for (const scj of resources) {
    const r = fires(scj, nowMs, cmd.count);
    if (typeof r === 'string') invalid.push(r);
    else results.push(r);
  }
  if (resources.length === 1 && invalid.length === 1) throw new PluginError(invalid[0] as string);
  for (const r of results) if (r.suspended) ctx.warn(`${r.name} is suspended: no Jobs start at these times until it is resumed`);
  const allNamespaces = 'allNamespaces' in cmd.scope && cmd.scope.allNamespaces;
  const label = (r: NextFires): string => (allNamespaces ? `${r.namespace ?? ''}/${r.name}` : r.name);
  emit(ctx, cmd.output, results, () => results.map((r) => `secondcronjob.secondcron.io/${r.name}`), () => {
    if (results.length === 0) return allNamespaces ? 'No SecondCronJobs found.' : 'No SecondCronJobs found in this namespace.';
    if (cmd.output.format === 'wide') {
      const rows = results.flatMap((r) => r.next.map((n, i) => [r.namespace ?? '', r.name, String(i + 1), n.time, r.timeZone, n.utc, `in ${formatDuration(Date.parse(n.utc) - nowMs)}`, String(r.suspended)]));
      return table(['NAMESPACE', 'NAME', '#', 'TIME', 'TIME ZONE', 'UTC', 'FROM NOW', 'SUSPENDED'], rows);
    }
    return results
      .map((r) => {
        const rows = r.next.map((n, i) => [String(i + 1), n.time, n.utc, `in ${formatDuration(Date.parse(n.utc) - nowMs)}`]);
        const body = table(['#', `TIME (${r.timeZone})`, 'UTC', 'FROM NOW'], rows);
        const header = `${resolution(r)}${windowNote(r)}`;
        return results.length > 1 ? `${label(r)}:\n${header}${body}` : `${header}${body}`;
      })
      .join('\n\n');
  });
  if (invalid.length > 0) throw new PluginError(invalid.join('\n'));
}

/** The next slots, or why the operator would not run this schedule. */
function fires(scj: SecondCronJob, nowMs: number, count: number): NextFires | string {
  const compiled = compileResourceSchedule(scj, nowMs);
  if (!compiled.ok) return `${scj.metadata.name}: ${compiled.reason}: ${compiled.message}`;
  const timeZone = scj.spec.timeZone || 'UTC';
  // The scheduling fields, read as the schedule math declares them (spec.schedules and the window too).
  const spec: ScheduleSpec = scj.spec;
  const schedules = Array.isArray(spec.schedules) ? spec.schedules.filter((s): s is string => typeof s === 'string') : undefined;
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
    ...(compiled.resolvedSchedule !== undefined && schedules === undefined ? { resolvedSchedule: compiled.resolvedSchedule } : {}),
    ...(schedules !== undefined ? { schedules, resolvedSchedules: [...(compiled.resolvedSchedules ?? [])] } : {}),
    ...(typeof spec.notBefore === 'string' ? { notBefore: spec.notBefore } : {}),
    ...(typeof spec.notAfter === 'string' ? { notAfter: spec.notAfter } : {}),
    ...(compiled.window !== undefined ? { window: windowState(compiled.window, nowMs) } : {}),
    timeZone,
    suspended: scj.spec.suspend === true,
    next,
  };
}

function usesHash(scj: SecondCronJob): boolean {
  const spec: ScheduleSpec = scj.spec;
  const expressions: unknown[] = [spec.schedule, ...(Array.isArray(spec.schedules) ? spec.schedules : [])];
  return expressions.some((e) => typeof e === 'string' && e.includes('H'));
}

/** A line above the times when `H` changed what runs. */
function resolution(r: NextFires): string {
  const id = `${r.namespace ?? ''}/${r.name}`;
  if (r.schedules !== undefined) {
    const resolved = r.resolvedSchedules ?? [];
    return r.schedules.every((s, i) => s === resolved[i]) ? '' : `schedules ${JSON.stringify(r.schedules)} resolved to ${JSON.stringify(resolved)} for ${id}\n`;
  }
  return r.resolvedSchedule === r.schedule ? '' : `schedule ${JSON.stringify(r.schedule)} resolved to ${JSON.stringify(r.resolvedSchedule)} for ${id}\n`;
}

/** A line above the times when a window keeps slots out. */
function windowNote(r: NextFires): string {
  if (r.window === 'NotYetActive') return `not yet active: no slot before notBefore ${r.notBefore ?? ''}${r.notAfter ? ` (nor after notAfter ${r.notAfter})` : ''}\n`;
  if (r.window === 'WindowEnded') return `window ended: no slot after notAfter ${r.notAfter ?? ''}\n`;
  if (r.window === 'Active' && r.notAfter) return `no slot after notAfter ${r.notAfter}\n`;
  return '';
}
