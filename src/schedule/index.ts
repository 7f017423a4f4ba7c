// Pure slot math: which instants a SecondCronJob fires at. No Kubernetes, no clock, no I/O.
export type { SlotSource, ScheduleSpec, CompileResult } from './types.js';
export { compileSchedule } from './compile.js';
export { latestSlotAtOrBefore } from './latest-slot.js';
export { hashIdentity } from './hashed-fields.js';
