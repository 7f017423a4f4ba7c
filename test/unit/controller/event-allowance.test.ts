import assert from 'node:assert/strict';
import { test } from 'node:test';

import { EventAllowance, SPAM_BURST } from '../../../src/controller/event-allowance.js';

test('event allowance: a burst of 25 per object, then one per five minutes (client-go spam filter)', () => {
  let now = Date.parse('2026-12-02T10:00:00Z');
  const allowance = new EventAllowance({ nowMs: () => now });
  const taken = Array.from({ length: 40 }, () => allowance.take('uid-a', 'Normal')).filter(Boolean).length;
  assert.equal(taken, SPAM_BURST);
  now += 299_000;
  assert.equal(allowance.take('uid-a', 'Normal'), false, 'not yet refilled');
  now += 1_000;
  assert.equal(allowance.take('uid-a', 'Normal'), true, 'one Event after five minutes');
  assert.equal(allowance.take('uid-a', 'Normal'), false);
});

test('event allowance: objects and Event types are counted apart', () => {
  const now = 0;
  const allowance = new EventAllowance({ nowMs: () => now }, 2, 1 / 300);
  assert.deepEqual([allowance.take('a', 'Normal'), allowance.take('a', 'Normal'), allowance.take('a', 'Normal')], [true, true, false]);
  assert.equal(allowance.take('a', 'Warning'), true, 'Normal Events do not use up the Warning allowance');
  assert.equal(allowance.take('b', 'Normal'), true, 'nor another object\'s');
});

test('event allowance: a wall clock stepped backwards does not drain the allowance', () => {
  let now = 1_000_000;
  const allowance = new EventAllowance({ nowMs: () => now }, 1, 1 / 300);
  assert.equal(allowance.take('a', 'Normal'), true);
  now -= 3_600_000;
  assert.equal(allowance.take('a', 'Normal'), false);
  now += 3_600_000 + 300_000;
  assert.equal(allowance.take('a', 'Normal'), true, 'refills once time moves forward again');
});
