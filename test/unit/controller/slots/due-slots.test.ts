import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dueSlots } from '../../../../src/controller/slots/due-slots.js';
import { compileSchedule } from '../../../../src/schedule/index.js';

const created = Date.parse('2026-12-02T10:00:00Z');

function source(spec: { schedule?: string; intervalSeconds?: number }) {
  const r = compileSchedule(spec, created, created, 'default/catch-up');
  assert.ok(r.ok);
  return r.source;
}

test('after 10 s of downtime on a 1 s interval, only the latest slot runs; the other 9 are counted', () => {
  const lastKnown = created + 5000; // last slot the old leader created
  const now = created + 15_400;
  assert.deepEqual(dueSlots(source({ intervalSeconds: 1 }), lastKnown, now), { latestMs: created + 15_000, firstMs: created + 6_000, olderCount: 9 });
});

test('nothing missed when no slot fell due since the last one', () => {
  assert.equal(dueSlots(source({ intervalSeconds: 10 }), created + 10_000, created + 19_999), null);
});

test('a brand-new resource has no missed slots before its creation', () => {
  assert.equal(dueSlots(source({ schedule: '*/5 * * * * *' }), created, created + 400), null);
});

test('a day of downtime on an every-second cron still yields one slot and a count', () => {
  const r = dueSlots(source({ schedule: '* * * * * *' }), created, created + 86_400_000 + 500);
  assert.equal(r?.latestMs, created + 86_400_000);
  assert.equal(r?.olderCount, 86_399);
});
