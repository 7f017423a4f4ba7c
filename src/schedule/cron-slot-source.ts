import type { SlotSource } from './types.js';
import type { CronWallMatcher } from './cron-wall-matcher.js';
import type { ZoneOffsets } from './zone-offsets.js';
import { DAY_MS, SECOND_MS, floorToSecond } from './calendar.js';

/** How far ahead next() looks before it concludes that a schedule never fires again. */
export const HORIZON_YEARS = 30;
const HORIZON_MS = Math.round(HORIZON_YEARS * 365.2425 * DAY_MS);

/**
 * Length of the instant windows that are scanned with one offset. Must be at least the largest offset
 * jump a zone makes (Samoa skipped a whole day in 2011), and within it a zone changes offset at most once.
 */
const WINDOW_MS = DAY_MS;

/** A bound on loop turns; each turn passes a transition or a window, so it is never reached in practice. */
const MAX_TURNS = 10_000;

/**
 * Cron slots in a time zone, with ISC/Vixie cron's DST rule:
 *  - spring forward: wall times in the gap do not exist. A fixed-time schedule whose time falls in
 *    the gap fires once at the first instant after the gap; a wildcard schedule (minute or hour
 *    starts with `*`) follows the wall clock and skips them.
 *  - fall back: wall times in the repeated hour exist twice. A fixed-time schedule fires at the first
 *    occurrence only; a wildcard schedule fires at both (distinct instants).
 * So no instant fires twice, and an every-second schedule fires at every real second.
 *
 * Method: time is cut into segments of constant offset o. Within a segment, instant = wall - o, so the
 * first slot is the first matching wall time mapped back. At a transition the rule above decides
 * where the wall-time scan of the next segment starts, and whether the transition instant itself is
 * a slot (fixed schedule, matching wall time inside the gap).
 */
export class CronSlotSource implements SlotSource {
  constructor(
    private readonly matcher: CronWallMatcher,
    private readonly zone: ZoneOffsets,
    /** true = wildcard schedule (follows the wall clock), false = fixed-time schedule. */
    private readonly followsWallClock: boolean,
  ) {}

  next(afterMs: number): number | null {
    if (!Number.isFinite(afterMs)) return null;
    const first = floorToSecond(afterMs) + SECOND_MS; // slots are whole seconds
    const fixed = this.zone.fixedOffsetMs;
    if (fixed !== null) {
      const wall = this.matcher.nextMatch(first + fixed, first + fixed + HORIZON_MS);
      return wall === null ? null : wall - fixed;
    }
    return this.nextInZone(first);
  }

  private nextInZone(first: number): number | null {
    const zone = this.zone;
    const fixedTime = !this.followsWallClock;
    let segmentStart = first;
    let offset = zone.offsetMs(first);
    let wallFrom = first + offset;
    const wallUntil = wallFrom + HORIZON_MS;

    if (fixedTime) {
      // A transition shortly before `first` still matters to a fixed-time schedule.
      const offsetBefore = zone.offsetMs(first - WINDOW_MS);
      if (offsetBefore !== offset) {
        const transition = zone.firstChangeAfter(first - WINDOW_MS, first);
        if (offset > offsetBefore) {
          // Gap ending exactly at `first`: its wall times map to `first`.
          if (transition === first && this.matchesInGap(first, offsetBefore, offset)) return first;
        } else {
          // Fall-back: the wall times up to transition + offsetBefore are second occurrences.
          wallFrom = Math.max(wallFrom, transition + offsetBefore);
        }
      }
    }

    for (let turn = 0; turn < MAX_TURNS; turn++) {
      const wall = this.matcher.nextMatch(wallFrom, wallUntil);
      if (wall === null) return null;
      const instant = wall - offset;
      const windowEnd = segmentStart + WINDOW_MS;

      let transition: number;
      if (instant <= windowEnd) {
        if (zone.offsetMs(instant) === offset) return instant; // at most one change per window: none
        transition = zone.firstChangeAfter(segmentStart, instant);
      } else if (zone.offsetMs(windowEnd) === offset) {
        // No change in this window, and no wall time before `wall` matches. Whatever offsets the
        // instants up to instant - WINDOW have, their wall times lie before `wall`, so skip them.
        segmentStart = Math.max(windowEnd, instant - WINDOW_MS);
        offset = zone.offsetMs(segmentStart);
        wallFrom = Math.max(wall, segmentStart + offset);
        continue;
      } else {
        transition = zone.firstChangeAfter(segmentStart, windowEnd);
      }

      // The segment ends at `transition` without a slot; wall >= transition + offset.
      const offsetAfter = zone.offsetMs(transition);
      if (offsetAfter > offset) {
        // Spring forward: walls [transition + offset, transition + offsetAfter) never happen.
        if (fixedTime && wall < transition + offsetAfter) return transition;
        wallFrom = Math.max(wall, transition + offsetAfter);
      } else {
        // Fall back: walls [transition + offsetAfter, transition + offset) happen a second time.
        wallFrom = fixedTime ? Math.max(wall, transition + offset) : transition + offsetAfter;
      }
      segmentStart = transition;
      offset = offsetAfter;
    }
    return null;
  }

  /** Does any wall time in the spring-forward gap [transition + before, transition + after) match? */
  private matchesInGap(transition: number, offsetBefore: number, offsetAfter: number): boolean {
    return this.matcher.nextMatch(transition + offsetBefore, transition + offsetAfter - SECOND_MS) !== null;
  }
}
