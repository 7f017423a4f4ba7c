// spec.schedules: the union of several cron expressions, compiled as one slot source.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileSchedule, type CompileResult, type ScheduleSpec, UnionSlotSource, type SlotSource } from '../../../src/schedule/index.js';
import { firstSlots, ms, slotsBetween, source } from './helpers.js';

const NOW = ms('2026-12-02T10:00:00Z');
const ID = 'default/heartbeat';

function failure(spec: ScheduleSpec): Extract<CompileResult, { ok: false }> {
  const result = compileSchedule(spec, NOW, NOW, ID);
  if (result.ok) assert.fail(`expected ${JSON.stringify(spec)} to be rejected`);
  return result;
}

/** A source with fixed slots, for the union's own rules. */
const fixed = (...isos: string[]): SlotSource => ({ next: (after) => isos.map(ms).find((t) => t > after) ?? null });

describe('UnionSlotSource', () => {
  const cases: Array<[string, SlotSource[], string, Array<string | null>]> = [
    ['interleaves members', [fixed('2026-01-01T00:00:01Z', '2026-01-01T00:00:05Z'), fixed('2026-01-01T00:00:03Z')], '2026-01-01T00:00:00Z', ['2026-01-01T00:00:01.000Z', '2026-01-01T00:00:03.000Z', '2026-01-01T00:00:05.000Z', null]],
    ['an instant in two members is one slot', [fixed('2026-01-01T00:00:02Z', '2026-01-01T00:00:04Z'), fixed('2026-01-01T00:00:02Z', '2026-01-01T00:00:03Z')], '2026-01-01T00:00:00Z', ['2026-01-01T00:00:02.000Z', '2026-01-01T00:00:03.000Z', '2026-01-01T00:00:04.000Z', null]],
    ['a finished member leaves the others', [fixed(), fixed('2026-01-01T00:00:09Z')], '2026-01-01T00:00:00Z', ['2026-01-01T00:00:09.000Z', null]],
    ['strictly after: a slot at afterMs is not next', [fixed('2026-01-01T00:00:00Z', '2026-01-01T00:00:07Z'), fixed('2026-01-01T00:00:00Z')], '2026-01-01T00:00:00Z', ['2026-01-01T00:00:07.000Z', null]],
  ];
  for (const [what, members, from, expected] of cases) {
    it(what, () => assert.deepEqual(firstSlots(new UnionSlotSource(members), from, expected.length), expected));
  }

  it('refuses to be empty (a list of 0 is rejected before)', () => {
    assert.throws(() => new UnionSlotSource([]), /at least one member/);
  });
});

describe('compileSchedule with schedules', () => {
  it('runs "08:30 on weekdays and 10:00 at weekends" as one schedule (DESIGN §2)', () => {
    const src = source({ schedules: ['0 30 8 * * MON-FRI', '0 0 10 * * SAT,SUN'], timeZone: 'Europe/Berlin' }, '2026-12-02T10:00:00Z');
    // 2026-12-03 is a Thursday; Berlin is UTC+1 in December.
    assert.deepEqual(firstSlots(src, '2026-12-02T10:00:00Z', 5), [
      '2026-12-03T07:30:00.000Z',
      '2026-12-04T07:30:00.000Z',
      '2026-12-05T09:00:00.000Z',
      '2026-12-06T09:00:00.000Z',
      '2026-12-07T07:30:00.000Z',
    ]);
  });

  it('fires an instant listed by two expressions once', () => {
    const src = source({ schedules: ['*/10 * * * * *', '*/15 * * * * *'] }, '2026-12-02T10:00:00Z');
    const slots = slotsBetween(src, NOW, NOW + 60_000).map((t) => (t - NOW) / 1000);
    assert.deepEqual(slots, [10, 15, 20, 30, 40, 45, 50, 60]);
    assert.equal(slots.length, new Set(slots).size);
  });

  it('a duplicated expression is the expression', () => {
    const twice = source({ schedules: ['0 * * * * *', '0 * * * * *'] });
    const once = source({ schedule: '0 * * * * *' });
    assert.deepEqual(firstSlots(twice, '2026-06-01T00:00:00Z', 20), firstSlots(once, '2026-06-01T00:00:00Z', 20));
  });

  it('hashes H alike in every expression (namespace/name), and resolves each', () => {
    const list = compileSchedule({ schedules: ['H * * * * *', 'H H * * * *'], timeZone: 'Europe/Berlin' }, NOW, NOW, ID);
    const single = compileSchedule({ schedule: 'H * * * * *' }, NOW, NOW, ID);
    assert.ok(list.ok && single.ok);
    assert.equal(list.resolvedSchedules?.[0], single.resolvedSchedule);
    assert.equal(list.resolvedSchedules?.length, 2);
    assert.equal(list.resolvedSchedule, list.resolvedSchedules?.join('; '));
    assert.doesNotMatch(list.resolvedSchedule ?? 'H', /H/);
  });

  it('describes every expression and the zone; a single schedule keeps its description', () => {
    const list = compileSchedule({ schedules: ['0 30 8 * * MON-FRI', '@daily'], timeZone: 'Europe/Berlin' }, NOW, NOW, ID);
    assert.ok(list.ok);
    assert.equal(list.describe, 'cron union of 2 ["0 30 8 * * MON-FRI", "@daily" (0 0 0 * * *)] in Europe/Berlin');
    assert.deepEqual(list.resolvedSchedules, ['0 30 8 * * MON-FRI', '@daily']);
    const one = compileSchedule({ schedule: '0 * * * * *' }, NOW, NOW, ID);
    assert.ok(one.ok);
    assert.deepEqual({ describe: one.describe, list: one.resolvedSchedules }, { describe: 'cron "0 * * * * *" in UTC', list: ['0 * * * * *'] });
  });

  it('rejects a bad list, naming the item', () => {
    const seventeen = Array.from({ length: 17 }, (_, i) => `${i} * * * * *`);
    const cases: Array<[ScheduleSpec, string]> = [
      [{ schedules: [] }, 'schedules must hold 1 to 16 cron expressions, got 0'],
      [{ schedules: seventeen }, 'schedules must hold 1 to 16 cron expressions, got 17'],
      [{ schedules: ['0 * * * * *', '* * *'] }, 'schedules[1]: schedule "* * *": expected 5 or 6 fields, got 3'],
      [{ schedules: ['0 0 0 30 2 *'] }, 'schedules[0]: schedule "0 0 0 30 2 *": never fires (no matching time within 30 years)'],
      [{ schedules: 'every day' as unknown as string[] }, 'schedules must be a list of cron expressions'],
      [{ schedules: [5 as unknown as string] }, 'schedules[0]: schedule must be a string, got 5'],
      [{ schedules: ['0 * * * * *'], intervalSeconds: 5, schedule: '* * * * * *' }, 'set exactly one of schedule, schedules or intervalSeconds, not schedule and schedules and intervalSeconds'],
    ];
    for (const [spec, message] of cases) {
      const result = failure(spec);
      assert.deepEqual({ reason: result.reason, message: result.message }, { reason: 'InvalidSchedule', message }, JSON.stringify(spec));
    }
    assert.equal(failure({ schedules: ['0 * * * * *'], timeZone: 'Mars/Olympus' }).reason, 'UnknownTimeZone');
  });

  it('16 expressions is the most', () => {
    const sixteen = Array.from({ length: 16 }, (_, i) => `${i} * * * * *`);
    const src = source({ schedules: sixteen });
    assert.equal(slotsBetween(src, ms('2026-01-01T00:00:00Z'), ms('2026-01-01T00:01:00Z')).length, 16);
  });
});
