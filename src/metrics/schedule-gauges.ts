// Per-schedule gauges, the way cert-manager exports per-Certificate state and kube-state-metrics
// per-CronJob state: labelled {namespace, name} only (plus one info series carrying the schedule),
// kept from the SecondCronJob cache's events and removed with the resource.
//
// Every replica exports them, not only the leader: status lives in the API and every replica's
// cache holds it, so followers tell the same truth at no extra API cost, and the series do not jump
// from one pod to another at each handover or rolling update (a scrape without them would restart
// every pending alert's `for:` and resolve, then re-fire, every firing one). The price is one copy
// per replica in Prometheus; the shipped rules and dashboard aggregate by (namespace, name).
//
// A scrape reads rows prepared when the cache changed: no timestamp parsing, no label escaping and
// no prom-client formatting at scrape time, and a gzip scrape (Prometheus) sends blocks compressed
// when they last changed; see bench/README.md for the cost at 10,000 schedules.
import type { SecondCronJob } from '../api/resources.js';
import { RESOLVED_SEPARATOR } from '../schedule/index.js';
import { objectKey } from '../kube/types.js';
import { type DeflatedPiece, deflatePiece } from './gzip-pieces.js';

type Key = 'namespace' | 'name';
type InfoKey = Key | 'schedule' | 'interval_seconds' | 'time_zone' | 'concurrency_policy';

/** What one SecondCronJob contributes: timestamps in Unix seconds, undefined = no series. */
export interface ScheduleRow {
  labels: Record<Key, string>;
  info: Record<InfoKey, string>;
  created: number;
  lastSchedule: number | undefined;
  lastSuccessful: number | undefined;
  nextSchedule: number | undefined;
  queued: number | undefined;
  activeJobs: number;
  ready: 0 | 1;
  suspended: 0 | 1;
}

export function scheduleRow(scj: SecondCronJob): ScheduleRow {
  const { spec, status } = scj;
  const ready = status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return {
    labels: keyLabels(scj),
    info: infoLabels(scj),
    created: unixSeconds(scj.metadata.creationTimestamp) ?? 0,
    lastSchedule: unixSeconds(status?.lastScheduleTime),
    lastSuccessful: unixSeconds(status?.lastSuccessfulTime),
    nextSchedule: unixSeconds(status?.nextScheduleTime),
    queued: unixSeconds(status?.queuedScheduleTime),
    activeJobs: status?.active?.length ?? status?.activeCount ?? 0,
    ready: ready ? 1 : 0,
    suspended: spec.suspend ? 1 : 0,
  };
}

function keyLabels(scj: SecondCronJob): Record<Key, string> {
  return { namespace: scj.metadata.namespace ?? '', name: scj.metadata.name };
}

function infoLabels(scj: SecondCronJob): Record<InfoKey, string> {
  const { spec } = scj;
  return {
    ...keyLabels(scj),
    // A list of expressions shows as they are joined in status.resolvedSchedule.
    schedule: spec.schedule ?? spec.schedules?.join(RESOLVED_SEPARATOR) ?? '',
    interval_seconds: spec.intervalSeconds !== undefined ? String(spec.intervalSeconds) : '',
    // The operator's default for cron schedules; an interval has no time zone.
    time_zone: spec.schedule !== undefined || spec.schedules !== undefined ? (spec.timeZone ?? 'UTC') : '',
    concurrency_policy: spec.concurrencyPolicy ?? 'Allow',
  };
}

function unixSeconds(rfc3339: string | undefined): number | undefined {
  if (!rfc3339) return undefined;
  const ms = Date.parse(rfc3339);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

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
export const SCHEDULE_METRIC_NAMES: readonly string[] = FAMILIES.map((f) => f.name);

/**
 * A row as a block keeps it: the cached SecondCronJob itself and its values by family (NaN = no
 * series). Label texts are made from the resource when its lines are rendered: with them kept, the
 * gauges held ~640 bytes a schedule, now ~270 (a script at 100,000, issue 36).
 */
interface Row {
  scj: SecondCronJob;
  values: number[];
}

function rowOf(scj: SecondCronJob): Row {
  const row = scheduleRow(scj);
  return { scj, values: FAMILIES.map((f) => f.value(row) ?? Number.NaN) };
}

/**
 * Rows kept in blocks in insertion order (as one Map would keep them), each block with its text
 * compressed once per change: a scrape at 10,000 schedules re-renders only the blocks whose schedules
 * changed since the last one, instead of 7 MiB of text (bench/README.md, issue 24).
 */
const BLOCK_ROWS = 128;

class Block {
  readonly rows = new Map<string, Row>();
  /** One piece per family, built on the first gzip scrape after that family's lines in this block changed. */
  private readonly deflated: (DeflatedPiece | undefined)[] = FAMILIES.map(() => undefined);

  /** Forgets the pieces of the families whose line differs between two versions of a row (all for an added or removed one). */
  changed(before: Row | undefined, after: Row | undefined): void {
    const infoChanged = before !== undefined && after !== undefined && infoText(before.scj) !== infoText(after.scj);
    for (let i = 0; i < FAMILIES.length; i++) {
      if (!before || !after || valueDiffers(i, before, after) || ((FAMILIES[i] as Family).info && infoChanged)) this.deflated[i] = undefined;
    }
  }

  /** `lines` renders the block's rows when its piece of the family must be made again. */
  piece(family: number, lines: (block: Block) => BlockLines): DeflatedPiece {
    return (this.deflated[family] ??= deflatePiece(Buffer.from(lines(this).family(family))));
  }
}

/** The key labels {namespace, name} never change for a key; the info labels are compared apart. */
function valueDiffers(family: number, a: Row, b: Row): boolean {
  const va = a.values[family] as number;
  const vb = b.values[family] as number;
  return va !== vb && !(Number.isNaN(va) && Number.isNaN(vb));
}

export class ScheduleGauges {
  private readonly blocks: Block[] = [];
  private readonly blockOf = new Map<string, Block>();
  private readonly headers = FAMILIES.map((f) => `# HELP ${f.name} ${f.help}\n# TYPE ${f.name} gauge\n`);
  private readonly deflatedHeaders = this.headers.map((h) => deflatePiece(Buffer.from(h)));

  set(scj: SecondCronJob): void {
    const key = objectKey(scj);
    const row = rowOf(scj);
    let block = this.blockOf.get(key);
    if (!block) {
      block = this.blocks[this.blocks.length - 1];
      if (!block || block.rows.size >= BLOCK_ROWS) this.blocks.push((block = new Block()));
      this.blockOf.set(key, block);
    }
    block.changed(block.rows.get(key), row);
    block.rows.set(key, row);
  }

  delete(scj: SecondCronJob): void {
    const key = objectKey(scj);
    const block = this.blockOf.get(key);
    if (!block) return;
    this.blockOf.delete(key);
    block.changed(block.rows.get(key), undefined);
    block.rows.delete(key);
    this.compact(block);
  }

  /** Merges a thinned block into its successor when both fit in one, keeping the order. */
  private compact(block: Block): void {
    const i = this.blocks.indexOf(block);
    const next = this.blocks[i + 1];
    if (block.rows.size === 0) {
      this.blocks.splice(i, 1);
    } else if (next && block.rows.size + next.rows.size <= BLOCK_ROWS) {
      const merged = new Block();
      for (const b of [block, next]) {
        for (const [key, row] of b.rows) {
          merged.rows.set(key, row);
          this.blockOf.set(key, merged);
        }
      }
      this.blocks.splice(i, 2, merged);
    }
  }

  /** The families in Prometheus text format (0.0.4), in pieces of one block each; `names` restricts the families. */
  *text(names?: ReadonlySet<string>): Generator<string> {
    const blocks = this.blocks.map((b) => new BlockLines([...b.rows.values()]));
    for (let i = 0; i < FAMILIES.length; i++) {
      if (names && !names.has((FAMILIES[i] as Family).name)) continue;
      yield this.headers[i] as string;
      for (const lines of blocks) yield lines.family(i);
    }
  }

  /** The same text as deflated pieces, taken at once (one consistent scrape); blocks unchanged since the last scrape cost nothing. */
  deflated(names?: ReadonlySet<string>): DeflatedPiece[] {
    const rendered = new Map<Block, BlockLines>();
    const lines = (b: Block): BlockLines => {
      let l = rendered.get(b);
      if (!l) rendered.set(b, (l = new BlockLines([...b.rows.values()])));
      return l;
    };
    const out: DeflatedPiece[] = [];
    for (let i = 0; i < FAMILIES.length; i++) {
      if (names && !names.has((FAMILIES[i] as Family).name)) continue;
      out.push(this.deflatedHeaders[i] as DeflatedPiece);
      for (const b of this.blocks) out.push(b.piece(i, lines));
    }
    return out;
  }
}

/**
 * One block's sample lines, family by family, for one scrape. Eight of the nine families carry the same
 * {namespace, name} labels: their text is made once per row and scrape, not once per family.
 */
class BlockLines {
  #keyTexts: string[] | undefined;

  constructor(private readonly rows: readonly Row[]) {}

  /** prom-client's own formatting of 80,000 samples blocked the event loop 0.6–1 s. */
  family(family: number): string {
    const f = FAMILIES[family] as Family;
    const keyTexts = f.info ? undefined : (this.#keyTexts ??= this.rows.map((r) => keyText(r.scj)));
    let out = '';
    this.rows.forEach((r, i) => {
      const v = r.values[family] as number;
      if (!Number.isNaN(v)) out += `${f.name}${keyTexts ? keyTexts[i] : infoText(r.scj)} ${v}\n`;
    });
    return out;
  }
}

function keyText(scj: SecondCronJob): string {
  return `{namespace="${escaped(scj.metadata.namespace ?? '')}",name="${escaped(scj.metadata.name)}"}`;
}

function infoText(scj: SecondCronJob): string {
  return labelText(infoLabels(scj));
}

function labelText(labels: Record<string, string>): string {
  let out = '';
  for (const k in labels) out += `${out === '' ? '{' : ','}${k}="${escaped(labels[k] as string)}"`;
  return `${out}}`;
}

const NEEDS_ESCAPE = /[\\"\n]/;

/** A label value as the text format writes it: backslash, double quote and line feed escaped. */
function escaped(v: string): string {
  return NEEDS_ESCAPE.test(v) ? v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`)) : v;
}
