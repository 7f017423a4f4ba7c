import type { SlotSource } from './types.js';

/**
 * The union of several schedules' instants (`spec.schedules`): the next slot is the earliest next
 * slot of any member, so an instant listed by two members is one slot (fires once). Members are
 * compiled alike (same time zone, same `H` identity), each with its own DST rule.
 */
export class UnionSlotSource implements SlotSource {
  private readonly members: readonly SlotSource[];

  constructor(members: readonly SlotSource[]) {
    if (members.length === 0) throw new Error('UnionSlotSource needs at least one member');
    this.members = [...members];
  }

  next(afterMs: number): number | null {
    let earliest: number | null = null;
    for (const member of this.members) {
      const slot = member.next(afterMs);
      if (slot !== null && (earliest === null || slot < earliest)) earliest = slot;
    }
    return earliest;
  }
}
