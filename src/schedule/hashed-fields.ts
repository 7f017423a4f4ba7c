/**
 * `H` in a cron field (Jenkins' "hash"): a value derived from the schedule's identity instead of one
 * the user picks, so that thousands of schedules written alike (`H * * * * *`) spread over the field
 * instead of all firing at second 0. The value is a pure function of the identity, so every replica,
 * every restart and `kubectl secondcron` compute the same one.
 *
 * The function (documented in docs/schedules.md, so a user can predict it):
 *   digest = SHA-256 of the UTF-8 identity `<namespace>/<name>`;
 *   word(i) = bytes 4i..4i+3 of digest as a big-endian unsigned 32-bit integer, i = the field's index
 *             (0 second, 1 minute, 2 hour, 3 day of month, 4 month, 5 day of week);
 *   `H`          → lo + word(i) mod (hi - lo + 1), with [lo, hi] the field's H range (HASH_RANGES);
 *   `H(a-b)`     → the same with [lo, hi] = [a, b];
 *   `H/n`        → lo + word(i) mod n, then every n up to hi, written `first-hi/n`;
 *   `H(a-b)/n`   → the same inside [a, b].
 * Every H of one field uses the same word, so `H(0-29),H(30-59)` is two values 30 apart.
 *
 * The result is a plain cron expression (the resolved schedule): it is what the operator runs, shows in
 * status.resolvedSchedule, and what DST and time zones apply to; an expression without H is unchanged.
 */
import { createHash } from 'node:crypto';

import { type FieldSpec, FIELD_SPECS } from './cron-expression.js';

/**
 * The values a bare `H` or `H/n` picks from, per field. Day of month stops at 28 so that the day
 * exists in every month; day of week is 0-6 (7 would only be Sunday again).
 */
export const HASH_RANGES: readonly (readonly [number, number])[] = [
  [0, 59],
  [0, 59],
  [0, 23],
  [1, 28],
  [1, 12],
  [0, 6],
];

export type ResolveResult = { ok: true; expression: string } | { ok: false; message: string };

const HASH_ITEM = /^H(?:\((\d+)-(\d+)\))?(?:\/(\d+))?$/;

/** The identity H hashes: namespace and name, so a re-created resource keeps its values. */
export function hashIdentity(namespace: string | undefined, name: string): string {
  return `${namespace ?? ''}/${name}`;
}

/**
 * Replaces every `H` item of a 5- or 6-field expression. Input that is no such expression (a macro,
 * a wrong field count) is returned unchanged for the cron parser to judge.
 */
export function resolveHashes(expression: string, identity: string): ResolveResult {
  const trimmed = expression.trim();
  if (!trimmed.includes('H') || trimmed.startsWith('@') || /^(CRON_TZ|TZ)=/.test(trimmed)) return { ok: true, expression };
  const parts = trimmed.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) return { ok: true, expression };
  const offset = 6 - parts.length; // a 5-field expression starts at the minute
  let words: readonly number[] | undefined;
  const resolved: string[] = [];
  for (let p = 0; p < parts.length; p++) {
    const text = parts[p] as string;
    const field = p + offset;
    if (!text.split(',').some((item) => item.startsWith('H'))) {
      resolved.push(text);
      continue;
    }
    words ??= hashWords(identity);
    const items: string[] = [];
    for (const item of text.split(',')) {
      if (!item.startsWith('H')) {
        items.push(item);
        continue;
      }
      const value = resolveItem(item, field, words[field] as number);
      if (typeof value !== 'string') {
        const name = (FIELD_SPECS[field] as FieldSpec).name;
        return { ok: false, message: `schedule ${JSON.stringify(expression)}: ${name} field ${JSON.stringify(text)}: ${value.error}` };
      }
      items.push(value);
    }
    resolved.push(items.join(','));
  }
  return { ok: true, expression: resolved.join(' ') };
}

function resolveItem(item: string, field: number, word: number): string | { error: string } {
  const match = HASH_ITEM.exec(item);
  if (!match) return { error: `${JSON.stringify(item)} is not one of H, H/n, H(a-b), H(a-b)/n` };
  const [, from, to, stepText] = match;
  const bounds = FIELD_SPECS[field] as FieldSpec;
  let [lo, hi] = HASH_RANGES[field] as readonly [number, number];
  if (from !== undefined && to !== undefined) {
    lo = Number(from);
    hi = Number(to);
    if (lo < bounds.min || hi > bounds.max) return { error: `range ${lo}-${hi} is out of range ${bounds.min}-${bounds.max}` };
    if (lo > hi) return { error: `range ${lo}-${hi} is reversed (start is after end)` };
  }
  const size = hi - lo + 1;
  if (stepText === undefined) return String(lo + (word % size));
  const step = Number(stepText);
  if (step < 1) return { error: 'step must be at least 1' };
  // A larger step would leave some identities without any value, so validity would depend on the name.
  if (step > size) return { error: `step ${step} is larger than the ${size} values of ${lo}-${hi}` };
  return `${lo + (word % step)}-${hi}/${step}`;
}

/** word(0..5) of the documented function. */
function hashWords(identity: string): readonly number[] {
  const digest = createHash('sha256').update(identity, 'utf8').digest();
  return HASH_RANGES.map((_, i) => digest.readUInt32BE(4 * i));
}
