import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileSchedule, type SlotSource as ScheduleSlotSource } from '../../../src/schedule/index.js';
import type { SlotSource } from '../../../src/scheduler/index.js';
import { W, makeHarness } from './harness.js';

// The scheduler declares SlotSource itself (so it compiles alone); it must stay the same contract
// as src/schedule's. These assignments fail to compile if either side drifts.
const toScheduler = (s: ScheduleSlotSource): SlotSource => s;
const toSchedule = (s: SlotSource): ScheduleSlotSource => s;

describe('Scheduler with the real slot math (src/schedule)', () => {
  it('a 6-field cron with a time zone fires every slot once, exactly, for an hour', () => {
    const compiled = compileSchedule({ schedule: '*/5 * * * * *', timeZone: 'Europe/Berlin' }, W, W, 'default/with-schedule');
    assert.ok(compiled.ok);
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.set('cron', toSchedule(toScheduler(compiled.source)));
    h.scheduler.start();
    h.clock.advance(3_600_000);
    assert.deepEqual(
      h.fires.map((f) => f.slotMs - W),
      Array.from({ length: 720 }, (_, i) => (i + 1) * 5000),
    );
    assert.ok(h.fires.every((f) => f.skipped === 0 && f.latenessMs === 0));
  });

  it('an interval spec after a stall: only the latest missed slot fires', () => {
    const compiled = compileSchedule({ intervalSeconds: 2 }, W, W, 'default/with-schedule');
    assert.ok(compiled.ok);
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.set('every2', compiled.source);
    h.scheduler.start();
    h.clock.stall(21_000);
    assert.deepEqual(
      h.fires.map((f) => [f.slotMs - W, f.skipped, f.latenessMs]),
      [[20_000, 9, 1000]],
    );
  });
});
