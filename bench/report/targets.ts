// The targets, judged against the figures of one run. A figure that is missing (its
// scenario failed) is "n/a", never "met".
export interface Target {
  scenario: string;
  figure: string;
  value: number | null;
  unit: string;
  target: string;
  met: boolean | null;
}

export interface Figures {
  steady: { duplicates: number | null; missed: number | null };
  /**
   * Issue 36, from interleaved rounds (operator and floor client in turn, ≥ 4 each): the medians of the
   * per-round ratios of steady's p50 / p99 over the floor batches' (same shape, the API server alone),
   * and of the operator's share p99 over the floor client's share p99 (audit log).
   */
  rounds: { p50Ratio: number | null; p99Ratio: number | null; shareP99Ratio: number | null };
  /** Light p50 / p99 over the floor's sequential create → watch p50 / p99. */
  light: { p50Ratio: number | null; p99Ratio: number | null };
  efficiency: { requestsPerJob: number | null; cpuPer1000: number | null; floorCpuPer1000: number | null };
  ratioLast: number | null;
  scale: { rss: number | null; ready: number | null; idleCpu: number | null };
  schedulerP99: number | null;
  /** The flood scenario's operator-share p99 over quiet's, medians of per-round ratios (issue 34). */
  flood: { junk: number | null; connections: number | null; decoy: number | null };
  /**
   * Issue 36, from the API server's audit log: steady's operator share p99 (create received − slot),
   * burst's last create received − slot and its token-bucket floor.
   */
  split: { steadyOperatorP99: number | null; burstLastReceived: number | null; burstTokenFloor: number | null };
  /** Not judged (null) when the start-up writes were not over before the kill. */
  failover: { nonCanaryWrites: number | null; schedules: number | null };
}

function judge(value: number | null, ok: (v: number) => boolean): boolean | null {
  return value === null || !Number.isFinite(value) ? null : ok(value);
}

export function judgeTargets(f: Figures): Target[] {
  const floorCpu = f.efficiency.floorCpuPer1000;
  const twiceFloorCpu = floorCpu === null ? null : 2 * floorCpu;
  return [
    { scenario: 'rounds', figure: 'steady p50 / floor batches p50, median of the rounds', value: f.rounds.p50Ratio, unit: '×', target: '≤ 1.05×', met: judge(f.rounds.p50Ratio, (v) => v <= 1.05) },
    { scenario: 'rounds', figure: 'steady p99 / floor batches p99, median of the rounds', value: f.rounds.p99Ratio, unit: '×', target: '≤ 1.10×', met: judge(f.rounds.p99Ratio, (v) => v <= 1.1) },
    {
      scenario: 'rounds',
      figure: "steady operator share p99 / the floor client's, median of the rounds",
      value: f.rounds.shareP99Ratio,
      unit: '×',
      target: '≤ 2×',
      met: judge(f.rounds.shareP99Ratio, (v) => v <= 2),
    },
    { scenario: 'steady', figure: 'duplicates', value: f.steady.duplicates, unit: '', target: '0', met: judge(f.steady.duplicates, (v) => v === 0) },
    { scenario: 'steady', figure: 'missed', value: f.steady.missed, unit: '', target: '0', met: judge(f.steady.missed, (v) => v === 0) },
    { scenario: 'light', figure: 'p50 / floor sequential p50', value: f.light.p50Ratio, unit: '×', target: '≤ 1.5×', met: judge(f.light.p50Ratio, (v) => v <= 1.5) },
    { scenario: 'light', figure: 'p99 / floor sequential p99', value: f.light.p99Ratio, unit: '×', target: '≤ 2×', met: judge(f.light.p99Ratio, (v) => v <= 2) },
    { scenario: 'efficiency', figure: 'requests per Job', value: f.efficiency.requestsPerJob, unit: '', target: '≤ 2.3', met: judge(f.efficiency.requestsPerJob, (v) => v <= 2.3) },
    {
      scenario: 'efficiency',
      figure: 'CPU per 1000 Jobs',
      value: f.efficiency.cpuPer1000,
      unit: 's',
      target: twiceFloorCpu === null ? '≤ 2 × floor' : `≤ 2 × floor = ${twiceFloorCpu.toFixed(3)} s`,
      met: twiceFloorCpu === null ? null : judge(f.efficiency.cpuPer1000, (v) => v <= twiceFloorCpu),
    },
    { scenario: 'burst', figure: 'CronJob last / ours last', value: f.ratioLast, unit: '×', target: '≥ 10×', met: judge(f.ratioLast, (v) => v >= 10) },
    { scenario: 'scale', figure: 'RSS (peak)', value: f.scale.rss, unit: 'MiB', target: '≤ 160 MiB', met: judge(f.scale.rss, (v) => v <= 160) },
    { scenario: 'scale', figure: 'start → ready', value: f.scale.ready, unit: 's', target: '≤ 15 s', met: judge(f.scale.ready, (v) => v <= 15) },
    { scenario: 'scale', figure: 'idle CPU', value: f.scale.idleCpu, unit: '%', target: '≤ 1 %', met: judge(f.scale.idleCpu, (v) => v <= 1) },
    { scenario: 'scheduler', figure: 'lateness p99', value: f.schedulerP99, unit: 'ms', target: '≤ 2 ms', met: judge(f.schedulerP99, (v) => v <= 2) },
    failoverTarget(f.failover),
    ...splitTargets(f.split),
    ...floodTargets(f.flood),
  ];
}

/**
 * Issue 34: a flood may move the operator's share by 10 % at most, judged only where the control
 * (the same junk on a decoy) moved it by 5 % at most; above that the machine's noise is larger than
 * what is judged, and the verdict is "n/a".
 */
function floodTargets(f: Figures['flood']): Target[] {
  const quietMachine = f.decoy === null ? null : f.decoy <= 1.05;
  const flooded = (kind: 'junk' | 'connections'): Target => ({
    scenario: 'flood',
    figure: `operator share p99, ${kind} / quiet`,
    value: f[kind],
    unit: '×',
    target: '≤ 1.10× where the decoy ≤ 1.05×',
    met: quietMachine ? judge(f[kind], (v) => v <= 1.1) : null,
  });
  return [
    { scenario: 'flood', figure: 'operator share p99, decoy / quiet (control)', value: f.decoy, unit: '×', target: '≤ 1.05×', met: quietMachine },
    flooded('junk'),
    flooded('connections'),
  ];
}

function failoverTarget(f: Figures['failover']): Target {
  const limit = f.schedules === null ? null : f.schedules / 100;
  return {
    scenario: 'failover',
    figure: "new leader's writes about schedules not due",
    value: f.nonCanaryWrites,
    unit: '',
    target: limit === null ? '< 1 % of the schedules' : `< 1 % of the schedules = ${limit}`,
    met: limit === null ? null : judge(f.nonCanaryWrites, (v) => v < limit),
  };
}

/** Issue 36: the operator's own share of a Job's latency, cut at the API server's door. */
function splitTargets(s: Figures['split']): Target[] {
  // Not judged when the bucket never waits (N ≤ its burst, the quick run's 100): concurrency is the limit then.
  const burstLimit = s.burstTokenFloor === null || s.burstTokenFloor <= 0 ? null : 1.1 * s.burstTokenFloor;
  return [
    { scenario: 'steady', figure: 'operator share p99 (create received − slot)', value: s.steadyOperatorP99, unit: 'ms', target: '≤ 10 ms', met: judge(s.steadyOperatorP99, (v) => v <= 10) },
    {
      scenario: 'burst',
      figure: 'last create received − slot',
      value: s.burstLastReceived,
      unit: 'ms',
      target: burstLimit === null ? '≤ token-bucket floor + 10 % (n/a: the bucket never waits)' : `≤ token-bucket floor + 10 % = ${burstLimit.toFixed(0)} ms`,
      met: burstLimit === null ? null : judge(s.burstLastReceived, (v) => v <= burstLimit),
    },
  ];
}
