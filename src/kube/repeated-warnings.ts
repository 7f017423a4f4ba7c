// A credential problem that lasts (an unreadable token file retried every second, a certificate
// pair that never matches) is told once when it starts, and then reminded of at most every few
// minutes with how often it happened since, not logged on every retry forever.

/** How often a problem that keeps happening is mentioned again. */
export const REMINDER_MS = 5 * 60_000;

export class RepeatedWarnings {
  private readonly seen = new Map<string, { lastToldMs: number; since: number }>();

  constructor(
    private readonly tell: (message: string, err: Error) => void,
    private readonly now: () => number = Date.now,
  ) {}

  warn(message: string, err: Error): void {
    const key = `${message}\n${err.message}`;
    const entry = this.seen.get(key);
    const now = this.now();
    if (!entry) {
      if (this.seen.size >= 100) this.seen.clear(); // errors that embed changing detail
      this.seen.set(key, { lastToldMs: now, since: 0 });
      this.tell(message, err);
      return;
    }
    entry.since++;
    if (now - entry.lastToldMs < REMINDER_MS) return;
    this.tell(`${message} (still failing: ${entry.since} more times in the last ${Math.round((now - entry.lastToldMs) / 60_000)} min)`, err);
    entry.lastToldMs = now;
    entry.since = 0;
  }
}
