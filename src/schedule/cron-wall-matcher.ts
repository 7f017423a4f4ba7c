import type { CronFields } from './cron-expression.js';
import { DAY_MS, civilFromDays, daysFromCivil, daysInMonth, weekdayOfDays } from './calendar.js';

/**
 * Finds wall-clock times that match cron fields. "Wall time" is a plain number: epoch-ms arithmetic
 * applied to the local date and time as if it were UTC. Time zones are not this class's business
 * (cron-slot-source.ts maps wall times to instants).
 *
 * The search jumps whole months, days, hours and minutes when a field does not match, so even an
 * every-second schedule or a never-matching one costs a bounded, small number of steps.
 */
export class CronWallMatcher {
  /** nextX[v] = smallest matching value >= v, or -1; one extra slot at the end holds -1 so a carry
   *  (v = max + 1) needs no special case. */
  private readonly nextSecond: Int8Array;
  private readonly nextMinute: Int8Array;
  private readonly nextHour: Int8Array;
  private readonly nextMonth: Int8Array;

  constructor(private readonly fields: CronFields) {
    this.nextSecond = nextMatchTable(fields.seconds, 60);
    this.nextMinute = nextMatchTable(fields.minutes, 60);
    this.nextHour = nextMatchTable(fields.hours, 24);
    this.nextMonth = nextMatchTable(fields.months, 13);
  }

  /** Does this day match (dom/dow combined the Vixie way)? `weekday` 0 = Sunday. */
  matchesDay(day: number, lastDay: number, weekday: number): boolean {
    const f = this.fields;
    const domHit = f.daysOfMonth[day] === true || (f.lastDayOfMonth && day === lastDay);
    const dowHit = f.daysOfWeek[weekday] === true;
    return f.dayOfMonthStar || f.dayOfWeekStar ? domHit && dowHit : domHit || dowHit;
  }

  /**
   * The smallest matching wall time W with fromWallMs <= W <= untilWallMs (W a whole second), or null.
   */
  nextMatch(fromWallMs: number, untilWallMs: number): number | null {
    const start = Math.ceil(fromWallMs / 1000) * 1000;
    if (!(start <= untilWallMs)) return null;
    const startDays = Math.floor(start / DAY_MS);
    const limitDays = Math.floor(untilWallMs / DAY_MS);
    const startDate = civilFromDays(startDays);
    let year = startDate.year;
    let month = startDate.month;
    let day = startDate.day;
    let secondOfDay = (start - startDays * DAY_MS) / 1000;
    let hour = Math.floor(secondOfDay / 3600);
    let minute = Math.floor(secondOfDay / 60) % 60;
    let second = secondOfDay % 60;

    for (;;) {
      const matchingMonth = this.nextMonth[month] as number;
      if (matchingMonth !== month) {
        if (matchingMonth === -1) {
          year++;
          month = this.nextMonth[1] as number;
        } else {
          month = matchingMonth;
        }
        day = 1;
        hour = minute = second = 0;
        if (daysFromCivil(year, month, 1) > limitDays) return null;
      }

      const lastDay = daysInMonth(year, month);
      const firstOfMonth = daysFromCivil(year, month, 1);
      const weekdayOfFirst = weekdayOfDays(firstOfMonth);
      let matchingDay = day;
      while (matchingDay <= lastDay && !this.matchesDay(matchingDay, lastDay, (weekdayOfFirst + matchingDay - 1) % 7)) {
        matchingDay++;
      }
      if (matchingDay > lastDay) {
        month++;
        if (month > 12) {
          month = 1;
          year++;
        }
        day = 1;
        hour = minute = second = 0;
        if (daysFromCivil(year, month, 1) > limitDays) return null;
        continue;
      }
      if (matchingDay !== day) {
        day = matchingDay;
        hour = minute = second = 0;
      }

      const matchingHour = this.nextHour[hour] as number;
      if (matchingHour === -1) {
        day++; // past the last day is handled by the day search above
        hour = minute = second = 0;
        continue;
      }
      if (matchingHour !== hour) {
        hour = matchingHour;
        minute = second = 0;
      }

      const matchingMinute = this.nextMinute[minute] as number;
      if (matchingMinute === -1) {
        hour++;
        minute = second = 0;
        continue;
      }
      if (matchingMinute !== minute) {
        minute = matchingMinute;
        second = 0;
      }

      const matchingSecond = this.nextSecond[second] as number;
      if (matchingSecond === -1) {
        minute++;
        second = 0;
        continue;
      }
      second = matchingSecond;

      secondOfDay = hour * 3600 + minute * 60 + second;
      const wall = (firstOfMonth + day - 1) * DAY_MS + secondOfDay * 1000;
      return wall <= untilWallMs ? wall : null;
    }
  }
}

function nextMatchTable(matches: readonly boolean[], size: number): Int8Array {
  const table = new Int8Array(size + 1).fill(-1);
  let next = -1;
  for (let v = size - 1; v >= 0; v--) {
    if (matches[v] === true) next = v;
    table[v] = next;
  }
  return table;
}
