// Schedules for scenarios that need many SecondCronJobs and none of them firing (scale, failover).

/** Hourly slots (`S M * * * *`) spread over the hour but never within the next 20 minutes: none fires during the run. */
export function hourlySchedules(n: number): string[] {
  const m0 = new Date().getUTCMinutes();
  const minutes = Array.from({ length: 60 }, (_, m) => m).filter((m) => (m - m0 + 60) % 60 >= 20);
  return Array.from({ length: n }, (_, i) => `${Math.floor(i / minutes.length) % 60} ${minutes[i % minutes.length]} * * * *`);
}
