/**
 * Parses a cron expression into per-field value sets.
 *
 * Syntax: 6 fields `sec min hour dom month dow`, or 5 fields (second = 0), or a macro (@daily ...).
 * Per field: `*`, `?` (dom/dow only), `a`, `a-b`, `*\/n`, `a-b/n`, `a/n`, comma lists; month names
 * JAN-DEC and day names SUN-SAT (any case); dow 0-7 with 0 and 7 = Sunday; `L` in dom = last day.
 * `H` (a value hashed from the schedule's identity) is replaced before parsing: hashed-fields.ts.
 * Every mistake is reported with the field it is in, because the message ends up in a user's
 * `kubectl describe` output.
 */

export interface CronFields {
  /** The six-field form the fields were parsed from (macros and 5-field input expanded). */
  readonly normalized: string;
  /** Each array is indexed by the field value; true = the value matches. */
  readonly seconds: readonly boolean[];
  readonly minutes: readonly boolean[];
  readonly hours: readonly boolean[];
  /** Indexed 1..31 (index 0 unused). */
  readonly daysOfMonth: readonly boolean[];
  /** `L`: the last day of each month. */
  readonly lastDayOfMonth: boolean;
  /** Indexed 1..12 (index 0 unused). */
  readonly months: readonly boolean[];
  /** Indexed 0..6, 0 = Sunday. */
  readonly daysOfWeek: readonly boolean[];
  /**
   * The dom / dow field starts with `*` or `?`. Like Vixie cron, when neither does, a day matches if
   * EITHER matches; otherwise both must.
   */
  readonly dayOfMonthStar: boolean;
  readonly dayOfWeekStar: boolean;
  /**
   * The minute or hour field starts with `*` (Vixie's MIN_STAR|HR_STAR). Such schedules follow the wall
   * clock across DST changes; the others are "fixed times" (see cron-slot-source.ts).
   */
  readonly wallClockWildcard: boolean;
}

export type CronParseResult = { ok: true; fields: CronFields } | { ok: false; message: string };

const MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

export interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** Value of names[0]. */
  readonly namesStartAt?: number;
  readonly allowsQuestionMark?: boolean;
  readonly allowsLast?: boolean;
}

/** The six fields in order, with the bounds the parser accepts. */
export const FIELD_SPECS: readonly FieldSpec[] = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31, allowsQuestionMark: true, allowsLast: true },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
    namesStartAt: 1,
  },
  {
    name: 'day-of-week',
    min: 0,
    max: 7,
    names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'],
    namesStartAt: 0,
    allowsQuestionMark: true,
  },
];

interface ParsedField {
  readonly values: boolean[];
  readonly last: boolean;
  readonly star: boolean;
}

/** Thrown inside this module only, turned into a result by parseCron. */
class FieldError extends Error {}

export function parseCron(expression: string): CronParseResult {
  const prefix = `schedule ${JSON.stringify(expression)}`;
  const trimmed = expression.trim();
  let sixFields: string;
  const zonePrefix = ZONE_PREFIX.exec(trimmed);
  if (zonePrefix) {
    const [, variable = '', zone = '', rest = ''] = zonePrefix;
    return {
      ok: false,
      message: `${prefix}: the "${variable}=" prefix is not supported; set spec.timeZone: ${zone} and schedule ${JSON.stringify(rest)}`,
    };
  }
  if (trimmed.startsWith('@')) {
    const [word = trimmed, ...trailing] = trimmed.split(/\s+/);
    if (word.toLowerCase() === '@every') return { ok: false, message: `${prefix}: ${everyHint(trailing.join(' '))}` };
    const macro = MACROS[word.toLowerCase()];
    if (macro === undefined) {
      return {
        ok: false,
        message: `${prefix}: unknown macro ${JSON.stringify(word)} (known: ${Object.keys(MACROS).join(', ')})`,
      };
    }
    if (trailing.length > 0) {
      return { ok: false, message: `${prefix}: unexpected text ${JSON.stringify(trailing.join(' '))} after ${JSON.stringify(word)} (a macro stands alone)` };
    }
    sixFields = macro;
  } else {
    const parts = trimmed === '' ? [] : trimmed.split(/\s+/);
    if (parts.length !== 5 && parts.length !== 6) {
      return { ok: false, message: `${prefix}: expected 5 or 6 fields, got ${parts.length}` };
    }
    sixFields = (parts.length === 5 ? ['0', ...parts] : parts).join(' ');
  }

  const texts = sixFields.split(' ');
  const parsed: ParsedField[] = [];
  for (let i = 0; i < FIELD_SPECS.length; i++) {
    const spec = FIELD_SPECS[i] as FieldSpec;
    const text = texts[i] as string;
    try {
      parsed.push(parseField(text, spec));
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      return { ok: false, message: `${prefix}: ${spec.name} field ${JSON.stringify(text)}: ${err.message}` };
    }
  }
  const [sec, min, hour, dom, month, dow] = parsed as [
    ParsedField,
    ParsedField,
    ParsedField,
    ParsedField,
    ParsedField,
    ParsedField,
  ];
  // Day-of-week 7 is another name for Sunday.
  const daysOfWeek = dow.values.slice(0, 7);
  if (dow.values[7] === true) daysOfWeek[0] = true;

  return {
    ok: true,
    fields: {
      normalized: sixFields,
      seconds: sec.values,
      minutes: min.values,
      hours: hour.values,
      daysOfMonth: dom.values,
      lastDayOfMonth: dom.last,
      months: month.values,
      daysOfWeek,
      dayOfMonthStar: dom.star,
      dayOfWeekStar: dow.star,
      wallClockWildcard: min.star || hour.star,
    },
  };
}

/** Vixie/robfig's per-line zone prefix; here the zone is a field of its own. */
const ZONE_PREFIX = /^(CRON_TZ|TZ)=(\S*)\s*(.*)$/;

/** robfig/cron's `@every <Go duration>`: point to intervalSeconds, with the value when it is whole seconds. */
function everyHint(duration: string): string {
  const base = '"@every" is not supported; for a fixed interval set spec.intervalSeconds';
  const seconds = goDurationSeconds(duration);
  return seconds === undefined ? `${base} instead of schedule` : `${base} (e.g. intervalSeconds: ${seconds}) instead of schedule`;
}

function goDurationSeconds(text: string): number | undefined {
  if (!/^(\d+[hms])+$/.test(text)) return undefined;
  let seconds = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)([hms])/g)) seconds += Number(amount) * (unit === 'h' ? 3600 : unit === 'm' ? 60 : 1);
  return seconds >= 1 ? seconds : undefined;
}

function parseField(text: string, spec: FieldSpec): ParsedField {
  const values = new Array<boolean>(spec.max + 1).fill(false);
  let last = false;
  for (const item of text.split(',')) {
    if (item === '') throw new FieldError('empty list item');
    const slash = item.indexOf('/');
    const base = slash === -1 ? item : item.slice(0, slash);
    const step = slash === -1 ? 1 : parseStep(item.slice(slash + 1));

    if (base.toUpperCase() === 'L') {
      if (spec.allowsLast !== true) throw new FieldError('"L" is only allowed in the day-of-month field');
      if (slash !== -1) throw new FieldError('"L" cannot have a step');
      last = true;
      continue;
    }

    let low: number;
    let high: number;
    if (base === '*' || base === '?') {
      if (base === '?' && spec.allowsQuestionMark !== true) {
        throw new FieldError('"?" is only allowed in the day-of-month and day-of-week fields');
      }
      low = spec.min;
      high = wholeRangeEnd(spec);
    } else {
      const dash = base.indexOf('-');
      if (dash === -1) {
        low = parseValue(base, spec);
        // `a/n` means "from a to the end of the range, every n" — in day-of-week that end is Saturday,
        // as for `*`: running on to 7 would add Sunday (`1/2` on Mon, Wed, Fri and Sun).
        high = slash === -1 ? low : wholeRangeEnd(spec);
      } else {
        low = parseValue(base.slice(0, dash), spec);
        high = parseValue(base.slice(dash + 1), spec);
        if (low > high) throw new FieldError(`range ${JSON.stringify(base)} is reversed (start is after end)`);
      }
    }
    for (let v = low; v <= high; v += step) values[v] = true;
  }
  const star = text.startsWith('*') || text.startsWith('?');
  return { values, last, star };
}

/** The end of `*` and of `a/n`: day-of-week's 7 is only another Sunday, so its range ends at 6. */
function wholeRangeEnd(spec: FieldSpec): number {
  return spec.names !== undefined && spec.namesStartAt === 0 ? 6 : spec.max;
}

function parseStep(text: string): number {
  if (!/^\d+$/.test(text)) throw new FieldError(`step ${JSON.stringify(text)} is not a whole number`);
  const step = Number(text);
  if (step === 0) throw new FieldError('step must be at least 1');
  return step;
}

function parseValue(text: string, spec: FieldSpec): number {
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    if (value < spec.min || value > spec.max) {
      throw new FieldError(`value ${value} is out of range ${spec.min}-${spec.max}`);
    }
    return value;
  }
  if (spec.names !== undefined) {
    const index = spec.names.indexOf(text.toUpperCase());
    if (index !== -1) return index + (spec.namesStartAt ?? 0);
  }
  const hint = spec.names !== undefined ? ` (expected a number or ${spec.names[0]}-${spec.names.at(-1)})` : '';
  throw new FieldError(`invalid value ${JSON.stringify(text)}${hint}`);
}
