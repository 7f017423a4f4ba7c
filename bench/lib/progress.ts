// Progress lines on stdout, stamped with the time since the bench started: a full run
// takes many minutes and the reader should always know which phase it is in.
const t0 = performance.now();

export function say(message: string): void {
  const s = ((performance.now() - t0) / 1000).toFixed(1).padStart(6);
  process.stdout.write(`[bench ${s}s] ${message}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Sleeps until the wall clock reaches `wallMs` (epoch ms). */
export function sleepUntil(wallMs: number): Promise<void> {
  return sleep(wallMs - Date.now());
}

/** Polls `probe` every `intervalMs` until it returns true; false on timeout. */
export async function waitUntil(probe: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await probe()) return true;
    } catch {
      // A probe failing (e.g. a port not open yet) is the same as "not yet".
    }
    if (Date.now() > deadline) return false;
    await sleep(intervalMs);
  }
}
