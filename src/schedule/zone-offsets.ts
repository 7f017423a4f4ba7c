import { IANAZone } from 'luxon';
import { DAY_MS, SECOND_MS, floorToSecond } from './calendar.js';

/**
 * UTC offsets of one time zone, as a function of the instant.
 *
 * Working assumption (true of every zone in current tzdata for the years a scheduler looks at):
 * a zone changes its offset at most once within any 24 hours, and only at whole seconds.
 */
export interface ZoneOffsets {
  readonly name: string;
  /** The constant offset of a fixed-offset zone (UTC, Etc/GMT+5, ...), else null. */
  readonly fixedOffsetMs: number | null;
  /** Local wall time minus UTC at this instant, in ms. */
  offsetMs(instantMs: number): number;
  /**
   * The first whole second t in (loMs, hiMs] whose offset differs from offsetMs(loMs).
   * Caller guarantees: lo and hi are whole seconds, hi - lo <= 1 day, and offsetMs(hiMs) differs.
   */
  firstChangeAfter(loMs: number, hiMs: number): number;
}

/** Zone names whose offset never changes, so slot math can skip all DST handling. */
const FIXED_OFFSET_NAME = /^(etc\/)?(utc|uct|gmt|gmt0|gmt[+-]\d{1,2}|universal|zulu|greenwich)$/i;

const registry = new Map<string, ZoneOffsets>();

// Requested spelling -> the zone Intl resolves it to (null: unknown). Each lookup builds an
// Intl.DateTimeFormat, whose ICU state lives outside the V8 heap: 10,000 schedules compiled at
// start-up cost hundreds of MiB of RSS without this. Bounded, because names are user input.
const resolved = new Map<string, string | null>();
const MAX_RESOLVED = 1024;

function resolveZoneName(requested: string): string | null {
  let name = resolved.get(requested);
  if (name !== undefined) return name;
  name = IANAZone.isValidZone(requested)
    ? new Intl.DateTimeFormat('en-US', { timeZone: requested }).resolvedOptions().timeZone
    : null;
  if (resolved.size >= MAX_RESOLVED) resolved.clear();
  resolved.set(requested, name);
  return name;
}

export function isKnownTimeZone(name: string): boolean {
  return resolveZoneName(name) !== null;
}

/**
 * Shared per zone, so every schedule in a zone profits from the same offset cache.
 * The caller checks the name first with isKnownTimeZone (an unknown name throws RangeError here).
 */
export function zoneOffsetsFor(requestedName: string): ZoneOffsets {
  // Intl accepts any letter case; one cache per actual zone, however users spell it.
  const name = resolveZoneName(requestedName);
  if (name === null) throw new RangeError(`unknown time zone ${JSON.stringify(requestedName)}`);
  let zone = registry.get(name);
  if (zone === undefined) {
    const iana = IANAZone.create(name);
    const rawOffsetMs = (instantMs: number): number => Math.round(iana.offset(instantMs) * 60_000);
    zone = FIXED_OFFSET_NAME.test(name) ? new FixedZoneOffsets(name, rawOffsetMs(0)) : new CachedZoneOffsets(name, rawOffsetMs);
    registry.set(name, zone);
  }
  return zone;
}

class FixedZoneOffsets implements ZoneOffsets {
  readonly fixedOffsetMs: number;
  constructor(
    readonly name: string,
    offsetMs: number,
  ) {
    this.fixedOffsetMs = offsetMs;
  }
  offsetMs(): number {
    return this.fixedOffsetMs;
  }
  firstChangeAfter(): number {
    throw new Error(`time zone ${this.name} has a fixed offset`);
  }
}

const MAX_CACHED_INTERVALS = 32;

/**
 * A DST zone, with offsets read from luxon (Intl) and cached as intervals of constant offset.
 * One luxon lookup costs several microseconds, far more than the cron matcher; the cache makes
 * nearly every lookup a hit. On a miss it reads the offset 24 h ahead too and, if the two differ,
 * locates the transition between them, so the one interval it learns is exact.
 */
export class CachedZoneOffsets implements ZoneOffsets {
  readonly fixedOffsetMs = null;
  // Parallel arrays of inclusive [from, to] ms ranges with a constant offset; newest last.
  private readonly from: number[] = [];
  private readonly to: number[] = [];
  private readonly offset: number[] = [];

  constructor(
    readonly name: string,
    private readonly rawOffsetMs: (instantMs: number) => number,
  ) {}

  offsetMs(instantMs: number): number {
    for (let i = this.from.length - 1; i >= 0; i--) {
      if (instantMs >= (this.from[i] as number) && instantMs <= (this.to[i] as number)) return this.offset[i] as number;
    }
    return this.learn(instantMs);
  }

  firstChangeAfter(loMs: number, hiMs: number): number {
    return bisectChange((t) => this.offsetMs(t), loMs, hiMs);
  }

  private learn(instantMs: number): number {
    // Offsets are constant within a second (transitions fall on whole seconds).
    const start = floorToSecond(instantMs);
    const end = start + DAY_MS;
    const startOffset = this.rawOffsetMs(start);
    const endOffset = this.rawOffsetMs(end);
    if (startOffset === endOffset) {
      this.remember(start, end + SECOND_MS - 1, startOffset);
    } else {
      const change = bisectChange(this.rawOffsetMs, start, end);
      this.remember(start, change - 1, startOffset);
      this.remember(change, end + SECOND_MS - 1, endOffset);
    }
    return startOffset;
  }

  private remember(from: number, to: number, offset: number): void {
    // Merge with overlapping or touching intervals of the same offset so walking time forward keeps
    // growing one interval instead of filling the cache.
    for (let i = this.from.length - 1; i >= 0; i--) {
      const f = this.from[i] as number;
      const t = this.to[i] as number;
      if (this.offset[i] === offset && from <= t + 1 && f <= to + 1) {
        from = Math.min(from, f);
        to = Math.max(to, t);
        this.from.splice(i, 1);
        this.to.splice(i, 1);
        this.offset.splice(i, 1);
      }
    }
    this.from.push(from);
    this.to.push(to);
    this.offset.push(offset);
    if (this.from.length > MAX_CACHED_INTERVALS) {
      this.from.shift();
      this.to.shift();
      this.offset.shift();
    }
  }
}

/** Binary search over whole seconds for the first t in (lo, hi] with offset(t) != offset(lo). */
function bisectChange(offsetAt: (t: number) => number, loMs: number, hiMs: number): number {
  const before = offsetAt(loMs);
  let lo = loMs;
  let hi = hiMs;
  while (hi - lo > SECOND_MS) {
    const mid = lo + Math.floor((hi - lo) / (2 * SECOND_MS)) * SECOND_MS;
    if (offsetAt(mid) === before) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The default zone of a schedule without timeZone. */
export const UTC_ZONE: ZoneOffsets = zoneOffsetsFor('UTC');
