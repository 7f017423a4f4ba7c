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
  floorP50: number | null;
  steady: { p50: number | null; p99: number | null; duplicates: number | null; missed: number | null };
  ratioLast: number | null;
  scale: { rss: number | null; ready: number | null; idleCpu: number | null };
  schedulerP99: number | null;
}

function judge(value: number | null, ok: (v: number) => boolean): boolean | null {
  return value === null || !Number.isFinite(value) ? null : ok(value);
}

export function judgeTargets(f: Figures): Target[] {
  const twiceFloor = f.floorP50 === null ? null : 2 * f.floorP50;
  return [
    { scenario: 'steady', figure: 'p50', value: f.steady.p50, unit: 'ms', target: '≤ 10 ms', met: judge(f.steady.p50, (v) => v <= 10) },
    { scenario: 'steady', figure: 'p99', value: f.steady.p99, unit: 'ms', target: '≤ 50 ms', met: judge(f.steady.p99, (v) => v <= 50) },
    { scenario: 'steady', figure: 'duplicates', value: f.steady.duplicates, unit: '', target: '0', met: judge(f.steady.duplicates, (v) => v === 0) },
    { scenario: 'steady', figure: 'missed', value: f.steady.missed, unit: '', target: '0', met: judge(f.steady.missed, (v) => v === 0) },
    {
      scenario: 'steady',
      figure: 'p50 vs floor p50',
      value: f.steady.p50,
      unit: 'ms',
      target: twiceFloor === null ? '≤ 2 × floor p50' : `≤ 2 × floor p50 = ${twiceFloor.toFixed(2)} ms`,
      met: twiceFloor === null ? null : judge(f.steady.p50, (v) => v <= twiceFloor),
    },
    { scenario: 'burst', figure: 'CronJob last / ours last', value: f.ratioLast, unit: '×', target: '≥ 10×', met: judge(f.ratioLast, (v) => v >= 10) },
    { scenario: 'scale', figure: 'RSS (peak)', value: f.scale.rss, unit: 'MiB', target: '≤ 200 MiB', met: judge(f.scale.rss, (v) => v <= 200) },
    { scenario: 'scale', figure: 'start → ready', value: f.scale.ready, unit: 's', target: '≤ 15 s', met: judge(f.scale.ready, (v) => v <= 15) },
    { scenario: 'scale', figure: 'idle CPU', value: f.scale.idleCpu, unit: '%', target: '≤ 2 %', met: judge(f.scale.idleCpu, (v) => v <= 2) },
    { scenario: 'scheduler', figure: 'lateness p99', value: f.schedulerP99, unit: 'ms', target: '≤ 2 ms', met: judge(f.schedulerP99, (v) => v <= 2) },
  ];
}
