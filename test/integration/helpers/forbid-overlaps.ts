// Forbid (DESIGN §3, I2 with maxConcurrency 1) judged on the API server's own order of writes: a
// Job stored (its creation's resourceVersion) while another Job of the schedule was stored and not
// yet finished or gone (the revision of the event that first showed it so) ran at once with it. Etcd
// revisions order every write of the cluster, so no client clock or watch lag enters the verdict.
// Pure: the Jobs come from test/cluster/job-watcher.ts (started before the first Job).

export interface RevisionedJob {
  name: string;
  /** Revision of its creation. */
  firstRv: number;
  /** Revision at which it was finished or gone; undefined: still active at the end. */
  endedRv?: number;
}

/** Each Job created while an earlier one was still active, with the ones it overlapped; [] when none. */
export function forbidOverlaps(jobs: readonly RevisionedJob[]): string[] {
  const sorted = [...jobs].sort((a, b) => a.firstRv - b.firstRv);
  const problems: string[] = [];
  for (const [i, b] of sorted.entries()) {
    const active = sorted.slice(0, i).filter((a) => a.endedRv === undefined || a.endedRv > b.firstRv);
    if (active.length) problems.push(`${b.name} created (rv ${b.firstRv}) while ${active.map((a) => `${a.name} (rv ${a.firstRv}–${a.endedRv ?? 'active'})`).join(', ')} was active`);
  }
  return problems;
}
