import type { Timers } from '../clock/clock.js';

/**
 * Runs `fn` with an AbortSignal that fires after `timeoutMs` (on the injected timers) or when
 * `outer` aborts, and stops waiting at that moment even if `fn` ignores its signal: a store that
 * hangs must never hold the elector past its renew deadline.
 */
export function callWithTimeout<T>(
  fn: (signal: AbortSignal) => Promise<T>,
  timers: Timers,
  timeoutMs: number,
  outer: AbortSignal,
  makeTimeoutError: () => Error,
): Promise<T> {
  if (outer.aborted) return Promise.reject(asError(outer.reason));
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      timers.clear(handle);
      outer.removeEventListener('abort', onOuterAbort);
      return true;
    };
    const onOuterAbort = (): void => {
      if (!settle()) return;
      controller.abort(outer.reason);
      reject(asError(outer.reason));
    };
    const handle = timers.set(timeoutMs, () => {
      if (!settle()) return;
      const error = makeTimeoutError();
      controller.abort(error);
      reject(error);
    });
    outer.addEventListener('abort', onOuterAbort, { once: true });
    let pending: Promise<T>;
    try {
      pending = fn(controller.signal);
    } catch (error) {
      if (settle()) reject(error);
      return;
    }
    pending.then(
      (value) => {
        if (settle()) resolve(value);
      },
      (error: unknown) => {
        if (settle()) reject(error);
      },
    );
  });
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(`aborted: ${String(reason)}`);
}
