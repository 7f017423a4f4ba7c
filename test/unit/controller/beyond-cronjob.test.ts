// spec.schedules and the notBefore/notAfter window through the real Controller (fake clock, fake API
// server): the union of the expressions' instants runs once per instant, and no slot outside the
// window is run or counted; Ready says why nothing starts.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FINALIZER, type Job, type SecondCronJobStatus } from '../../../src/api/resources.js';
import { ControllerHarness, JOBS_PATH, SCJ_PATH, sec } from './controller-harness.js';
import { scj } from './fixtures.js';

const withFinalizer = (spec = {}) => scj({ intervalSeconds: undefined, ...spec }, { finalizers: [FINALIZER] });
const created = (h: ControllerHarness): number[] => h.creates().map((n) => Number(n.split('-')[1]) - sec(0));
const lastReady = (h: ControllerHarness): string | undefined => {
  const patches = h.rest.sent('patch', `${SCJ_PATH}/status`).map((r) => (r.body as { status: SecondCronJobStatus }).status);
  return patches.at(-1)?.conditions?.find((c) => c.type === 'Ready')?.reason;
};
const total = async (h: ControllerHarness): Promise<number> => Object.values(await h.missed()).reduce((a, b) => a + b, 0);

test('schedules: the union of two expressions, an instant listed by both runs once', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({ schedules: ['*/2 * * * * *', '*/3 * * * * *'] }));
  await h.advance(6_600);
  assert.deepEqual(created(h), [2, 3, 4, 6], 'second 6 is in both: one Job');
  assert.equal(await total(h), 0);
  assert.equal(h.rest.sent('create', JOBS_PATH).filter((r) => (r.body as Job).metadata.name === `hb-${sec(6)}`).length, 1);
});

test('window: no slot before notBefore or after notAfter is run or counted; Ready says NotYetActive, then WindowEnded', async () => {
  const h = new ControllerHarness();
  await h.apply(withFinalizer({ schedule: '* * * * * *', notBefore: '2026-12-02T10:00:03Z', notAfter: '2026-12-02T10:00:05Z' }));
  await h.advance(1_000);
  assert.deepEqual(created(h), []);
  assert.equal(lastReady(h), 'NotYetActive');
  await h.advance(9_000);
  assert.deepEqual(created(h), [3, 4, 5]);
  assert.equal(await total(h), 0, 'slots outside the window are not counted');
  assert.equal(lastReady(h), 'WindowEnded');
});
