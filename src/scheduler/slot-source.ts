/** What the scheduler needs from slot math (owned by src/schedule). */
export type { SlotSource } from '../schedule/types.js';
