// Instants as people read them: RFC 3339 wall time in a zone, with its offset, computed from the same
// zone offsets the slot math uses (so a printed time and a fired slot cannot disagree across DST).
import { SECOND_MS } from './calendar.js';
import { isKnownTimeZone, zoneOffsetsFor } from './zone-offsets.js';

/** "2026-03-29T03:00:00+02:00"; "…Z" in UTC. Whole seconds, as slots are. */
export function formatInZone(instantMs: number, zoneName = 'UTC'): string {
  const zone = zoneOffsetsFor(isKnownTimeZone(zoneName) ? zoneName : 'UTC');
  const offsetMs = zone.offsetMs(instantMs);
  const wall = new Date(Math.floor(instantMs / SECOND_MS) * SECOND_MS + offsetMs).toISOString().slice(0, 19);
  if (offsetMs === 0 && zone.fixedOffsetMs === 0) return `${wall}Z`;
  const sign = offsetMs < 0 ? '-' : '+';
  const minutes = Math.abs(offsetMs) / 60_000;
  return `${wall}${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
}

/** "1h2m3s", "45s", "0s": a duration the way kubectl prints ages. */
export function formatDuration(ms: number): string {
  let s = Math.max(0, Math.round(ms / SECOND_MS));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}
