import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { W, intervalSource, makeHarness } from './harness.js';

const HOUR = 3_600_000;

describe('Scheduler wall-clock steps and slew', () => {
  it('a forward step of +1 h is detected; overdue entries fire once with a skipped count', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.set('second', intervalSource(W, 1000));
    h.scheduler.set('hourly', intervalSource(W + HOUR / 2, HOUR)); // next slot W+30min
    h.scheduler.start();
    h.clock.advance(1000);
    assert.equal(h.fires.length, 1);

    h.clock.advance(200);
    h.clock.stepWall(HOUR); // at mono 1200
    h.clock.advance(800); // wake at mono 2000
    assert.equal(h.steps.length, 1);
    assert.ok(Math.abs(h.steps[0]! - HOUR) < 1, `step reported as ${h.steps[0]}`);

    const after = h.fires.slice(1);
    assert.deepEqual(
      after.map((f) => [f.key, f.slotMs - W, f.skipped, f.skippedFirstMs === undefined ? null : f.skippedFirstMs - W]),
      [
        ['hourly', HOUR / 2, 0, null],
        ['second', HOUR + 2000, 3600, 2000],
      ],
    );
    assert.equal(after[0]!.latenessMs, HOUR / 2 + 2000);
    assert.equal(after[1]!.latenessMs, 0);
    // And then back on the grid in the new wall time.
    h.clock.advance(1000);
    assert.equal(h.fires.at(-1)!.slotMs, W + HOUR + 3000);
    assert.equal(h.fires.at(-1)!.skipped, 0);
    assert.equal(h.scheduler.nextSlot('hourly'), W + HOUR + HOUR / 2);
  });

  it('a step is detected within maxSleepMs even with nothing due', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 }, scheduler: { maxSleepMs: 5000 } });
    h.scheduler.set('daily', intervalSource(W, 86_400_000));
    h.scheduler.start();
    h.clock.advance(100);
    h.clock.stepWall(-2 * HOUR);
    h.clock.advance(4899);
    assert.equal(h.steps.length, 0);
    h.clock.advance(1);
    assert.deepEqual(h.steps, [-2 * HOUR]);
    assert.equal(h.fires.length, 0);
  });

  it('a backward step of -1 h recomputes: the next fire is about 1 s later, not 1 h later', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.set('second', intervalSource(W, 1000));
    h.scheduler.start();
    h.clock.advance(1000);
    h.clock.advance(300);
    h.clock.stepWall(-HOUR); // at mono 1300; wall W+1300-1h
    h.clock.advance(700); // armed wake at mono 2000 detects the step
    assert.deepEqual(h.steps, [-HOUR]);
    assert.equal(h.fires.length, 1, 'nothing fires at the wake that found the step');
    assert.equal(h.scheduler.nextSlot('second'), W - HOUR + 3000);

    h.clock.advance(1000);
    assert.equal(h.fires.length, 2);
    const f = h.fires[1]!;
    assert.equal(f.slotMs, W - HOUR + 3000);
    assert.equal(f.atMono, 3000, 'about 1 s after the step was seen');
    assert.equal(f.latenessMs, 0);
    assert.equal(f.atWall, f.slotMs);
  });

  it('slew below the threshold re-anchors silently and slots follow the wall clock', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 }, scheduler: { stepThresholdMs: 1000 } });
    h.scheduler.set('second', intervalSource(W, 1000));
    h.scheduler.start();
    // 20 ms of wall gain per second, 100 times: 2 s in total, but never 1 s at once.
    for (let i = 0; i < 100; i++) {
      assert.ok(h.clock.runNext());
      h.clock.stepWall(20);
    }
    h.clock.runNext();
    assert.deepEqual(h.steps, [], 'slew is not a step');
    const slots = h.fires.map((f) => f.slotMs - W);
    assert.deepEqual(
      slots,
      Array.from({ length: slots.length }, (_, i) => (i + 1) * 1000),
      'every slot, in order, none skipped',
    );
    for (const f of h.fires) {
      assert.ok(f.atWall >= f.slotMs, 'never before the slot on the wall clock');
      assert.ok(f.atWall - f.slotMs <= 20 + 1e-3, 'late by at most one un-noticed slew increment');
    }
    // The monotonic schedule absorbed the slew: 2 s less monotonic time than wall time elapsed.
    const last = h.fires.at(-1)!;
    assert.ok(Math.abs(last.atMono - (last.atWall - W - 2000)) < 1e-3);
  });

  it('onClockStep throwing is reported and scheduling continues', () => {
    const h = makeHarness({
      clock: { monoStartMs: 0 },
      scheduler: {
        onClockStep: () => {
          throw new Error('boom');
        },
      },
    });
    h.scheduler.set('second', intervalSource(W, 1000));
    h.scheduler.start();
    h.clock.advance(500);
    h.clock.stepWall(5000);
    h.clock.advance(500);
    assert.equal(h.errors.length, 1);
    assert.equal(h.errors[0]!.key, undefined);
    assert.equal(h.fires.length, 1);
    assert.equal(h.fires[0]!.slotMs, W + 6000);
    assert.equal(h.fires[0]!.skipped, 5);
  });

  it('set() right after an unnoticed forward step does not hand out an already-passed slot', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 }, scheduler: { maxSleepMs: 5000 } });
    h.scheduler.start();
    h.clock.advance(100);
    h.clock.stepWall(HOUR); // the next anchor check is up to 5 s away
    h.scheduler.set('minute', intervalSource(W, 60_000));
    assert.equal(h.scheduler.nextSlot('minute'), W + HOUR + 60_000);
    h.clock.advance(61_000);
    assert.deepEqual(h.steps, [HOUR]);
    assert.deepEqual(
      h.fires.map((f) => [f.slotMs - W, f.skipped]),
      [[HOUR + 60_000, 0]],
      'no spurious late fire of a slot from before the step',
    );
  });

  it('recomputation after a step still honours set()\'s afterMs', () => {
    const h = makeHarness({ clock: { monoStartMs: 0 } });
    h.scheduler.set('a', intervalSource(W, 1000), W + 2 * HOUR);
    h.scheduler.set('b', intervalSource(W, 1000));
    h.scheduler.start();
    h.clock.advance(500);
    h.clock.stepWall(HOUR);
    h.clock.advance(500); // wake at mono 1000 notices the step
    assert.deepEqual(h.steps, [HOUR]);
    assert.equal(h.scheduler.nextSlot('a'), W + 2 * HOUR + 1000, 'not pulled before afterMs');
    assert.deepEqual(
      h.fires.map((f) => f.key),
      ['b'],
    );
  });
});
