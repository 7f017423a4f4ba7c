import assert from 'node:assert/strict';
import { test } from 'node:test';

import { buildJob } from '../../../src/controller/job-builder.js';
import { slimJob, slimSecondCronJob } from '../../../src/controller/slim.js';
import { job, scj } from './fixtures.js';

/** As the cache's object reads when written out: the Job template's spec is kept as text and read back. */
function asJson(o: unknown): unknown {
  return JSON.parse(JSON.stringify(o));
}

test('cached SecondCronJobs lose managedFields and the last-applied annotation, nothing else', () => {
  const full = scj({}, { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":true}', keep: 'me' }, finalizers: ['secondcron.io/cleanup'] });
  (full.metadata as unknown as Record<string, unknown>).managedFields = [{ manager: 'kubectl' }];
  const slim = slimSecondCronJob(full);
  assert.equal('managedFields' in slim.metadata, false);
  assert.deepEqual(slim.metadata.annotations, { keep: 'me' });
  assert.deepEqual(slim.metadata.finalizers, ['secondcron.io/cleanup']);
  assert.equal(slim.metadata.resourceVersion, full.metadata.resourceVersion);
  assert.deepEqual(asJson(slim.spec), asJson(full.spec));
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

test('a new version at the same generation keeps the cached spec object; a new generation or a new object brings its own', () => {
  const first = slimSecondCronJob(scj({ intervalSeconds: 5 }, { resourceVersion: '1', generation: 1 }));
  const statusOnly = slimSecondCronJob({ ...scj({ intervalSeconds: 5 }, { resourceVersion: '2', generation: 1 }), status: { lastScheduleTime: '2026-12-02T10:00:05Z' } }, first);
  assert.equal(statusOnly.spec, first.spec, 'the same object, not an equal copy');
  assert.deepEqual([statusOnly.metadata.resourceVersion, statusOnly.status?.lastScheduleTime], ['2', '2026-12-02T10:00:05Z']);
  const edited = slimSecondCronJob(scj({ intervalSeconds: 7 }, { resourceVersion: '3', generation: 2 }), statusOnly);
  assert.notEqual(edited.spec, first.spec);
  assert.equal(edited.spec.intervalSeconds, 7);
  const recreated = slimSecondCronJob(scj({ intervalSeconds: 9 }, { uid: 'uid-2', resourceVersion: '4', generation: 1 }), first);
  assert.equal(recreated.spec.intervalSeconds, 9, 'a new object with the same name and generation 1');
  const noGeneration = slimSecondCronJob(scj({ intervalSeconds: 11 }, { resourceVersion: '5', generation: undefined }), { ...first, metadata: { ...first.metadata, generation: undefined } });
  assert.equal(noGeneration.spec.intervalSeconds, 11);
});

test('cached SecondCronJobs share one copy of the finalizer list; the values are unchanged and the input is not mutated', () => {
  const ready = { type: 'Ready', status: 'True' as const, reason: 'Scheduled', message: 'Scheduled: every 5s', lastTransitionTime: '2026-12-07T00:00:00Z' };
  const inputs = ['a', 'b'].map((name, i) => ({
    ...scj({ intervalSeconds: 5 }, { name, uid: `uid-${name}`, finalizers: ['secondcron.io/finalizer'] }),
    status: { conditions: [{ ...ready, lastTransitionTime: `2026-12-07T00:00:0${i}Z` }] },
  }));
  const before = structuredClone(inputs);
  const [a, b] = inputs.map((o) => slimSecondCronJob(o));
  assert.ok(a && b);
  assert.equal(a.metadata.finalizers, b.metadata.finalizers, 'the same array, not an equal copy');
  assert.ok(Object.isFrozen(a.metadata.finalizers));
  assert.deepEqual(asJson([a, b]), before, 'every value as it came');
  assert.deepEqual(inputs, before, 'the input is not mutated');
  assert.notEqual(a.metadata.finalizers, inputs[0]?.metadata.finalizers);
  // A later version of a keeps its strings and its spec; its own finalizer list is the shared one.
  const later = slimSecondCronJob({ ...structuredClone(before[0]!), metadata: { ...structuredClone(before[0]!.metadata), resourceVersion: '99' } }, a);
  assert.equal(later.metadata.finalizers, a.metadata.finalizers);
  assert.equal(later.spec, a.spec);
  assert.deepEqual(asJson(later), { ...before[0], metadata: { ...before[0]!.metadata, resourceVersion: '99' } });
});

test('the cached Job template builds the same Job as the resource as it came, a new copy each time; a template without a spec stays as it came', () => {
  const full = scj({}, { name: 'tmpl' });
  full.spec.jobTemplate = { metadata: { labels: { team: 'a' } }, spec: { backoffLimit: 2, template: { spec: { containers: [{ name: 'x', image: 'busybox:1.36', command: ['true'] }], restartPolicy: 'Never' } } } };
  const before = structuredClone(full);
  const slim = slimSecondCronJob(full);
  assert.deepEqual(buildJob(slim, Date.UTC(2026, 11, 7, 9)), buildJob(before, Date.UTC(2026, 11, 7, 9)));
  const spec = slim.spec.jobTemplate.spec;
  (spec as { backoffLimit: number }).backoffLimit = 9;
  assert.equal(slim.spec.jobTemplate.spec.backoffLimit, 2, 'a change to one copy is not in the next');
  assert.deepEqual(full, before, 'the input is not mutated');
  const odd = scj({}, { name: 'odd' });
  (odd.spec as unknown as Record<string, unknown>).jobTemplate = { metadata: {} };
  assert.deepEqual(asJson(slimSecondCronJob(odd).spec), asJson(odd.spec));
});
