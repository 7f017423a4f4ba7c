// Forbid judged on revisions (test/integration/helpers/forbid-overlaps.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { forbidOverlaps } from '../../integration/helpers/forbid-overlaps.js';

test('a Job created before the previous one ended overlaps it; one created after does not; an unended Job is active', () => {
  assert.deepEqual(forbidOverlaps([{ name: 'a', firstRv: 10, endedRv: 20 }, { name: 'b', firstRv: 21, endedRv: 30 }, { name: 'c', firstRv: 31 }]), []);
  assert.deepEqual(forbidOverlaps([{ name: 'b', firstRv: 15, endedRv: 30 }, { name: 'a', firstRv: 10, endedRv: 20 }, { name: 'c', firstRv: 40 }, { name: 'd', firstRv: 41 }]), [
    'b created (rv 15) while a (rv 10–20) was active',
    'd created (rv 41) while c (rv 40–active) was active',
  ]);
});
