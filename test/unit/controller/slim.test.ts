import assert from 'node:assert/strict';
import { test } from 'node:test';

import { slimJob, slimSecondCronJob } from '../../../src/controller/slim.js';
import { job, scj } from './fixtures.js';

test('cached SecondCronJobs lose managedFields and the last-applied annotation, nothing else', () => {
  const full = scj({}, { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":true}', keep: 'me' }, finalizers: ['secondcron.io/cleanup'] });
  (full.metadata as unknown as Record<string, unknown>).managedFields = [{ manager: 'kubectl' }];
  const slim = slimSecondCronJob(full);
  assert.equal('managedFields' in slim.metadata, false);
  assert.deepEqual(slim.metadata.annotations, { keep: 'me' });
  assert.deepEqual(slim.metadata.finalizers, ['secondcron.io/cleanup']);
  assert.equal(slim.metadata.resourceVersion, full.metadata.resourceVersion);
  assert.deepEqual(slim.spec, full.spec);
  assert.ok((full.metadata as unknown as Record<string, unknown>).managedFields, 'the input is not mutated');
});

test('cached Jobs keep what the controller reads: identity, owner, slot, status', () => {
  const full = job('hb-1', { slot: '2026-12-02T10:00:05Z', outcome: 'Complete' });
  full.spec = { template: { spec: { containers: [{ name: 'x', image: 'y' }] } } };
  full.metadata.annotations = { ...full.metadata.annotations, other: 'dropped' };
  const slim = slimJob(full);
  assert.equal(slim.spec, undefined);
  assert.deepEqual(slim.metadata.annotations, { 'secondcron.io/scheduled-at': '2026-12-02T10:00:05Z' });
  assert.deepEqual(slim.metadata.ownerReferences, full.metadata.ownerReferences);
  assert.deepEqual(slim.metadata.labels, full.metadata.labels);
  assert.deepEqual(slim.status, full.status);
  assert.equal(slim.metadata.uid, full.metadata.uid);
});
