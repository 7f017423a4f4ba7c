// Every Prometheus metric the operator exports, in one registry of its own.
// No per-schedule labels anywhere: cardinality must not grow with the number of SecondCronJobs.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** 1 ms to 60 s, dense below 100 ms where a healthy operator lives. */
export const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

export type CreateResult = 'created' | 'already_exists' | 'error';
export type MissedReason = 'deadline' | 'forbid' | 'late' | 'error';

export class Metrics {
  readonly registry = new Registry();

  readonly triggerLatency = new Histogram({
    name: 'secondcron_trigger_latency_seconds',
    help: 'Time from a slot instant to the API server acknowledging the Job create.',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly timerLateness = new Histogram({
    name: 'secondcron_timer_lateness_seconds',
    help: 'Time from a slot instant to the scheduler timer firing for it (event-loop and timer delay).',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly jobsCreated = new Counter({
    name: 'secondcron_jobs_created_total',
    help: 'Job create attempts by outcome: created, already_exists (another replica or a retry won), error.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly triggersMissed = new Counter({
    name: 'secondcron_triggers_missed_total',
    help: 'Slots that did not produce a Job, each counted once cluster-wide, by reason (deadline, forbid, late, error).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'secondcron_job_create_queue_depth',
    help: 'Job creates waiting for a concurrency slot or a rate-limit token.',
    registers: [this.registry],
  });
  readonly inflight = new Gauge({
    name: 'secondcron_job_create_inflight',
    help: 'Job creates sent to the API server and not yet answered.',
    registers: [this.registry],
  });
  readonly schedules = new Gauge({
    name: 'secondcron_schedules',
    help: 'SecondCronJobs known to this replica, by state: active (compiled, its timer armed), pending (not compiled or armed yet), suspended, invalid, ended (its window is over).',
    labelNames: ['state'] as const,
    registers: [this.registry],
    collect: () => {
      const counts = this.scheduleCounts?.();
      if (counts) for (const [state, n] of Object.entries(counts)) this.schedules.set({ state }, n);
    },
  });
  /** Read at scrape time, so the gauge is never stale and costs nothing between scrapes. */
  scheduleCounts: (() => Record<string, number>) | undefined;
  readonly controllerEntries = new Gauge({
    name: 'secondcron_controller_entries',
    help: 'Entries in what the controller keeps per schedule and per Job, by map (records, jobs, scheduler_entries, creates_outstanding, reconciles_waiting, upkeeps_waiting, expected_jobs, deleting_jobs, written_statuses). With a constant set of schedules each returns to its level; a steady climb is a leak.',
    labelNames: ['map'] as const,
    registers: [this.registry],
    collect: () => {
      const sizes = this.controllerSizes?.();
      if (sizes) for (const [map, n] of Object.entries(sizes)) this.controllerEntries.set({ map }, n);
    },
  });
  /** Read at scrape time, like scheduleCounts. */
  controllerSizes: (() => Record<string, number>) | undefined;
  readonly leader = new Gauge({
    name: 'secondcron_leader',
    help: '1 if this replica currently holds the leader Lease, else 0.',
    registers: [this.registry],
  });
  readonly leaderTransitions = new Counter({
    name: 'secondcron_leader_transitions_total',
    help: 'Times this replica started or stopped leading.',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({
    name: 'secondcron_api_requests_total',
    help: 'Requests to the Kubernetes API by verb, HTTP status code (error = no response) and purpose (job_create, job_delete, dry_run, status, finalizer, event, lease, list, watch, auth).',
    labelNames: ['verb', 'code', 'purpose'] as const,
    registers: [this.registry],
  });
  readonly metricsAuth = new Counter({
    name: 'secondcron_metrics_auth_requests_total',
    help: 'Requests to the secure /metrics endpoint by outcome: allowed, unauthenticated, forbidden, error, throttled (503: too many reviews in flight).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  readonly clockSteps = new Counter({
    name: 'secondcron_clock_steps_total',
    help: 'Wall-clock steps detected against the monotonic clock (NTP step, VM suspend).',
    registers: [this.registry],
  });
  readonly watchRestarts = new Counter({
    name: 'secondcron_watch_restarts_total',
    help: 'Cache list/watch failures that made a reflector back off and retry.',
    labelNames: ['resource'] as const,
    registers: [this.registry],
  });
  readonly buildInfo = new Gauge({
    name: 'secondcron_build_info',
    help: 'Always 1; the labels say which build runs (package version and git commit).',
    labelNames: ['version', 'commit'] as const,
    registers: [this.registry],
  });
  readonly eventsDropped = new Counter({
    name: 'secondcron_events_dropped_total',
    help: 'Kubernetes Events not written: over the per-object allowance (client-go spam filter) or queue full.',
    registers: [this.registry],
  });

  /**
   * Slots without a Job per schedule ({namespace, name}, every reason summed): counted by the replica
   * that decided them, like secondcron_triggers_missed_total, so a test (or an alert) can tell which
   * schedule missed. With --per-schedule-metrics only; the series goes with the resource.
   */
  readonly scheduleMissed: Counter<'namespace' | 'name'> | undefined;

  constructor(defaultMetrics = true, perSchedule = false) {
    this.scheduleMissed = perSchedule
      ? new Counter({
          name: 'secondcron_schedule_missed_slots_total',
          help: 'Slots of this SecondCronJob that did not produce a Job (every reason), counted by the replica that decided them; summed over replicas it is the cluster-wide count.',
          labelNames: ['namespace', 'name'] as const,
          registers: [this.registry],
        })
      : undefined;
    if (defaultMetrics) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    // Export zeroes from the start so rate() and absent() alerts behave before the first event.
    for (const r of ['created', 'already_exists', 'error'] as const) this.jobsCreated.inc({ result: r }, 0);
    for (const r of ['deadline', 'forbid', 'late', 'error'] as const) this.triggersMissed.inc({ reason: r }, 0);
    for (const d of ['started', 'stopped'] as const) this.leaderTransitions.inc({ direction: d }, 0);
    for (const r of ['secondcronjobs', 'jobs'] as const) this.watchRestarts.inc({ resource: r }, 0);
    this.eventsDropped.inc(0);
    this.leader.set(0);
  }
}
