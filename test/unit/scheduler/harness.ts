import { FakeClock, type FakeClockOptions } from '../../../src/clock/fake-clock.js';
import { Scheduler, type Fire, type SchedulerOptions } from '../../../src/scheduler/scheduler.js';
import type { SlotSource } from '../../../src/scheduler/slot-source.js';

/** 2026-01-01T00:00:00Z: a whole-second wall start, so interval slots are easy to write down. */
export const W = Date.UTC(2026, 0, 1);

/** Slots anchorMs + k·periodMs (the interval rule of DESIGN §3), as src/schedule will provide. */
export function intervalSource(anchorMs: number, periodMs: number): SlotSource {
  return { next: (after) => anchorMs + (Math.floor((after - anchorMs) / periodMs) + 1) * periodMs };
}

/** Wraps a source and counts next() calls. */
export function countingSource(inner: SlotSource): SlotSource & { calls: number } {
  const counted = {
    calls: 0,
    next(after: number): number | null {
      counted.calls++;
      return inner.next(after);
    },
  };
  return counted;
}

export interface RecordedFire extends Fire {
  /** Monotonic time when onFire ran. */
  atMono: number;
  /** Wall time when onFire ran. */
  atWall: number;
}

export interface Harness {
  clock: FakeClock;
  scheduler: Scheduler;
  fires: RecordedFire[];
  steps: number[];
  errors: Array<{ error: unknown; key: string | undefined }>;
}

export interface HarnessOptions {
  scheduler?: Partial<Omit<SchedulerOptions, 'mono' | 'wall' | 'timers' | 'onFire'>>;
  clock?: FakeClockOptions;
  /** Runs inside onFire, after the fire is recorded (re-entrancy tests). */
  onFire?: (fire: Fire, h: Harness) => void;
}

export function makeHarness(options: HarnessOptions = {}): Harness {
  const clock = new FakeClock({ wallStartMs: W, ...options.clock });
  const fires: RecordedFire[] = [];
  const steps: number[] = [];
  const errors: Array<{ error: unknown; key: string | undefined }> = [];
  const hook = options.onFire;
  const scheduler: Scheduler = new Scheduler({
    mono: clock.mono,
    wall: clock.wall,
    timers: clock.timers,
    onFire: (fire) => {
      fires.push({ ...fire, atMono: clock.mono.nowMs(), atWall: clock.wall.nowMs() });
      hook?.(fire, h);
    },
    onClockStep: (delta) => steps.push(delta),
    onError: (error, key) => errors.push({ error, key }),
    ...options.scheduler,
  });
  const h: Harness = { clock, scheduler, fires, steps, errors };
  return h;
}
