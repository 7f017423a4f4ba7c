// DESIGN §3's invariants, property-tested: the pure plan and the slot ledger are driven through random
// sequences of slots falling due, create answers (created, AlreadyExists, 429, 503, 500 and timeouts that
// did or did not store the Job), Jobs finishing or deleted, watch lag and relists, leadership lost and
// regained, suspend/resume, schedule and history-limit edits, wall-clock steps both ways and failing
// deletes. The model (model.ts) checks I2–I7 after every step and I1/I6/I8 once the world has calmed down.
// Failures shrink to a short sequence and print it.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import fc from 'fast-check';

import { type Answer, Model, type Policy, type Step, Violation } from './model.js';

const answers: Answer[] = ['created', 'throttled', 'unavailable', 'error-stored', 'error-nothing', 'timeout-stored', 'timeout-nothing', 'invalid'];

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 2_500 }).map((ms): Step => ({ kind: 'advance', ms })) },
  { weight: 6, arbitrary: fc.constant<Step>({ kind: 'send' }) },
  { weight: 4, arbitrary: fc.constant<Step>({ kind: 'answer', answer: 'created' }) },
  { weight: 4, arbitrary: fc.constantFrom(...answers).map((answer): Step => ({ kind: 'answer', answer })) },
  { weight: 4, arbitrary: fc.constant<Step>({ kind: 'observe' }) },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: 'relist' }) },
  { weight: 3, arbitrary: fc.record({ pick: fc.nat(9), ok: fc.boolean() }).map((r): Step => ({ kind: 'finish', ...r })) },
  { weight: 1, arbitrary: fc.nat(9).map((pick): Step => ({ kind: 'deleteJob', pick })) },
  { weight: 2, arbitrary: fc.constant<Step>({ kind: 'writeStatus' }) },
  { weight: 1, arbitrary: fc.boolean().map((lead): Step => ({ kind: 'leadership', lead })) },
  { weight: 1, arbitrary: fc.boolean().map((on): Step => ({ kind: 'suspend', on })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }).map((intervalSeconds): Step => ({ kind: 'editSchedule', intervalSeconds })) },
  { weight: 1, arbitrary: fc.record({ successful: fc.nat(3), failed: fc.nat(2) }).map((r): Step => ({ kind: 'editHistory', ...r })) },
  { weight: 1, arbitrary: fc.integer({ min: -8_000, max: 8_000 }).map((ms): Step => ({ kind: 'stepClock', ms })) },
  { weight: 1, arbitrary: fc.boolean().map((on): Step => ({ kind: 'deletesFail', on })) },
);

const world = fc.record({
  policy: fc.constantFrom<Policy>('Allow', 'Forbid', 'Replace'),
  deadline: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
  interval: fc.integer({ min: 1, max: 3 }),
  steps: fc.array(step, { minLength: 1, maxLength: 80 }),
});

function check(w: { policy: Policy; deadline: number | undefined; interval: number; steps: Step[] }): void {
  const m = new Model(w.policy, w.deadline, w.interval);
  try {
    for (const s of w.steps) m.run(s);
    m.settle();
    m.checkSettled();
  } catch (err) {
    if (err instanceof Violation) {
      // fast-check prints the shrunk counterexample; the violation and the steps as the model ran them say why.
      console.error(`${err.message}\n  steps:\n  ${m.log.join('\n  ')}`);
    }
    throw err;
  }
}

test('I1–I8 hold for every sequence of slots, answers, Job changes, leadership, suspension, edits and clock steps', () => {
  // A fixed seed by default, so that CI is repeatable; FC_SEED=random (or a number) explores further.
  const env = process.env.FC_SEED;
  const seed = env === 'random' ? Date.now() : env ? Number(env) : 1_796_300_000;
  fc.assert(fc.property(world, check), { numRuns: 1_500, seed });
});

test('the generator reaches the interesting states (a property over sequences it never makes proves nothing)', () => {
  const seen = { ranAfterAnswer: 0, superseded: 0, unknownRetried: 0, forbidSkip: 0, replaced: 0, late: 0, suspendedResume: 0, stepBack: 0 };
  fc.assert(
    fc.property(world, (w) => {
      const m = new Model(w.policy, w.deadline, w.interval);
      for (const s of w.steps) {
        const before = m.missedTotal;
        const create = m.ledger.create;
        m.run(s);
        // A slot that fell due while the create was on the wire runs as soon as the answer is in.
        if (create?.sent && s.kind === 'answer' && m.ledger.create && m.ledger.create.slotMs > create.slotMs) seen.ranAfterAnswer++;
        if (create?.nothingStored && !create.sent && m.ledger.create !== create && m.missedTotal > before) seen.superseded++;
        if (create && !create.nothingStored && s.kind === 'send' && m.ledger.create?.sent) seen.unknownRetried++;
        if (s.kind === 'stepClock' && s.ms < 0) seen.stepBack++;
        if (s.kind === 'suspend' && !s.on) seen.suspendedResume++;
      }
      seen.forbidSkip += [...m.decisions.values()].filter((d) => d === 'forbid').length > 0 ? 1 : 0;
      seen.late += [...m.decisions.values()].filter((d) => d === 'late').length > 0 ? 1 : 0;
      seen.replaced += m.replaced > 0 ? 1 : 0;
    }),
    { numRuns: 4_000, seed: 20_261_203 }, // fixed: coverage is a property of the generator, not of luck
  );
  console.log(`generator coverage over 4,000 runs: ${JSON.stringify(seen)}`);
  for (const [what, n] of Object.entries(seen)) assert.ok(n >= 5, `${what}: ${n} runs of 4,000`);
});

test('the model catches a plan that ignores the create in flight (a regression guard for the property itself)', () => {
  // Forbid, a create on the wire answered "created" only after the next slot fell due: had the plan
  // decided the newer slot meanwhile, two Jobs would run.
  const m = new Model('Forbid', undefined, 1);
  for (const s of [{ kind: 'advance', ms: 600 }, { kind: 'send' }, { kind: 'advance', ms: 1_000 }, { kind: 'answer', answer: 'created' }] as Step[]) m.run(s);
  assert.equal(m.ledger.create, undefined);
  assert.deepEqual([...m.decisions.entries()].map(([, d]) => d), ['job', 'forbid'], 'slot 2 waited for the answer, then was skipped');
  const broken = new Model('Forbid', undefined, 1);
  broken.run({ kind: 'advance', ms: 600 });
  broken.run({ kind: 'send' });
  // A second create beside the first, as the old trigger path did:
  broken.creator = undefined;
  assert.throws(() => {
    broken.server.set('hb-x', { metadata: { name: 'hb-x', namespace: 'ns', uid: 'x', resourceVersion: '1', creationTimestamp: '', annotations: { 'secondcron.io/scheduled-at': '2026-12-02T10:00:01.000Z' } } });
    broken.server.set('hb-y', { metadata: { name: 'hb-y', namespace: 'ns', uid: 'y', resourceVersion: '1', creationTimestamp: '', annotations: { 'secondcron.io/scheduled-at': '2026-12-02T10:00:02.000Z' } } });
    broken.run({ kind: 'observe' });
  }, /I2/);
});
