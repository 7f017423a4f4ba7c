// When a coalesced status write goes out. Every slot falls on a whole second, so the slots' Job creates
// are sent in the first part of each second; and after an API freeze or a takeover every schedule's
// status changes at the same moment. Written "once the coalescing delay has passed", 100 one-second
// schedules patched their status within the same second every ~4.5 s, as the next slots' creates went
// out (issue 37, from the API server's audit log). Instead each schedule has a phase of its own in a
// cycle of STATUS_CYCLE_MS, hashed from its key, between CREATES_FIRST_MS and WRITES_UNTIL_MS of a
// second: the writes of many schedules are spread evenly over the cycle and kept out of the creates'
// way (with room before the next second for a reconcile that runs a little late).
export const STATUS_CYCLE_MS = 4_000;
/** The first part of every second belongs to the slots' creates. */
export const CREATES_FIRST_MS = 300;
export const WRITES_UNTIL_MS = 800;

/** The key's phase in the cycle (ms): in [CREATES_FIRST_MS, WRITES_UNTIL_MS) of one of its seconds. */
export function statusPhaseMs(key: string): number {
  // FNV-1a: stable across replicas and restarts, cheap, well spread over similar names.
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  const seconds = STATUS_CYCLE_MS / 1000;
  return (h % seconds) * 1000 + CREATES_FIRST_MS + (Math.floor(h / seconds) % (WRITES_UNTIL_MS - CREATES_FIRST_MS));
}

/** The first instant at or after earliestWallMs (epoch ms) that is at the key's phase. */
export function nextStatusWriteMs(key: string, earliestWallMs: number): number {
  const at = Math.floor(earliestWallMs / STATUS_CYCLE_MS) * STATUS_CYCLE_MS + statusPhaseMs(key);
  return at >= earliestWallMs ? at : at + STATUS_CYCLE_MS;
}
