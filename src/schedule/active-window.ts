// spec.notBefore / spec.notAfter: the period in which a schedule's slots exist at all. Slots outside
// are not produced by the source (so no timer is armed for them, nothing is run or counted), and the
// window's state gives the Ready reason (NotYetActive / WindowEnded; Ready stays True).
import type { SlotSource } from './types.js';

/** Both ends inclusive, epoch milliseconds; an absent end is unbounded. */
export interface ActiveWindow {
  readonly notBeforeMs?: number;
  readonly notAfterMs?: number;
}

export type WindowState = 'NotYetActive' | 'Active' | 'WindowEnded';

export type WindowParseResult = { ok: true; window: ActiveWindow | undefined } | { ok: false; message: string };

/** RFC 3339 with a zone (what the CRD's `format: date-time` admits), as Kubernetes writes times. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The window of a spec, undefined when neither end is set. The CRD already checks the format and
 * notAfter > notBefore; this repeats it for resources that predate the schema or come from a file.
 */
export function parseActiveWindow(notBefore: unknown, notAfter: unknown): WindowParseResult {
  const start = parseEnd('notBefore', notBefore);
  if (!start.ok) return start;
  const end = parseEnd('notAfter', notAfter);
  if (!end.ok) return end;
  if (start.ms !== undefined && end.ms !== undefined && !(end.ms > start.ms)) {
    return { ok: false, message: `notAfter (${String(notAfter)}) must be later than notBefore (${String(notBefore)})` };
  }
  if (start.ms === undefined && end.ms === undefined) return { ok: true, window: undefined };
  return { ok: true, window: { ...(start.ms !== undefined ? { notBeforeMs: start.ms } : {}), ...(end.ms !== undefined ? { notAfterMs: end.ms } : {}) } };
}

function parseEnd(field: string, value: unknown): { ok: true; ms: number | undefined } | { ok: false; message: string } {
  if (value === undefined || value === null) return { ok: true, ms: undefined };
  const ms = typeof value === 'string' && RFC3339.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) return { ok: false, message: `${field} must be an RFC 3339 time such as "2027-01-01T00:00:00Z", got ${JSON.stringify(value)}` };
  return { ok: true, ms };
}

/** Where nowMs lies: before notBefore, inside the window (ends included), or after notAfter. */
export function windowState(window: ActiveWindow | undefined, nowMs: number): WindowState {
  if (window?.notBeforeMs !== undefined && nowMs < window.notBeforeMs) return 'NotYetActive';
  if (window?.notAfterMs !== undefined && nowMs > window.notAfterMs) return 'WindowEnded';
  return 'Active';
}

/**
 * The first instant after nowMs at which windowState changes (notBefore, or just after notAfter), or
 * null when it never changes again: when to look at the Ready reason next.
 */
export function nextWindowChangeMs(window: ActiveWindow | undefined, nowMs: number): number | null {
  if (window === undefined) return null;
  if (window.notBeforeMs !== undefined && nowMs < window.notBeforeMs) return window.notBeforeMs;
  if (window.notAfterMs !== undefined && nowMs <= window.notAfterMs) return window.notAfterMs + 1;
  return null;
}

/** The slots of `inner` that lie inside the window; none outside it, so none is ever due there. */
export class WindowedSlotSource implements SlotSource {
  constructor(
    private readonly inner: SlotSource,
    private readonly window: ActiveWindow,
  ) {}

  next(afterMs: number): number | null {
    if (!Number.isFinite(afterMs)) return null;
    const { notBeforeMs, notAfterMs } = this.window;
    if (notAfterMs !== undefined && afterMs >= notAfterMs) return null;
    // next(x) is the first whole second after x: from notBefore - 1 ms it is the first one >= notBefore.
    const from = notBeforeMs !== undefined && afterMs < notBeforeMs ? notBeforeMs - 1 : afterMs;
    const slot = this.inner.next(from);
    if (slot === null || (notAfterMs !== undefined && slot > notAfterMs)) return null;
    return slot;
  }
}

