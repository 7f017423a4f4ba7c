import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';

import { HASH_RANGES, hashIdentity, resolveHashes } from '../../../src/schedule/hashed-fields.js';
import { compileSchedule } from '../../../src/schedule/index.js';
import { firstSlots, ms, pick, seededRandom } from './helpers.js';

function resolved(expression: string, identity: string): string {
  const result = resolveHashes(expression, identity);
  if (!result.ok) assert.fail(`expected ${expression} to resolve, got ${result.message}`);
  return result.expression;
}

function rejected(expression: string): string {
  const result = resolveHashes(expression, 'default/x');
  if (result.ok) assert.fail(`expected ${expression} to be rejected, got ${result.expression}`);
  return result.message;
}

/** The documented function, written out independently of src/: word i of SHA-256(identity). */
function word(identity: string, field: number): number {
  return createHash('sha256').update(identity).digest().readUInt32BE(4 * field);
}

describe('H: the values are pinned (a change would move every user schedule)', () => {
  // printf '%s' default/heartbeat | sha256sum → bdfd3826 093aff67 …: 0xbdfd3826 mod 60 = 26, 0x093aff67 mod 60 = 35, …
  it('default/heartbeat', () => {
    assert.equal(resolved('H H H H H H', 'default/heartbeat'), '26 35 22 23 1 0');
    assert.equal(resolved('H/15 H/10 * * * *', 'default/heartbeat'), '11-59/15 5-59/10 * * * *');
  });
  it('the same name in two namespaces gets different values; the namespace/name pair is what counts', () => {
    assert.equal(resolved('H * * * * *', 'team-a/report'), '44 * * * * *');
    assert.equal(resolved('H * * * * *', 'team-b/report'), '40 * * * * *');
    assert.equal(hashIdentity('team-a', 'report'), 'team-a/report');
  });
});

describe('H: forms and field ranges', () => {
  const random = seededRandom(25);
  const identities = Array.from({ length: 300 }, (_, i) => `ns-${i % 7}/schedule-${Math.floor(random() * 1e9)}`);

  it('H is lo + word mod size over the documented range of each field', () => {
    for (const identity of identities) {
      const values = resolved('H H H H H H', identity).split(' ').map(Number);
      values.forEach((v, field) => {
        const [lo, hi] = HASH_RANGES[field] as readonly [number, number];
        assert.equal(v, lo + (word(identity, field) % (hi - lo + 1)), `${identity} field ${field}`);
      });
    }
  });

  it('day of month stays within 1-28 and day of week within 0-6 for every identity', () => {
    const doms = new Set<number>();
    const dows = new Set<number>();
    for (const identity of identities) {
      const [, , , dom, , dow] = resolved('0 0 0 H * H', identity).split(' ').map(Number);
      doms.add(dom as number);
      dows.add(dow as number);
    }
    assert.deepEqual([...doms].sort((a, b) => a - b), Array.from({ length: 28 }, (_, i) => i + 1));
    assert.deepEqual([...dows].sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6]);
  });

  it('H(a-b), H/n and H(a-b)/n stay inside their range and start below the step', () => {
    for (const identity of identities) {
      const w = word(identity, 1);
      assert.equal(resolved('0 H(10-19) * * * *', identity), `0 ${10 + (w % 10)} * * * *`);
      assert.equal(resolved('0 H/20 * * * *', identity), `0 ${w % 20}-59/20 * * * *`);
      assert.equal(resolved('0 H(30-59)/7 * * * *', identity), `0 ${30 + (w % 7)}-59/7 * * * *`);
      // One word per field: two H of a field keep their distance.
      assert.equal(resolved('0 H(0-29),H(30-59) * * * *', identity), `0 ${w % 30},${30 + (w % 30)} * * * *`);
    }
  });

  it('a 5-field expression keeps 5 fields (the first is the minute); other items are kept as written', () => {
    assert.equal(resolved('H H * * 1-5', 'default/heartbeat'), '35 22 * * 1-5');
    assert.equal(resolved('  H   */5  *  *  *  * ', 'default/heartbeat'), '26 */5 * * * *');
    assert.equal(resolved('0 0 0 * * MON-FRI', 'default/heartbeat'), '0 0 0 * * MON-FRI');
    assert.equal(resolved('0 0 0 * * THU', 'default/heartbeat'), '0 0 0 * * THU');
    assert.equal(resolved('@hourly', 'default/heartbeat'), '@hourly');
  });

  it('spreads 2,000 schedules over all 60 seconds, none with more than 3 % of them', () => {
    const perSecond = new Array<number>(60).fill(0);
    for (let i = 0; i < 2000; i++) {
      const second = Number(resolved('H * * * * *', `bench/h-${i}`).split(' ')[0]);
      perSecond[second] = (perSecond[second] as number) + 1;
    }
    assert.equal(perSecond.filter((n) => n === 0).length, 0);
    assert.ok(Math.max(...perSecond) <= 60, `busiest second: ${Math.max(...perSecond)} of 2000`);
  });
});

describe('H: rejected forms name the field and the problem', () => {
  it('malformed items, ranges and steps', () => {
    assert.equal(rejected('H5 * * * * *'), 'schedule "H5 * * * * *": second field "H5": "H5" is not one of H, H/n, H(a-b), H(a-b)/n');
    assert.equal(rejected('0 H(10-70) * * * *'), 'schedule "0 H(10-70) * * * *": minute field "H(10-70)": range 10-70 is out of range 0-59');
    assert.equal(rejected('0 0 H(20-10) * * *'), 'schedule "0 0 H(20-10) * * *": hour field "H(20-10)": range 20-10 is reversed (start is after end)');
    assert.equal(rejected('0 0 0 H/0 * *'), 'schedule "0 0 0 H/0 * *": day-of-month field "H/0": step must be at least 1');
    // The step must fit the range: otherwise some names would get no value at all.
    assert.equal(rejected('H/90 * * * * *'), 'schedule "H/90 * * * * *": second field "H/90": step 90 is larger than the 60 values of 0-59');
    assert.equal(rejected('0 0 0 H/29 * *'), 'schedule "0 0 0 H/29 * *": day-of-month field "H/29": step 29 is larger than the 28 values of 1-28');
    assert.equal(rejected('0 0 0 * * H(1-5)/6'), 'schedule "0 0 0 * * H(1-5)/6": day-of-week field "H(1-5)/6": step 6 is larger than the 5 values of 1-5');
  });

  it('compileSchedule reports them as InvalidSchedule, and a resolved value the parser rejects with both texts', () => {
    const now = ms('2026-12-02T10:00:00Z');
    const bad = compileSchedule({ schedule: 'H/90 * * * * *' }, now, now, 'default/x');
    assert.deepEqual(bad, { ok: false, reason: 'InvalidSchedule', message: 'schedule "H/90 * * * * *": second field "H/90": step 90 is larger than the 60 values of 0-59' });
    const other = compileSchedule({ schedule: 'H 70 * * * *' }, now, now, 'default/heartbeat');
    assert.deepEqual(other, { ok: false, reason: 'InvalidSchedule', message: 'schedule "H 70 * * * *" (resolved "26 70 * * * *"): minute field "70": value 70 is out of range 0-59' });
  });
});

describe('H: compileSchedule runs the resolved expression', () => {
  const now = ms('2026-12-02T10:00:00Z');

  it('exposes resolvedSchedule and describes it; an expression without H is its own resolution', () => {
    const hashed = compileSchedule({ schedule: 'H * * * * *', timeZone: 'Europe/Berlin' }, now, now, 'default/heartbeat');
    assert.ok(hashed.ok);
    assert.equal(hashed.resolvedSchedule, '26 * * * * *');
    assert.equal(hashed.describe, 'cron "H * * * * *" resolved to "26 * * * * *" in Europe/Berlin');
    assert.equal(hashed.source.next(now), ms('2026-12-02T10:00:26Z'));
    const five = compileSchedule({ schedule: 'H H * * *' }, now, now, 'default/heartbeat');
    assert.ok(five.ok);
    assert.equal(five.describe, 'cron "H H * * *" resolved to "35 22 * * *" (0 35 22 * * *) in UTC');
    const plain = compileSchedule({ schedule: '0 * * * * *' }, now, now, 'default/heartbeat');
    assert.ok(plain.ok);
    assert.equal(plain.resolvedSchedule, '0 * * * * *');
    const interval = compileSchedule({ intervalSeconds: 5 }, now, now, 'default/heartbeat');
    assert.ok(interval.ok);
    assert.equal(interval.resolvedSchedule, undefined);
  });

  it('fires exactly the slots of its resolved expression, whatever the identity and zone', () => {
    const random = seededRandom(2_025);
    const forms = [
      ['H', 'H/10', '*/7', '0'],
      ['*', 'H', 'H/15', 'H(0-29)/10'],
      ['*', 'H', 'H(8-17)', 'H/6'],
      ['*', 'H', 'H/7'],
      ['*', 'H(1-12)/3'],
      ['*', 'H', 'H(1-5)'],
    ] as const;
    for (let i = 0; i < 40; i++) {
      const expression = forms.map((options) => pick(random, options)).join(' ');
      const identity = `ns-${i}/name-${Math.floor(random() * 1e6)}`;
      const zone = pick(random, ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe']);
      const from = ms('2026-03-01T00:00:00Z');
      const withH = compileSchedule({ schedule: expression, timeZone: zone }, from, from, identity);
      assert.ok(withH.ok, `${expression}: ${withH.ok ? '' : withH.message}`);
      const plain = compileSchedule({ schedule: withH.resolvedSchedule as string, timeZone: zone }, from, from, 'other/identity');
      assert.ok(plain.ok);
      const first = firstSlots(withH.source, '2026-03-01T00:00:00Z', 50);
      assert.equal(first.filter((slot) => slot !== null).length, 50);
      assert.deepEqual(first, firstSlots(plain.source, '2026-03-01T00:00:00Z', 50), `${expression} as ${identity} in ${zone}`);
    }
  });
});
