// Every figure of judgeTargets missing: each test sets the ones it judges.
import type { Figures } from '../../../bench/report/targets.js';

export const base: Figures = {
  steady: { duplicates: null, missed: null },
  rounds: { p50Ratio: null, p99Ratio: null, shareP99Ratio: null },
  light: { p50Ratio: null, p99Ratio: null },
  efficiency: { requestsPerJob: null, cpuPer1000: null, floorCpuPer1000: null },
  ratioLast: null,
  scale: { rss: null, ready: null, idleCpu: null },
  schedulerP99: null,
  split: { steadyOperatorP99: null, burstLastReceived: null, burstTokenFloor: null },
  failover: { nonCanaryWrites: null, schedules: null },
  flood: { junk: null, connections: null, decoy: null },
};
