import assert from 'node:assert/strict';
import { test } from 'node:test';

import { buildJob, jobName } from '../../../src/controller/job-builder.js';
import { isOwnedBy, jobSlotMs } from '../../../src/controller/job-state.js';
import { scj } from './fixtures.js';

test('job name is <name>-<slot unix seconds>, so a slot can only be created once', () => {
  const slot = Date.parse('2026-12-02T10:00:05Z');
  assert.equal(jobName('heartbeat', slot), 'heartbeat-1796205605');
  assert.equal(jobName('heartbeat', slot + 999), 'heartbeat-1796205605');
});

test('built Job carries label, scheduled-at annotation with milliseconds, controller ownerReference and template', () => {
  const owner = scj({ jobTemplate: { metadata: { labels: { app: 'x' }, annotations: { note: 'y' } }, spec: { backoffLimit: 2, template: {} } } });
  const slot = Date.parse('2026-12-02T10:00:05Z');
  const job = buildJob(owner, slot);
  assert.equal(job.metadata.name, 'hb-1796205605');
  assert.equal(job.metadata.namespace, 'ns');
  assert.deepEqual(job.metadata.labels, { app: 'x', 'secondcron.io/secondcronjob': 'hb' });
  assert.equal(job.metadata.annotations?.['secondcron.io/scheduled-at'], '2026-12-02T10:00:05.000Z');
  assert.equal(job.metadata.annotations?.note, 'y');
  assert.deepEqual(job.metadata.ownerReferences, [
    { apiVersion: 'secondcron.io/v1', kind: 'SecondCronJob', name: 'hb', uid: 'uid-1', controller: true, blockOwnerDeletion: true },
  ]);
  assert.equal(job.spec?.backoffLimit, 2);
  // The template is copied, not shared: mutating the Job must not touch the cached resource.
  (job.spec as Record<string, unknown>).backoffLimit = 9;
  assert.equal(owner.spec.jobTemplate.spec.backoffLimit, 2);
  const asJob = { ...job, metadata: { ...job.metadata, uid: 'u', resourceVersion: '1', creationTimestamp: '' } };
  assert.equal(jobSlotMs(asJob), slot);
  assert.equal(isOwnedBy(asJob, owner), true);
  assert.equal(isOwnedBy(asJob, scj({}, { uid: 'other' })), false);
});
