import assert from 'node:assert/strict';
import { test } from 'node:test';

import { historyOf } from '../../../src/plugin/commands/history.js';
import { job, scj } from '../controller/fixtures.js';

test('history: newest first, times in the schedule zone, latency from the slot, manual runs marked, durations', () => {
  const owner = scj({ schedule: '* * * * * *', intervalSeconds: undefined, timeZone: 'Europe/Berlin' });
  const done = job('hb-1796205605', { slot: '2026-12-02T10:00:05Z', outcome: 'Complete', completion: '2026-12-02T10:00:09Z' });
  done.metadata.creationTimestamp = '2026-12-02T10:00:06Z';
  done.status = { ...done.status, startTime: '2026-12-02T10:00:06Z' };
  const manual = job('hb-manual-bcdfg', { slot: '2026-12-02T10:00:07Z' });
  manual.metadata.annotations = { 'secondcron.io/instantiate': 'manual' };
  manual.status = { active: 1, startTime: '2026-12-02T10:00:07Z' };
  const entries = historyOf(owner, [done, manual], Date.parse('2026-12-02T10:00:17Z'));
  assert.deepEqual(entries, [
    { namespace: owner.metadata.namespace, secondCronJob: 'hb', job: 'hb-manual-bcdfg', manual: true, created: '2026-12-02T11:00:07+01:00', outcome: 'Running', durationSeconds: 10 },
    {
      namespace: owner.metadata.namespace,
      secondCronJob: 'hb',
      job: 'hb-1796205605',
      manual: false,
      slot: '2026-12-02T11:00:05+01:00',
      created: '2026-12-02T11:00:06+01:00',
      triggerLatencySeconds: 1,
      outcome: 'Complete',
      durationSeconds: 3,
    },
  ]);
});
