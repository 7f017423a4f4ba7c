// bench-capacity's judgement (issue 36), pure: which of a client's creates the API server received
// too late. Each create was released on a whole second; received LATE_MS or more after that second
// (or never stored: no 201 in the audit log), the operator would by then have decided the schedule's
// next slot and run only that one (DESIGN §3): a skipped slot.
import { type Summary, summarize } from './stats.js';

export const LATE_MS = 1_000;

export interface LateCreates {
  creates: number;
  /** With a 201 in the audit log. */
  stored: number;
  /** Received LATE_MS or more after their second, or not stored. */
  late: number;
  /** Whole seconds with at least one late create. */
  late_seconds: number;
  /** Second → received, of the stored creates. */
  share: Summary;
}

/**
 * `released`: [Job name, when the client released it (epoch ms)], in release order; `received`: when
 * the API server received each stored create, by Job name (epoch ms, from its audit log).
 */
export function lateCreates(released: ReadonlyArray<readonly [string, number]>, received: ReadonlyMap<string, number>): LateCreates {
  const shares: number[] = [];
  const lateSeconds = new Set<number>();
  let late = 0;
  for (const [name, releasedMs] of released) {
    const second = Math.floor(releasedMs / 1000) * 1000;
    const at = received.get(name);
    if (at !== undefined) shares.push(at - second);
    if (at === undefined || at - second >= LATE_MS) {
      late++;
      lateSeconds.add(second);
    }
  }
  return { creates: released.length, stored: shares.length, late, late_seconds: lateSeconds.size, share: summarize(shares) };
}
