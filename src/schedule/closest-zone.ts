// "Did you mean …?" for an unknown timeZone: the known IANA name closest to what the user wrote.

/** Case-insensitive edit distance; a space or hyphen for an underscore is free ("New York"). */
function distance(a: string, b: string): number {
  const x = normalize(a);
  const y = normalize(b);
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const substitution = (previous[j - 1] as number) + (x[i - 1] === y[j - 1] ? 0 : 1);
      current.push(Math.min(substitution, (previous[j] as number) + 1, (current[j - 1] as number) + 1));
    }
    previous = current;
  }
  return previous[y.length] as number;
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/[ -]/g, '_');
}

/** The last path element: "Tokyo" should find "Asia/Tokyo". */
function city(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/**
 * The closest of the zones this runtime knows, or undefined when nothing is close (a third of the
 * name or more would have to change: "Mars/Olympus" gets no suggestion).
 */
export function closestZoneName(requested: string, known: readonly string[] = Intl.supportedValuesOf('timeZone')): string | undefined {
  let best: { name: string; score: number } | undefined;
  for (const name of known) {
    const whole = distance(requested, name);
    const score = requested.includes('/') ? whole : Math.min(whole, distance(requested, city(name)));
    if (!best || score < best.score) best = { name, score };
  }
  if (!best) return undefined;
  return best.score <= Math.max(1, Math.floor(requested.length / 3)) ? best.name : undefined;
}
