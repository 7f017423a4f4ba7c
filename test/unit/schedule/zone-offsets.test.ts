import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IANAZone } from 'luxon';
import { CachedZoneOffsets, zoneOffsetsFor } from '../../../src/schedule/zone-offsets.js';
import { ms, seededRandom } from './helpers.js';

describe('zone offsets', () => {
  it('the cache answers exactly what luxon answers, in random order over 3 years', () => {
    for (const name of ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'America/Santiago', 'Asia/Kolkata']) {
      const luxon = IANAZone.create(name);
      let rawCalls = 0;
      const cached = new CachedZoneOffsets(name, (t) => (rawCalls++, Math.round(luxon.offset(t) * 60_000)));
      const random = seededRandom(42);
      const start = ms('2025-01-01T00:00:00Z');
      const span = 3 * 365 * 86_400_000;
      let queries = 0;
      for (let i = 0; i < 150; i++) {
        // Bursts of nearby queries, like a scheduler walking forward, at random places.
        const base = start + Math.floor(random() * span);
        for (let j = 0; j < 40; j++) {
          const t = base + Math.floor(random() * 3 * 3_600_000) - 3_600_000;
          queries++;
          assert.equal(cached.offsetMs(t), Math.round(luxon.offset(t) * 60_000), `${name} at ${new Date(t).toISOString()}`);
        }
      }
      assert.ok(rawCalls < queries / 3, `${name}: ${rawCalls} luxon calls for ${queries} queries`);
    }
  });

  it('finds a transition to the second', () => {
    const berlin = zoneOffsetsFor('Europe/Berlin');
    const t = ms('2026-03-29T01:00:00Z');
    assert.equal(berlin.firstChangeAfter(t - 86_400_000, t + 3_600_000), t);
    assert.equal(berlin.firstChangeAfter(t - 1000, t), t);
  });

  it('treats UTC-like and Etc/GMT zones as fixed offsets', () => {
    assert.equal(zoneOffsetsFor('UTC').fixedOffsetMs, 0);
    assert.equal(zoneOffsetsFor('Etc/GMT+5').fixedOffsetMs, -5 * 3_600_000);
    assert.equal(zoneOffsetsFor('Europe/Berlin').fixedOffsetMs, null);
  });
});
