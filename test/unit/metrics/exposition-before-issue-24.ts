// The per-schedule exposition exactly as main rendered it before issue 24 (376fc8f): one string,
// family by family, rows in Map insertion order. Frozen here as the reference the streamed and
// gzipped answer must equal byte for byte (exposition.test.ts). Families added since (the Enqueue
// queued slot, issue 35) are added here in the same place, the rendering left as it was.
import type { SecondCronJob } from '../../../src/api/resources.js';
import { objectKey } from '../../../src/kube/types.js';
import { type ScheduleRow, scheduleRow } from '../../../src/metrics/schedule-gauges.js';

interface Family {
  name: string;
  help: string;
  /** The info series carries more labels than {namespace, name}. */
  info?: true;
  value(r: ScheduleRow): number | undefined;
}

const FAMILIES: readonly Family[] = [
  {
    name: 'secondcron_schedule_info',
    help: 'Always 1 per SecondCronJob; labels carry its schedule or interval, time zone and concurrency policy.',
    info: true,
    value: () => 1,
  },
  { name: 'secondcron_schedule_created_timestamp_seconds', help: 'Creation time of the SecondCronJob (Unix seconds).', value: (r) => r.created },
  {
    name: 'secondcron_schedule_last_schedule_timestamp_seconds',
    help: 'status.lastScheduleTime: the slot of the latest Job (Unix seconds); absent before the first one.',
    value: (r) => r.lastSchedule,
  },
  {
    name: 'secondcron_schedule_last_successful_timestamp_seconds',
    help: 'status.lastSuccessfulTime: when the latest successful Job completed (Unix seconds); absent before the first success.',
    value: (r) => r.lastSuccessful,
  },
  {
    name: 'secondcron_schedule_next_schedule_timestamp_seconds',
    help: 'status.nextScheduleTime: the next slot (Unix seconds); absent while suspended or not Ready.',
    value: (r) => r.nextSchedule,
  },
  {
    name: 'secondcron_schedule_queued_timestamp_seconds',
    help: 'status.queuedScheduleTime: concurrencyPolicy Enqueue, the slot waiting for a running Job to finish (Unix seconds); absent when none waits.',
    value: (r) => r.queued,
  },
  { name: 'secondcron_schedule_active_jobs', help: 'Jobs of the SecondCronJob still running (status.active).', value: (r) => r.activeJobs },
  { name: 'secondcron_schedule_ready', help: '1 if the Ready condition is True, else 0 (False, Unknown or not written yet).', value: (r) => r.ready },
  { name: 'secondcron_schedule_suspended', help: '1 if spec.suspend is true, else 0.', value: (r) => r.suspended },
];

/** The families render() writes, all gauges (for the checks that every shipped query reads a real metric). */

export class ReferenceGauges {
  private readonly rows = new Map<string, ScheduleRow>();

  set(scj: SecondCronJob): void {
    this.rows.set(objectKey(scj), scheduleRow(scj));
  }

  delete(scj: SecondCronJob): void {
    this.rows.delete(objectKey(scj));
  }

  render(): string {
    let out = '';
    for (const f of FAMILIES) {
      out += `# HELP ${f.name} ${f.help}\n# TYPE ${f.name} gauge\n`;
      for (const r of this.rows.values()) {
        const v = f.value(r);
        if (v !== undefined) out += `${f.name}${labelText(f.info ? r.info : r.labels)} ${v}\n`;
      }
    }
    return out;
  }
}

function labelText(labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))}"`);
  return `{${pairs.join(',')}}`;
}
