/**
 * What the scheduler needs from slot math. Structurally identical to `SlotSource` in src/schedule
 * (owned there); declared here so the timer core compiles on its own. TypeScript's structural typing
 * makes the two interchangeable.
 */
export interface SlotSource {
  /** First slot strictly after `afterMs`, UTC epoch ms (whole seconds); null = no further slot. */
  next(afterMs: number): number | null;
}
