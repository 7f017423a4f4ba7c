import assert from 'node:assert/strict';
import { test } from 'node:test';

import { jobsToPrune } from '../../../src/controller/history.js';
import { job } from './fixtures.js';

const at = (s: number): string => new Date(Date.parse('2026-12-02T10:00:00Z') + s * 1000).toISOString();

test('keeps the newest N successful and M failed, prunes older finished ones, never active ones', () => {
  const jobs = [
    job('ok1', { slot: at(1), outcome: 'Complete', completion: at(2) }),
    job('ok2', { slot: at(3), outcome: 'Complete', completion: at(4) }),
    job('ok3', { slot: at(5), outcome: 'Complete', completion: at(6) }),
    job('bad1', { slot: at(7), outcome: 'Failed', completion: at(8) }),
    job('bad2', { slot: at(9), outcome: 'Failed', completion: at(10) }),
    job('running', { slot: at(11) }),
  ];
  assert.deepEqual(jobsToPrune(jobs, 2, 1).map((j) => j.metadata.name).sort(), ['bad1', 'ok1']);
  assert.deepEqual(jobsToPrune(jobs, 0, 0).map((j) => j.metadata.name).sort(), ['bad1', 'bad2', 'ok1', 'ok2', 'ok3']);
  assert.deepEqual(jobsToPrune(jobs, 10, 10), []);
});

test('Jobs already being deleted are neither kept nor pruned again', () => {
  const jobs = [
    job('old', { slot: at(1), outcome: 'Complete', completion: at(2), deleting: true }),
    job('new', { slot: at(3), outcome: 'Complete', completion: at(4) }),
  ];
  assert.deepEqual(jobsToPrune(jobs, 1, 1), []);
});
