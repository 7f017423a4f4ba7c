/**
 * `<podName>_<8 hex chars>`: the pod name tells humans who leads; the random suffix keeps a
 * restarted container (same pod name) from being mistaken for its predecessor, whose lease
 * it must not silently inherit with stale in-memory state.
 */
export function makeIdentity(podName: string, random: () => number): string {
  if (podName.trim() === '') throw new Error('makeIdentity: podName must not be empty');
  // random() is in [0, 1); clamp anyway so a misbehaving source cannot yield 9 hex digits.
  const r = Math.min(Math.max(random(), 0), 1 - Number.EPSILON);
  const suffix = Math.floor(r * 0x1_0000_0000).toString(16).padStart(8, '0');
  return `${podName}_${suffix}`;
}
