import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { iso, ms, slotsBetween, source } from './helpers.js';

describe('interval slots', () => {
  const anchor = '2026-12-02T10:00:00Z';

  it('are anchor + k * interval for k >= 1', () => {
    const src = source({ intervalSeconds: 7 }, anchor, anchor);
    const slots = slotsBetween(src, ms(anchor) - 60_000, ms(anchor) + 30_000);
    assert.deepEqual(slots, [1, 2, 3, 4].map((k) => ms(anchor) + k * 7000));
  });

  it('next() exactly on a slot returns the following slot; just before it returns that slot', () => {
    const src = source({ intervalSeconds: 5 }, anchor, anchor);
    assert.equal(iso(src.next(ms('2026-12-02T10:00:10Z'))), '2026-12-02T10:00:15.000Z');
    assert.equal(iso(src.next(ms('2026-12-02T10:00:09.999Z'))), '2026-12-02T10:00:10.000Z');
    assert.equal(iso(src.next(ms(anchor))), '2026-12-02T10:00:05.000Z');
  });

  it('is O(1) far in the future (no drift, no iteration)', () => {
    const src = source({ intervalSeconds: 3 }, anchor, anchor);
    const far = ms(anchor) + 3000 * 1_000_000_000 + 1;
    assert.equal(src.next(far), ms(anchor) + 3000 * 1_000_000_001);
  });

  it('floors a fractional-second anchor so slots are whole seconds', () => {
    const src = source({ intervalSeconds: 2 }, anchor, '2026-12-02T10:00:00.750Z');
    assert.equal(iso(src.next(ms(anchor))), '2026-12-02T10:00:02.000Z');
  });

  it('do not depend on where next() is asked from (two replicas agree)', () => {
    const a = source({ intervalSeconds: 13 }, '2026-12-05T00:00:00Z', anchor);
    const b = source({ intervalSeconds: 13 }, '2027-01-01T00:00:00Z', anchor);
    const t = ms('2026-12-09T17:23:41.5Z');
    assert.equal(a.next(t), b.next(t));
    assert.equal(((a.next(t) as number) - ms(anchor)) % 13_000, 0);
  });
});
