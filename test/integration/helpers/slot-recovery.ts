// Recovery after an API stall, slot by slot, from the API server's audit log (audit-creates.ts): for
// every whole-second slot, how many schedules got their Job stored (a 201 create of
// `<schedule>-<slot seconds>`) and how many of those were answered within the slot's own second.
// Pure (test/unit/harness/slot-recovery.test.ts).
import { type AuditedJobWrite, ownerOfJobName, slotOfJobName } from './audit-creates.js';

export interface SlotOnTime {
  slotMs: number;
  /** Schedules whose Job of this slot was stored. */
  withJob: number;
  /** ... and answered (stageTimestamp of ResponseComplete) before the slot's second ended. */
  onTime: number;
  /** ... and received (requestReceivedTimestamp) before the slot's second ended: the operator's part done in time. */
  receivedInTime: number;
  /** The latest of those creates' receipts after the slot (ms; 0 without a Job): the operator's share. */
  latestReceivedMs: number;
  /** The longest of those creates' answers (answered − received, ms; 0 without a Job): the server's share. */
  slowestAnswerMs: number;
}

/** Per slot in [fromMs, toMs) (whole seconds), over the Jobs of `owners`. */
export function slotsOnTime(writes: readonly AuditedJobWrite[], owners: readonly string[], fromMs: number, toMs: number): SlotOnTime[] {
  const wanted = new Set(owners);
  const stored = new Map<number, { withJob: Set<string>; onTime: Set<string>; receivedInTime: Set<string>; latestReceivedMs: number; slowestAnswerMs: number }>();
  for (const w of writes) {
    if (w.verb !== 'create' || w.code !== 201) continue;
    const owner = ownerOfJobName(w.name);
    const slotMs = slotOfJobName(w.name);
    if (owner === undefined || !wanted.has(owner) || !(slotMs >= fromMs && slotMs < toMs)) continue;
    const s = stored.get(slotMs) ?? { withJob: new Set<string>(), onTime: new Set<string>(), receivedInTime: new Set<string>(), latestReceivedMs: 0, slowestAnswerMs: 0 };
    stored.set(slotMs, s);
    s.withJob.add(owner);
    if (w.answeredMs < slotMs + 1000) s.onTime.add(owner);
    if (w.receivedMs < slotMs + 1000) s.receivedInTime.add(owner);
    s.latestReceivedMs = Math.max(s.latestReceivedMs, w.receivedMs - slotMs);
    s.slowestAnswerMs = Math.max(s.slowestAnswerMs, w.answeredMs - w.receivedMs);
  }
  const out: SlotOnTime[] = [];
  for (let slotMs = Math.ceil(fromMs / 1000) * 1000; slotMs < toMs; slotMs += 1000) {
    const s = stored.get(slotMs);
    out.push({
      slotMs,
      withJob: s?.withJob.size ?? 0,
      onTime: s?.onTime.size ?? 0,
      receivedInTime: s?.receivedInTime.size ?? 0,
      latestReceivedMs: Math.round(s?.latestReceivedMs ?? 0),
      slowestAnswerMs: Math.round(s?.slowestAnswerMs ?? 0),
    });
  }
  return out;
}

/**
 * The first slot from which every slot to the end has at least `need` schedules on time (sustained
 * recovery, not the first good second); undefined when the last slot is below it.
 */
export function sustainedFrom(slots: readonly SlotOnTime[], need: number): number | undefined {
  let from: number | undefined;
  for (const s of slots) {
    if (s.onTime < need) from = undefined;
    else from ??= s.slotMs;
  }
  return from;
}

/** Whose share a slot lost: creates received late are the operator's, answers slow the server's. */
export function describeShares(s: SlotOnTime): string {
  return `${s.onTime} on time, ${s.receivedInTime} received in time, ${s.withJob} stored, last received +${s.latestReceivedMs} ms, slowest answer ${s.slowestAnswerMs} ms`;
}

/** The slots below `need`, worst first. */
export function slotsBelow(slots: readonly SlotOnTime[], need: number): SlotOnTime[] {
  return slots.filter((s) => s.onTime < need).sort((a, b) => a.onTime - b.onTime || a.slotMs - b.slotMs);
}
