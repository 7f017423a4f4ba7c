// DESIGN §3's invariants, property-tested on the real controller: two replicas (Controller, JobCreator,
// WorkQueue, scheduler, each with its own caches and ledger) on a fake clock, against a fake API server
// that keeps its own Jobs and judges every create from outside the operator. Random histories of up to
// 250 steps: slots falling due; create answers immediate, slow, and arriving after the next slot (201,
// 409, 429, 503, 500 stored or not, timeouts stored or not, quota); watch lag and relists; Jobs
// finishing, failing or deleted by hand; leaders crashing, pausing past their renew deadline and
// handing over gracefully; suspend / resume (also folded into one update), schedule, history and
// template edits; wall-clock steps both ways; failing deletes; history limit 0 and a TTL of 0.
// Checked: I11 (no Job name stored twice), I2 (Forbid and Enqueue: never more than maxConcurrency running), I3 (Replace: deletes first),
// I4 (no create for an older slot after a newer one), I6 (no create while suspended, none after the
// resume for a slot that fell while suspended), after every step; I10 (liveness: once the API
// server answers normally every slot gets its Job) and I1 (slots without a Job == slots counted missed)
// at the end. I1 is judged only in histories with no crash, pause, suspension, schedule edit or clock
// step, about one history in ten of the full mix (it prints how many): a second property draws only
// those. Failures shrink to a short history and print it.
//
// FC_SEED=<n>|random and FC_RUNS=<n> explore beyond CI's fixed seed.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import fc from 'fast-check';

import type { CreateFault } from './world/fake-api-server.js';
import { type Policy, PropertyViolation, type Step, World, type WorldOptions } from './world/world.js';

const faults: CreateFault[] = ['slow', 'throttled', 'throttled-late', 'unavailable-late', 'error-stored', 'error-nothing', 'timeout-stored', 'timeout-nothing', 'quota', 'invalid'];

type Weighted = { weight: number; arbitrary: fc.Arbitrary<Step> };
const advance: Weighted = { weight: 30, arbitrary: fc.integer({ min: 1, max: 2_500 }).map((ms): Step => ({ kind: 'advance', ms })) };
const answersOk: Weighted = { weight: 4, arbitrary: fc.constant<Step>({ kind: 'fault', fault: 'ok' }) };
const fault: Weighted = { weight: 6, arbitrary: fc.constantFrom(...faults).map((f): Step => ({ kind: 'fault', fault: f })) };
const finish: Weighted = { weight: 6, arbitrary: fc.boolean().map((ok): Step => ({ kind: 'finish', ok })) };
const deleteByHand: Weighted = { weight: 1, arbitrary: fc.nat(9).map((pick): Step => ({ kind: 'deleteByHand', pick })) };
const lag: Weighted = { weight: 2, arbitrary: fc.record({ replica: fc.constantFrom<0 | 1>(0, 1), ms: fc.constantFrom(0, 0, 50, 300, 1_500) }).map((r): Step => ({ kind: 'lag', ...r })) };
const relist: Weighted = { weight: 1, arbitrary: fc.constantFrom<0 | 1>(0, 1).map((replica): Step => ({ kind: 'relist', replica })) };
const editHistory: Weighted = { weight: 1, arbitrary: fc.record({ successful: fc.nat(2), failed: fc.nat(1) }).map((r): Step => ({ kind: 'editHistory', ...r })) };
const editTemplate: Weighted = { weight: 1, arbitrary: fc.constant<Step>({ kind: 'editTemplate' }) };
const deletesFail: Weighted = { weight: 1, arbitrary: fc.boolean().map((on): Step => ({ kind: 'deletesFail', on })) };

const step: fc.Arbitrary<Step> = fc.oneof(
  advance,
  answersOk,
  fault,
  finish,
  deleteByHand,
  lag,
  relist,
  { weight: 1, arbitrary: fc.constantFrom<Step>({ kind: 'crash' }, { kind: 'pause' }, { kind: 'handover' }, { kind: 'handover' }) },
  { weight: 1, arbitrary: fc.constantFrom<Step>({ kind: 'suspend', on: true }, { kind: 'suspend', on: false }, { kind: 'suspendResumeFolded' }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((intervalSeconds): Step => ({ kind: 'editSchedule', intervalSeconds })) },
  editHistory,
  editTemplate,
  { weight: 1, arbitrary: fc.integer({ min: -8_000, max: 8_000 }).map((ms): Step => ({ kind: 'stepClock', ms })) },
  deletesFail,
);

/**
 * The same without the steps that make the exact count unjudgeable (below), which about nine histories
 * in ten of the mix above have. Leaders still hand over gracefully; creates fail every way.
 */
const countableStep: fc.Arbitrary<Step> = fc.oneof(advance, answersOk, fault, finish, deleteByHand, lag, relist, { weight: 1, arbitrary: fc.constant<Step>({ kind: 'handover' }) }, editHistory, editTemplate, deletesFail);

const worldOf = (steps: fc.Arbitrary<Step>) =>
  fc.record({
    policy: fc.constantFrom<Policy>('Allow', 'Forbid', 'Replace', 'Enqueue'),
    maxConcurrency: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
    deadline: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
    intervalSeconds: fc.integer({ min: 1, max: 3 }),
    historyLimit: fc.constantFrom(0, 0, 1, 3),
    ttlZero: fc.boolean(),
    seed: fc.nat(),
    steps: fc.array(steps, { minLength: 1, maxLength: 250, size: 'max' }),
  });

type Run = WorldOptions & { steps: Step[] };

/** Steps that change what the slots are or who decides them make the exact count (I1) unjudgeable. */
const unsettling = new Set<Step['kind']>(['crash', 'pause', 'suspend', 'suspendResumeFolded', 'editSchedule', 'stepClock']);

async function play(r: Run): Promise<World> {
  const w = new World(r);
  try {
    for (const s of r.steps) await w.run(s);
    await w.settle({ countExactly: !r.steps.some((s) => unsettling.has(s.kind)) });
  } catch (err) {
    if (err instanceof PropertyViolation) console.error(`${err.message}\n  jobs: ${w.describe()}\n  steps:\n  ${w.log.join('\n  ')}`);
    throw err;
  }
  return w;
}

const env = (name: string): string | undefined => process.env[name];
const seed = env('FC_SEED') === 'random' ? Date.now() : Number(env('FC_SEED') ?? 1_796_300_000);
const numRuns = Number(env('FC_RUNS') ?? 2_000);

test(`I1–I4, I6, I10, I11 hold on the real controller over ${numRuns} histories of up to 250 steps, which reach every hard state`, { timeout: 30 * 60_000 }, async () => {
  const reached: Record<string, number> = {};
  const lengths: number[] = [];
  let counted = 0;
  await fc.assert(
    fc.asyncProperty(worldOf(step), async (r) => {
      const w = await play(r);
      lengths.push(r.steps.length);
      if (!r.steps.some((s) => unsettling.has(s.kind))) counted++;
      for (const [what, yes] of Object.entries(await w.coverage())) reached[what] = (reached[what] ?? 0) + (yes ? 1 : 0);
    }),
    { numRuns, seed },
  );
  lengths.sort((a, b) => a - b);
  console.log(`runs reaching each hard state (of ${numRuns}): ${JSON.stringify(reached)}; steps p50 ${lengths[lengths.length >> 1]}, max ${lengths.at(-1)}; judged by I1: ${counted}`);
  // A property over histories that never reach these states proves nothing about them (the same runs, not another seed).
  for (const [what, n] of Object.entries(reached)) assert.ok(n >= Math.min(50, numRuns / 10), `${what}: reached in ${n} of ${numRuns} runs`);
});

const countableRuns = Math.ceil(numRuns / 2);

test(`I1 (every slot without a Job counted once, and only those) also holds, with I2–I4, I10, I11, over ${countableRuns} histories of up to 250 steps with graceful handovers`, { timeout: 30 * 60_000 }, async () => {
  const lengths: number[] = [];
  let handedOver = 0;
  await fc.assert(
    fc.asyncProperty(worldOf(countableStep), async (r) => {
      const w = await play(r); // every one of these histories is judged by I1
      lengths.push(r.steps.length);
      if (w.seen.handover > 0) handedOver++;
    }),
    { numRuns: countableRuns, seed },
  );
  lengths.sort((a, b) => a - b);
  console.log(`countable histories: steps p50 ${lengths[lengths.length >> 1]}, max ${lengths.at(-1)}; with a handover: ${handedOver}`);
  assert.ok(handedOver >= countableRuns / 4, `handovers in ${handedOver} of ${countableRuns} histories`);
});
