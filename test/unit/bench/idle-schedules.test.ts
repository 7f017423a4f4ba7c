// The scale and failover scenarios' schedules: none may fire during a run, however long its start-up.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { idleSchedules } from '../../../bench/lib/idle-schedules.js';
import { compileSchedule } from '../../../src/schedule/index.js';

test('idleSchedules: daily slots over every allowed minute, 2,400 distinct as the hourly ones were, the soonest two hours after this hour ends, whatever the hour', () => {
  const n = 3_000; // every (hour, minute) of the 21 allowed hours at least once
  for (const start of ['2026-12-06T22:59:59Z', '2026-12-06T00:00:00Z', '2026-12-06T21:30:00Z']) {
    const now = new Date(start);
    const schedules = idleSchedules(n, now);
    assert.equal(schedules.length, n);
    assert.equal(new Set(schedules).size, 2_400, 'distinct expressions: the memory figures depend on them');
    let soonestMs = Infinity;
    for (const [i, schedule] of schedules.entries()) {
      const compiled = compileSchedule({ schedule }, now.getTime(), now.getTime(), `bench/idle-${i}`);
      assert.ok(compiled.ok, schedule);
      soonestMs = Math.min(soonestMs, (compiled.source.next(now.getTime()) as number) - now.getTime());
    }
    // From the end of the current hour, two more quiet hours: a run of two hours sees no slot.
    const toNextHourMs = 3_600_000 - (now.getTime() % 3_600_000);
    assert.equal(soonestMs, toNextHourMs + 2 * 3_600_000, start);
  }
});
