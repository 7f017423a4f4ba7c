// Pure slot math: which instants a SecondCronJob fires at. No Kubernetes, no clock, no I/O.
export type { SlotSource, ScheduleSpec, CompileResult } from './types.js';
export { compileSchedule, MAX_SCHEDULES, RESOLVED_SEPARATOR } from './compile.js';
export { compileResourceSchedule, type ScheduledResource } from './resource-schedule.js';
export { latestSlotAtOrBefore } from './latest-slot.js';
export { hashIdentity } from './hashed-fields.js';
export { type ActiveWindow, type WindowState, windowState, nextWindowChangeMs } from './active-window.js';
export { UnionSlotSource } from './union-slot-source.js';
