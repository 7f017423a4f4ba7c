import assert from 'node:assert/strict';
import { test } from 'node:test';

import { createDeadlineMs, decideFire } from '../../../src/controller/policy.js';
import { job, scj } from './fixtures.js';

const slot = Date.parse('2026-12-02T10:00:05Z');
const running = [job('hb-1', { slot: '2026-12-02T10:00:04Z' })];

test('Allow creates even while a Job runs', () => {
  assert.deepEqual(decideFire(scj().spec, running, slot, slot + 5), { kind: 'create', replace: [] });
});

test('Forbid skips while a Job runs, creates when none runs', () => {
  const spec = scj({ concurrencyPolicy: 'Forbid' }).spec;
  assert.deepEqual(decideFire(spec, running, slot, slot), { kind: 'skip', reason: 'forbid' });
  assert.deepEqual(decideFire(spec, [], slot, slot), { kind: 'create', replace: [] });
});

test('Replace creates and names the running Jobs to delete', () => {
  const d = decideFire(scj({ concurrencyPolicy: 'Replace' }).spec, running, slot, slot);
  assert.equal(d.kind, 'create');
  assert.deepEqual(d.kind === 'create' ? d.replace.map((j) => j.metadata.name) : [], ['hb-1']);
});

test('startingDeadlineSeconds: late beyond the deadline is skipped, at the deadline is not', () => {
  const spec = scj({ startingDeadlineSeconds: 2 }).spec;
  assert.deepEqual(decideFire(spec, [], slot, slot + 2000), { kind: 'create', replace: [] });
  assert.deepEqual(decideFire(spec, [], slot, slot + 2001), { kind: 'skip', reason: 'deadline' });
  // Without a deadline, lateness alone never skips (CronJob semantics).
  assert.deepEqual(decideFire(scj().spec, [], slot, slot + 3_600_000), { kind: 'create', replace: [] });
});

test('create waits and retries until the starting deadline, or one minute without one', () => {
  assert.equal(createDeadlineMs(scj({ startingDeadlineSeconds: 10 }).spec, slot), slot + 10_000);
  assert.equal(createDeadlineMs(scj({ startingDeadlineSeconds: 0 }).spec, slot), slot);
  assert.equal(createDeadlineMs(scj().spec, slot), slot + 60_000);
});
