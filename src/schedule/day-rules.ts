// Where a cron expression means different days to us and to the upstream CronJob controller.
//
// Both follow cron's rule: when the day-of-month or the day-of-week field is "*", a day must match
// both fields; when both are restricted, it may match either. They differ on what counts as "*":
//  - ISC/Vixie cron (us): the field STARTS with "*" or "?" — so "*/2" counts;
//  - robfig/cron v3 (kube-controller-manager's CronJob parser): some list item is exactly "*" or "?",
//    or "*"/"?" with step 1 — a step above 1 clears it, so "*/2" does not count, while "1,*" does.
// So "0 0 */2 * 1-5" runs on even days that are weekdays here and on even days plus every weekday in
// a CronJob. This module names such expressions, so a migration warns instead of surprising anyone.
import { parseCron } from './cron-expression.js';

export interface DayRuleDifference {
  dayOfMonth: string;
  dayOfWeek: string;
  /** How each side combines the two fields. */
  secondcron: 'both' | 'either';
  cronJob: 'both' | 'either';
  message: string;
}

/** undefined when both parsers pick the same days (or the expression is not a valid 5/6-field one). */
export function dayRuleDifference(expression: string): DayRuleDifference | undefined {
  const parsed = parseCron(expression);
  if (!parsed.ok || expression.trim().startsWith('@')) return undefined;
  const fields = parsed.fields.normalized.split(' ');
  const dayOfMonth = fields[3] as string;
  const dayOfWeek = fields[5] as string;
  const ours = parsed.fields.dayOfMonthStar || parsed.fields.dayOfWeekStar ? 'both' : 'either';
  const theirs = robfigStar(dayOfMonth) || robfigStar(dayOfWeek) ? 'both' : 'either';
  if (ours === theirs) return undefined;
  const describe = (rule: 'both' | 'either'): string =>
    rule === 'both' ? 'days that match BOTH the day-of-month and the day-of-week field' : 'days that match EITHER field';
  return {
    dayOfMonth,
    dayOfWeek,
    secondcron: ours,
    cronJob: theirs,
    message:
      `day-of-month ${JSON.stringify(dayOfMonth)} with day-of-week ${JSON.stringify(dayOfWeek)}: ` +
      `a SecondCronJob (Vixie cron rule) runs on ${describe(ours)}, the CronJob controller (robfig/cron) ran on ${describe(theirs)}`,
  };
}

/** robfig/cron's starBit for one field. */
function robfigStar(field: string): boolean {
  return field.split(',').some((item) => {
    const [range, step] = item.split('/');
    if (range !== '*' && range !== '?') return false;
    return step === undefined || Number(step) <= 1;
  });
}
