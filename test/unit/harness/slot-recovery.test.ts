// Recovery after an API stall judged slot by slot (test/integration/helpers/slot-recovery.ts): a Job
// counts as on time only when its create was answered within its slot's second; recovery is sustained
// only from the first slot after which no slot falls below the bar again.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { AuditedJobWrite } from '../../integration/helpers/audit-creates.js';
import { slotsBelow, slotsOnTime, sustainedFrom } from '../../integration/helpers/slot-recovery.js';

const T0 = Date.parse('2026-12-05T08:00:00Z');

function create(owner: string, slotMs: number, answeredAfterMs: number, code = 201, receivedAfterMs = answeredAfterMs - 5): AuditedJobWrite {
  return { auditID: `${owner}-${slotMs}-${code}`, verb: 'create', namespace: 'ns', name: `${owner}-${slotMs / 1000}`, code, user: 'admin', userAgent: 'secondcron/0 (a)', receivedMs: slotMs + receivedAfterMs, answeredMs: slotMs + answeredAfterMs };
}

test('slot recovery: on time = stored (201) and answered within the slot second; other owners, codes and slots outside the window are not counted', () => {
  const writes = [
    create('a', T0, 10),
    create('b', T0, 999),
    create('c', T0, 1000), // answered as the next second began: stored, late
    create('d', T0, 20, 409),
    create('other', T0, 10),
    create('a', T0 + 1000, 50),
    create('a', T0 + 3000, 50), // outside [T0, T0 + 3000)
  ];
  assert.deepEqual(slotsOnTime(writes, ['a', 'b', 'c', 'd'], T0, T0 + 3000), [
    { slotMs: T0, withJob: 3, onTime: 2, receivedInTime: 3, latestReceivedMs: 995, slowestAnswerMs: 5 },
    { slotMs: T0 + 1000, withJob: 1, onTime: 1, receivedInTime: 1, latestReceivedMs: 45, slowestAnswerMs: 5 },
    { slotMs: T0 + 2000, withJob: 0, onTime: 0, receivedInTime: 0, latestReceivedMs: 0, slowestAnswerMs: 0 },
  ]);
});

test("slot recovery: whose share a late Job was: received in time but answered late is the server's, received late is the operator's", () => {
  const writes = [create('a', T0, 1300, 201, 100), create('b', T0, 1400, 201, 1200), create('c', T0, 30)];
  assert.deepEqual(slotsOnTime(writes, ['a', 'b', 'c'], T0, T0 + 1000), [{ slotMs: T0, withJob: 3, onTime: 1, receivedInTime: 2, latestReceivedMs: 1200, slowestAnswerMs: 1200 }]);
});

test('slot recovery: sustained from the first slot after the last one below the bar, not from the first good slot', () => {
  const slots = [3, 1, 3, 3, 2, 3, 3].map((onTime, i) => ({ slotMs: T0 + i * 1000, withJob: onTime, onTime, receivedInTime: onTime, latestReceivedMs: 0, slowestAnswerMs: 0 }));
  assert.equal(sustainedFrom(slots, 3), T0 + 5000);
  assert.equal(sustainedFrom(slots, 1), T0);
  assert.equal(sustainedFrom([...slots, { slotMs: T0 + 7000, withJob: 0, onTime: 0, receivedInTime: 0, latestReceivedMs: 0, slowestAnswerMs: 0 }], 3), undefined, 'a last slot below the bar: never sustained');
  assert.deepEqual(slotsBelow(slots, 3).map((s) => [s.slotMs - T0, s.onTime]), [[1000, 1], [4000, 2]]);
});
