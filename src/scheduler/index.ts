export { Scheduler, DEFAULT_MAX_CATCH_UP_SLOTS, DEFAULT_MAX_SLEEP_MS, DEFAULT_STEP_THRESHOLD_MS } from './scheduler.js';
export type { Fire, SchedulerOptions } from './scheduler.js';
export type { SlotSource } from './slot-source.js';
export { IndexedMinHeap } from './indexed-min-heap.js';
export { catchUp } from './catch-up.js';
export type { CatchUp } from './catch-up.js';
