// Schedules for scenarios that need many SecondCronJobs and none of them firing (scale, failover).

/** Hours after the current one that no slot falls in: a failover run at 100,000 took 38 minutes. */
const QUIET_HOURS = 3;
/**
 * Distinct expressions, as many as the hourly ones these replaced (40 minutes × 60 seconds): the
 * operator shares one parsed expression (~2 KiB) among the schedules that use it, so the memory
 * figures compare with the runs before. All 10,000 distinct cost 22 MiB more heap (measured once).
 */
const DISTINCT = 2_400;

/**
 * Daily slots (`S M H * * *`, UTC) spread over the day but never in this hour or the next QUIET_HOURS − 1:
 * none fires during a run of up to two hours. Hourly slots that skipped the next 20 minutes fired at
 * minute 20 of a run whose start-up was slow (issue 36: 3,206 Jobs in a failover's window).
 */
export function idleSchedules(n: number, now = new Date()): string[] {
  const h0 = now.getUTCHours();
  const hours = Array.from({ length: 24 }, (_, h) => h).filter((h) => (h - h0 + 24) % 24 >= QUIET_HOURS);
  const slots = hours.flatMap((h) => Array.from({ length: 60 }, (_, m) => [h, m] as const));
  return Array.from({ length: n }, (_, i) => {
    const j = i % DISTINCT;
    const [h, m] = slots[j % slots.length] as readonly [number, number];
    return `${Math.floor(j / slots.length)} ${m} ${h} * * *`;
  });
}
