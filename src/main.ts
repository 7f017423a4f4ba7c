#!/usr/bin/env node
// Composition root: config → clients → caches → scheduler → elector → controller → HTTP.
// Nothing else in the program reads the environment, the clocks or Math.random directly.
import { hostname } from 'node:os';

import { buildInfo, versionLine } from './build-info.js';
import { type Timers, type WallClock, createSystemTimers, systemMonotonicClock, systemWallClock } from './clock/index.js';
import { ConfigError, type Config, helpText, parseConfig } from './config.js';
import { type SecondCronJob, type Job, LABEL_OWNER, collectionPath, jobsPath } from './api/resources.js';
import type { Cache } from './controller/cache.js';
import { Controller, type Leadership } from './controller/controller.js';
import { EventRecorder } from './controller/events.js';
import { FencedRest } from './controller/fenced-rest.js';
import { JobCreator } from './controller/job-creator.js';
import { slimJob, slimSecondCronJob } from './controller/slim.js';
import { WritePriority } from './controller/write-priority.js';
import { LeaderElector, makeIdentity } from './election/index.js';
import { KubeLeaseStore } from './election/kube-lease-store.js';
import { type ServingCertificate, certificateFromDir } from './http/cert-watcher.js';
import { MetricsAuthorizer } from './http/metrics-auth.js';
import { type MetricsOptions, serveHealth, serveMetrics } from './http/servers.js';
import type { TlsPolicy } from './http/tls-policy.js';
import { inClusterNamespace, loadConnection } from './kube/connection.js';
import { Reflector } from './kube/reflector.js';
import { KubeRest } from './kube/rest.js';
import { userAgent } from './kube/user-agent.js';
import { TokenBucket } from './kube/token-bucket.js';
import { type Logger, createLogger } from './log.js';
import { Manager } from './manager.js';
import { installShutdownSignals } from './signals.js';
import { MetricsExposition } from './metrics/exposition.js';
import { Metrics } from './metrics/metrics.js';
import { ScheduleGauges } from './metrics/schedule-gauges.js';

const SCHEDULER_MAX_SLEEP_MS = 5_000;
// A safety net only: every change that matters is event-driven or retried on its own timer. With
// 10,000 schedules a full pass costs ~0.3 s of CPU, so once a minute was most of the idle CPU.
const RESYNC_MS = 5 * 60_000;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText() + '\n');
    return;
  }
  const build = buildInfo();
  if (argv.includes('--version')) {
    process.stdout.write(versionLine('secondcron', build) + '\n');
    return;
  }
  let cfg: Config;
  try {
    cfg = parseConfig(argv, process.env, inClusterNamespace);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`secondcron: ${err.message}\n`);
    process.exit(2);
  }

  const log = createLogger({ level: cfg.logLevel });
  const signals = installShutdownSignals(log);
  const mono = systemMonotonicClock;
  const wall = systemWallClock;
  const timers = createSystemTimers();
  const random = Math.random;
  const metrics = new Metrics(true, cfg.perScheduleMetrics);
  const scheduleGauges = cfg.perScheduleMetrics ? new ScheduleGauges() : undefined;
  metrics.buildInfo.set({ version: build.version, commit: build.commit }, 1);

  const connection = await loadConnection(cfg.kubeconfig, { warn: (message, err) => log.warn(message, { err }) });
  const identity = cfg.identity ?? makeIdentity(process.env.POD_NAME ?? hostname(), random);
  const rest = new KubeRest(connection, {
    observer: { onResponse: (verb, code, purpose) => metrics.apiRequests.inc({ verb, code, purpose }) },
    userAgent: userAgent(build.version, identity),
  });
  log.info('starting', { version: build.version, commit: build.commit, identity, namespaces: cfg.namespaces.length ? cfg.namespaces : 'all', server: connection.server, credentials: connection.source });

  const manager = new Manager({ log, stopTimeoutMs: cfg.shutdownTimeoutMs });
  const elector = cfg.leaderElect
    ? new LeaderElector({
        identity,
        store: new KubeLeaseStore({ rest, namespace: cfg.leaderElectionNamespace, name: cfg.leaseName, log, mono, timers, random }),
        monotonic: mono,
        wall,
        timers,
        random,
        leaseDurationMs: cfg.leaseDurationMs,
        renewDeadlineMs: cfg.renewDeadlineMs,
        retryPeriodMs: cfg.retryPeriodMs,
        hooks: {
          ...manager.leaderHooks,
          onNewLeader: (leader) => log.info('leader observed', { leader: leader || '(none)' }),
          onError: (err, operation) => log.warn('lease operation failed', { operation, err }),
        },
      })
    : undefined;
  const leadership: Leadership = elector ?? { isLeader: () => true, fenceRemainingMs: () => Number.POSITIVE_INFINITY };

  const namespaces: (string | undefined)[] = cfg.namespaces.length ? cfg.namespaces : [undefined];
  const reflectorBase = { rest, log, mono, timers, random };
  const scjReflectors = namespaces.map(
    (ns) =>
      new Reflector<SecondCronJob>({
        ...reflectorBase,
        name: `secondcronjobs${ns ? '/' + ns : ''}`,
        path: collectionPath(ns),
        onFailure: () => metrics.watchRestarts.inc({ resource: 'secondcronjobs' }),
        transform: slimSecondCronJob,
      }),
  );
  const jobReflectors = namespaces.map(
    (ns) =>
      new Reflector<Job>({
        ...reflectorBase,
        name: `jobs${ns ? '/' + ns : ''}`,
        path: jobsPath(ns),
        labelSelector: LABEL_OWNER,
        onFailure: () => metrics.watchRestarts.inc({ resource: 'jobs' }),
        transform: slimJob,
      }),
  );

  const priority = new WritePriority(timers, mono);
  const creator = new JobCreator({
    rest,
    maxConcurrent: cfg.maxConcurrentCreates,
    bucket: new TokenBucket(cfg.qps, cfg.burst, mono),
    wall,
    timers,
    random,
    metrics,
    fenceRemainingMs: () => leadership.fenceRemainingMs(),
    priority,
  });
  const controller = new Controller({
    rest,
    scjs: mergedCache(scjReflectors),
    creator,
    events: new EventRecorder({
      rest: new FencedRest(rest, () => leadership.fenceRemainingMs()),
      wall,
      timers,
      log: log.child({ component: 'events' }),
      instance: identity,
      priority,
      onDropped: () => metrics.eventsDropped.inc(),
    }),
    metrics,
    leadership,
    priority,
    wall,
    mono,
    timers,
    random,
    log,
    schedulerMaxSleepMs: SCHEDULER_MAX_SLEEP_MS,
  });
  for (const r of scjReflectors) r.addEventHandler(controller.scjEvents);
  if (scheduleGauges) {
    for (const r of scjReflectors) {
      r.addEventHandler({ added: (o) => scheduleGauges.set(o), updated: (_old, o) => scheduleGauges.set(o), deleted: (o) => scheduleGauges.delete(o) });
    }
  }
  namespaces.forEach((ns, i) => jobReflectors[i]?.addEventHandler(controller.jobEvents(ns)));
  metrics.scheduleCounts = () => controller.counts();
  metrics.controllerSizes = () => controller.mapSizes();

  let schedulerStarted = false; // before the first sync there is no loop to judge
  const schedulerStall = (): string | undefined => {
    if (!schedulerStarted) return undefined;
    const idle = mono.nowMs() - controller.scheduler.lastWakeMonoMs();
    return idle > 6 * SCHEDULER_MAX_SLEEP_MS ? `scheduler loop has not woken for ${Math.round(idle / 1000)} s` : undefined;
  };
  const metricsServer = await serveMetrics(cfg.metricsPort, new MetricsExposition(metrics.registry, scheduleGauges), {
    limits: cfg.metricsLimits,
    ...(cfg.metricsSecure ? { secure: await metricsSecurity(cfg.metricsCertDir, cfg.metricsCertDnsNames, { minVersion: cfg.metricsTlsMinVersion, cipherSuites: cfg.metricsTlsCipherSuites }, new MetricsAuthorizer({ rest, mono, log, onDecision: (result) => metrics.metricsAuth.inc({ result }) }), timers, wall, log) } : {}),
  });
  const healthServer = await serveHealth(cfg.healthPort, {
    healthz: [
      { name: 'scheduler', run: schedulerStall },
      { name: 'leader-lease', run: () => (elector && !elector.healthy() ? 'leader has not renewed its Lease within the lease duration' : undefined) },
    ],
    readyz: [
      { name: 'caches', run: () => (manager.cachesSynced ? undefined : 'caches not synced yet') },
      { name: 'scheduler', run: schedulerStall },
    ],
  }, cfg.healthLimits);
  log.info('serving', { metricsPort: metricsServer.port, healthPort: healthServer.port });

  // Jobs first: when SecondCronJobs arrive, their Jobs are already known (catch-up needs them).
  manager.addCacheStage(jobReflectors);
  manager.addCacheStage(scjReflectors);
  // Stopped in reverse (DESIGN §3 "Handover"): the scheduler first, then resync, then the reconciles
  // (nothing new is decided or submitted), then the creator (creates not yet sent are dropped, the ones
  // on the wire answered; a retryable answer ends its create), then the statuses that wait are written.
  // Only then is the Lease released, so no write of ours can land after another replica took over; if
  // that does not finish within the shutdown timeout the Lease is left to expire instead.
  manager.add({ name: 'statuses', start: () => {}, stop: () => controller.writeStatuses() });
  manager.add({ name: 'job creator', start: () => {}, stop: () => creator.drain() });
  manager.add({ name: 'controller', start: () => {}, stop: () => controller.shutDown() });
  let resync: NodeJS.Timeout | undefined;
  manager.add({ name: 'resync', start: () => (resync = setInterval(() => controller.resync(), RESYNC_MS)), stop: () => clearInterval(resync) });
  manager.add({
    name: 'scheduler',
    start: () => {
      controller.scheduler.start();
      schedulerStarted = true;
    },
    stop: () => controller.scheduler.stop(),
  });
  manager.addLeaderOnly({
    name: 'leader metrics',
    start: () => {
      log.info('started leading', { identity });
      metrics.leader.set(1);
      metrics.leaderTransitions.inc({ direction: 'started' });
    },
    stop: () => {
      log.warn('stopped leading', { identity });
      metrics.leader.set(0);
      metrics.leaderTransitions.inc({ direction: 'stopped' });
    },
  });
  manager.addLeaderOnly({ name: 'controller (leader)', start: () => controller.startedLeading(), stop: () => controller.stoppedLeading() });

  await manager.syncCaches();
  // Until now a signal exits at once (nothing held); from here on it stops everything in order.
  signals.onShutdown(async (signal) => {
    log.info('shutting down', { signal });
    await manager.stop();
    if (elector) log.info('lease released', { identity });
    await Promise.all([metricsServer.close(), healthServer.close()]);
    log.info('stopped');
  });
  manager.startRunnables(elector);
}

/**
 * The serving certificate (mounted and followed, or self-signed now like kubebuilder's default and
 * renewed before it expires) and the authorizer.
 */
async function metricsSecurity(certDir: string | undefined, dnsNames: string[], tls: TlsPolicy, authorizer: MetricsAuthorizer, timers: Timers, wall: WallClock, log: Logger): Promise<NonNullable<MetricsOptions['secure']>> {
  let certificate: ServingCertificate;
  if (certDir) {
    certificate = certificateFromDir(certDir, {
      timers,
      onError: (err) => log.warn('metrics serving certificate changed but cannot be used; serving the previous one', { err }),
      onReload: (fingerprint256) => log.info('metrics serving certificate reloaded', { fingerprint256 }),
    });
  } else {
    // Loaded only here: the X.509 library is not needed when a certificate is mounted.
    const { selfRenewingCertificate } = await import('./http/self-renewing.js');
    certificate = await selfRenewingCertificate({
      commonName: 'secondcron-metrics',
      dnsNames: [...new Set([...dnsNames, 'localhost', hostname()])],
      ipAddresses: ['127.0.0.1'],
      validDays: 365,
      wall,
      timers,
      onRenewed: (notAfter) => log.info('self-signed metrics serving certificate renewed', { notAfter: notAfter.toISOString() }),
      onError: (err) => log.warn('self-signed metrics serving certificate could not be renewed; serving the current one, trying again in a minute', { err }),
    });
  }
  log.info('serving /metrics over HTTPS with authorization', { certificate: certDir ? `${certDir}/tls.crt (reloaded on change)` : 'self-signed (renewed at two thirds of its year)' });
  return { certificate, authorize: (req) => authorizer.check(req), tls };
}

function mergedCache<T extends SecondCronJob>(reflectors: Reflector<T>[]): Cache<T> {
  if (reflectors.length === 1) return reflectors[0] as Reflector<T>;
  return {
    get: (key) => {
      for (const r of reflectors) {
        const v = r.get(key);
        if (v) return v;
      }
      return undefined;
    },
    list: function* () {
      for (const r of reflectors) yield* r.list();
    },
  };
}

main().catch((err: unknown) => {
  const log: Logger = createLogger({ level: 'error' });
  log.error('fatal', { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
});

