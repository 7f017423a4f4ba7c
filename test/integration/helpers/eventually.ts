// Polling for integration tests: the cluster converges asynchronously, so tests wait for a state
// (with a generous limit) instead of sleeping a fixed time.
import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Calls `probe` until it returns a value other than undefined and returns that value; throws with
 * `description` (and the probe's last error, if any) after timeoutMs (default 60 s).
 */
export async function eventually<T>(
  description: string,
  probe: () => Promise<T | undefined>,
  opts: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out waiting for ${description}${cause}`);
    }
    await sleep(opts.intervalMs ?? 250);
  }
}
