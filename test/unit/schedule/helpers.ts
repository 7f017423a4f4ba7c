import assert from 'node:assert/strict';
import { compileSchedule, type ScheduleSpec, type SlotSource } from '../../../src/schedule/index.js';

export const ms = (iso: string): number => {
  const t = Date.parse(iso);
  assert.ok(Number.isFinite(t), `bad ISO time in test: ${iso}`);
  return t;
};

export const iso = (t: number | null): string | null => (t === null ? null : new Date(t).toISOString());

/** Compiles a spec that the test expects to be valid. */
export function source(spec: ScheduleSpec, nowIso = '2026-01-01T00:00:00Z', anchorIso = '2026-01-01T00:00:00Z', identity = 'default/test'): SlotSource {
  const result = compileSchedule(spec, ms(anchorIso), ms(nowIso), identity);
  if (!result.ok) assert.fail(`expected ${JSON.stringify(spec)} to compile, got ${result.message}`);
  return result.source;
}

/** All slots in (fromMs, untilMs], by walking next(). */
export function slotsBetween(src: SlotSource, fromMs: number, untilMs: number, limit = 1_000_000): number[] {
  const slots: number[] = [];
  let t: number | null = fromMs;
  for (;;) {
    t = src.next(t);
    if (t === null || t > untilMs) return slots;
    slots.push(t);
    assert.ok(slots.length <= limit, 'too many slots');
  }
}

/** The first n slots after fromIso, as ISO strings. */
export function firstSlots(src: SlotSource, fromIso: string, n: number): Array<string | null> {
  const out: Array<string | null> = [];
  let t: number | null = ms(fromIso);
  for (let i = 0; i < n && t !== null; i++) {
    t = src.next(t);
    out.push(iso(t));
  }
  return out;
}

/** Seeded PRNG (mulberry32), so "random" tests are repeatable. */
export { mulberry32 as seededRandom } from '../../support/prng.js';

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}
