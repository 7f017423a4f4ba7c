// Scenario 5: the pure timer core alone, on the real clocks (no API, no operator): how late does
// the one-timer-over-a-heap design fire when it carries 1,000 timers per second? A bare setTimeout
// loop aimed at the same deadlines runs beside it as the machine's own floor: on a shared, loaded
// machine the OS, not the scheduler, decides most of the tail.
import { monitorEventLoopDelay } from 'node:perf_hooks';

import { createSystemTimers, systemMonotonicClock, systemWallClock } from '../../src/clock/system-clock.js';
import { IntervalSlotSource } from '../../src/schedule/interval-slot-source.js';
import { type Fire, Scheduler, type SlotSource } from '../../src/scheduler/index.js';
import { type Summary, round2, summarize } from '../lib/stats.js';
import { say, sleepUntil } from '../lib/progress.js';

/**
 * Every second at `offsetMs` into the second. Real schedules are whole seconds (IntervalSlotSource
 * floors its anchor), which makes every entry due at the same instant; spreading them 1 ms apart
 * gives the scheduler 1,000 distinct deadlines per second, i.e. 1,000 timer expiries, not one.
 */
class SpreadSecondSource implements SlotSource {
  constructor(private readonly offsetMs: number) {}

  next(afterMs: number): number | null {
    const k = Math.floor((afterMs - this.offsetMs) / 1000) + 1;
    return k * 1000 + this.offsetMs;
  }
}

export interface SchedulerVariant {
  entries: number;
  seconds: number;
  fires: number;
  expected: number;
  lateness: Summary;
  /** Wall time at the onFire call minus the slot: adds the time spent firing earlier entries of a batch. */
  callback: Summary;
  eventLoopDelayP99Ms: number | null;
  wakeups: number;
}

export interface SchedulerResult {
  p50_ms: number | null;
  p99_ms: number | null;
  spread: SchedulerVariant;
  aligned: SchedulerVariant;
  /** A bare setTimeout loop re-armed for every whole millisecond (wall), same duration as `aligned`. */
  baseline_settimeout: { ticks: number; lateness: Summary };
}

/** Starts on a whole second at least one second away (JIT warm-up, first re-anchor). */
function measurementWindow(seconds: number): [number, number] {
  const w0 = Math.ceil(Date.now() / 1000) * 1000 + 1000;
  return [w0, w0 + seconds * 1000];
}

async function runVariant(name: string, entries: number, seconds: number, sourceFor: (i: number) => SlotSource): Promise<{ v: SchedulerVariant; lateness: number[] }> {
  const fires: Array<{ slotMs: number; latenessMs: number; callbackMs: number; wake: number }> = [];
  const scheduler: Scheduler = new Scheduler({
    mono: systemMonotonicClock,
    wall: systemWallClock,
    timers: createSystemTimers(),
    onFire: (fire: Fire) => {
      fires.push({ slotMs: fire.slotMs, latenessMs: fire.latenessMs, callbackMs: Date.now() - fire.slotMs, wake: scheduler.lastWakeMonoMs() });
    },
  });
  for (let i = 0; i < entries; i++) scheduler.set(`e${i}`, sourceFor(i));
  const [w0, w1] = measurementWindow(seconds);
  const eld = monitorEventLoopDelay({ resolution: 1 });
  scheduler.start();
  await sleepUntil(w0);
  eld.enable();
  await sleepUntil(w1 + 500);
  eld.disable();
  scheduler.stop();
  const inWindow = fires.filter((f) => f.slotMs >= w0 && f.slotMs < w1);
  const lateness = inWindow.map((f) => f.latenessMs);
  const v: SchedulerVariant = {
    entries,
    seconds,
    fires: inWindow.length,
    expected: entries * seconds,
    lateness: summarize(lateness),
    callback: summarize(inWindow.map((f) => f.callbackMs)),
    eventLoopDelayP99Ms: round2(eld.count > 0 ? eld.percentile(99) / 1e6 : null),
    wakeups: new Set(inWindow.map((f) => f.wake)).size,
  };
  say(`  ${name}: ${v.fires}/${v.expected} fires in ${v.wakeups} wake-ups; lateness p50 ${v.lateness.p50_ms} p99 ${v.lateness.p99_ms} max ${v.lateness.max_ms} ms; onFire p99 ${v.callback.p99_ms} ms`);
  return { v, lateness };
}

/** The least any timer loop can do: setTimeout(1 ms) over and over, lateness against its own deadline. */
async function runBaseline(seconds: number): Promise<{ ticks: number; lateness: Summary }> {
  const [w0, w1] = measurementWindow(seconds);
  await sleepUntil(w0);
  const lateness: number[] = [];
  await new Promise<void>((resolve) => {
    const arm = (): void => {
      const due = performance.now() + 1;
      setTimeout(() => {
        lateness.push(Math.max(0, performance.now() - due));
        if (Date.now() < w1) arm();
        else resolve();
      }, 1);
    };
    arm();
  });
  const out = { ticks: lateness.length, lateness: summarize(lateness) };
  say(`  bare setTimeout(1 ms) loop: ${out.ticks} ticks (${seconds * 1000} wanted); lateness p50 ${out.lateness.p50_ms} p99 ${out.lateness.p99_ms} max ${out.lateness.max_ms} ms`);
  return out;
}

export async function runScheduler(opts: { entries: number; seconds: number; alignedSeconds: number }): Promise<{ result: SchedulerResult; samples: number[] }> {
  say(`scheduler alone: ${opts.entries} entries, one slot per second each, spread 1 ms apart, ${opts.seconds} s`);
  const spread = await runVariant('spread', opts.entries, opts.seconds, (i) => new SpreadSecondSource(i % 1000));
  say(`scheduler alone: ${opts.entries} entries all due on the same whole second (the shape of real schedules), ${opts.alignedSeconds} s`);
  const anchor = Math.floor(Date.now() / 1000) * 1000;
  const aligned = await runVariant('aligned', opts.entries, opts.alignedSeconds, () => new IntervalSlotSource(anchor, 1));
  say(`scheduler alone: machine floor, ${opts.alignedSeconds} s`);
  const baseline = await runBaseline(opts.alignedSeconds);
  return {
    result: { p50_ms: spread.v.lateness.p50_ms, p99_ms: spread.v.lateness.p99_ms, spread: spread.v, aligned: aligned.v, baseline_settimeout: baseline },
    samples: spread.lateness,
  };
}
