import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { latestSlotAtOrBefore, type SlotSource } from '../../../src/schedule/index.js';
import { iso, ms, source } from './helpers.js';

/** Wraps a source to count next() calls. */
function counting(src: SlotSource): { src: SlotSource; calls: () => number } {
  let calls = 0;
  return {
    src: { next: (t) => (calls++, src.next(t)) },
    calls: () => calls,
  };
}

describe('latestSlotAtOrBefore', () => {
  it('finds the latest slot in a small window', () => {
    const src = source({ schedule: '*/10 * * * * *' });
    const at = ms('2026-05-01T10:00:37Z');
    assert.equal(iso(latestSlotAtOrBefore(src, at, at - 60_000)), '2026-05-01T10:00:30.000Z');
    assert.equal(iso(latestSlotAtOrBefore(src, ms('2026-05-01T10:00:30Z'), at - 60_000)), '2026-05-01T10:00:30.000Z');
  });

  it('excludes notBefore and includes atMs', () => {
    const src = source({ schedule: '*/10 * * * * *' });
    const at = ms('2026-05-01T10:00:40Z');
    assert.equal(latestSlotAtOrBefore(src, at, at - 10_000), at);
    assert.equal(latestSlotAtOrBefore(src, at - 1, at - 10_000), null); // (10:00:30, 10:00:39.999]
    assert.equal(iso(latestSlotAtOrBefore(src, at - 1, at - 10_001)), '2026-05-01T10:00:30.000Z');
  });

  it('every second, operator down for 2 days: atMs floored to the second, with few next() calls', () => {
    const { src, calls } = counting(source({ schedule: '* * * * * *', timeZone: 'Europe/Berlin' }));
    const at = ms('2026-10-26T12:00:00.500Z');
    assert.equal(iso(latestSlotAtOrBefore(src, at, at - 2 * 86_400_000)), '2026-10-26T12:00:00.000Z');
    assert.ok(calls() < 60, `next() called ${calls()} times`);
  });

  it('a sparse slot far back in a huge window, found by widening then bisecting', () => {
    const { src, calls } = counting(source({ schedule: '* * 3 1 1 *' })); // every second of 03:00-03:59 on Jan 1
    const at = ms('2026-12-31T00:00:00Z');
    assert.equal(iso(latestSlotAtOrBefore(src, at, ms('2020-01-01T00:00:00Z'))), '2026-01-01T03:59:59.000Z');
    assert.ok(calls() < 100, `next() called ${calls()} times`);
  });

  it('returns null when the window holds no slot, or is empty', () => {
    const src = source({ schedule: '0 0 12 * * *' });
    assert.equal(latestSlotAtOrBefore(src, ms('2026-05-01T11:59:59Z'), ms('2026-05-01T00:00:00Z')), null);
    assert.equal(latestSlotAtOrBefore(src, ms('2026-05-01T12:00:00Z'), ms('2026-05-01T12:00:00Z')), null);
    assert.equal(latestSlotAtOrBefore(src, ms('2026-05-01T12:00:00Z'), ms('2026-05-02T00:00:00Z')), null);
  });

  it('works with interval sources', () => {
    const src = source({ intervalSeconds: 60 }, '2026-05-01T00:00:00Z', '2026-05-01T00:00:30Z');
    assert.equal(
      iso(latestSlotAtOrBefore(src, ms('2026-05-03T07:45:10Z'), ms('2026-05-01T00:00:00Z'))),
      '2026-05-03T07:44:30.000Z',
    );
  });

  it('agrees with walking the window, for many windows and schedules', () => {
    for (const schedule of ['*/7 * * * * *', '0 */30 * * * *', '30 30 2 * * *', '* * * * * *']) {
      const src = source({ schedule, timeZone: 'Europe/Berlin' });
      for (let i = 0; i < 40; i++) {
        const notBefore = ms('2026-10-24T20:00:00Z') + i * 613_457;
        const at = notBefore + (i % 5) * 1_234_567 + 999;
        let expected: number | null = null;
        for (let t = src.next(notBefore); t !== null && t <= at; t = src.next(t)) expected = t;
        assert.equal(latestSlotAtOrBefore(src, at, notBefore), expected, `${schedule} #${i}`);
      }
    }
  });
});
