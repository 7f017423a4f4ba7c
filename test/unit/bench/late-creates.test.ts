// bench-capacity's judgement (bench/lib/late-creates.ts): a create is late when the API server received
// it a second or more after the whole second it was released on, or never stored it.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LATE_MS, lateCreates } from '../../../bench/lib/late-creates.js';

const S = 1_800_000_000_000; // a whole second

test('measured from the whole second the batch was released on, not from the client\'s wake-up', () => {
  const r = lateCreates([['a', S + 3]], new Map([['a', S + 40]]));
  assert.deepEqual([r.creates, r.stored, r.late, r.late_seconds], [1, 1, 0, 0]);
  assert.equal(r.share.max_ms, 40);
});

test('received exactly LATE_MS after its second is late; a moment before is not', () => {
  const r = lateCreates(
    [
      ['a', S],
      ['b', S + 10],
      ['c', S + 1_000],
    ],
    new Map([
      ['a', S + LATE_MS - 0.001],
      ['b', S + LATE_MS],
      ['c', S + 1_000 + 5],
    ]),
  );
  assert.equal(r.late, 1);
  assert.equal(r.late_seconds, 1);
  assert.equal(r.stored, 3);
});

test('a create with no 201 in the audit log is late, and its second counted once', () => {
  const r = lateCreates(
    [
      ['a', S],
      ['b', S],
      ['c', S + 2_000],
    ],
    new Map([['c', S + 2_050]]),
  );
  assert.deepEqual([r.creates, r.stored, r.late, r.late_seconds], [3, 1, 2, 1]);
  assert.equal(r.share.p50_ms, 50);
});
