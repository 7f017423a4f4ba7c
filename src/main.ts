#!/usr/bin/env node
// Composition root: config → clients → caches → scheduler → elector → controller → HTTP.
// Nothing else in the program reads the environment, the clocks or Math.random directly.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { buildInfo, versionLine } from './build-info.js';
import { createSystemTimers, systemMonotonicClock, systemWallClock } from './clock/index.js';
import { ConfigError, type Config, helpText, parseConfig } from './config.js';
import { type SecondCronJob, type Job, LABEL_OWNER, collectionPath, jobsPath } from './controller/api.js';
import { type Cache, Controller, type Leadership } from './controller/controller.js';
import { EventRecorder } from './controller/events.js';
import { JobCreator } from './controller/job-creator.js';
import { slimJob, slimSecondCronJob } from './controller/slim.js';
import { StatusWriter } from './controller/status-writer.js';
import { WritePriority } from './controller/write-priority.js';
import { LeaderElector, makeIdentity } from './election/index.js';
import { KubeLeaseStore } from './election/kube-lease-store.js';
import { MetricsAuthorizer } from './http/metrics-auth.js';
import { selfSignedCertificate } from './http/self-signed.js';
import { type MetricsOptions, serveHealth, serveMetrics } from './http/servers.js';
import { inClusterNamespace, loadConnection } from './kube/connection.js';
import { Reflector } from './kube/reflector.js';
import { KubeRest } from './kube/rest.js';
import { userAgent } from './kube/user-agent.js';
import { TokenBucket } from './kube/token-bucket.js';
import { type Logger, createLogger } from './log.js';
import { installShutdownSignals } from './signals.js';
import { Metrics } from './metrics/metrics.js';
import { ScheduleGauges } from './metrics/schedule-gauges.js';
import { Scheduler } from './scheduler/index.js';

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
  const metrics = new Metrics();
  const scheduleGauges = cfg.perScheduleMetrics ? new ScheduleGauges() : undefined;
  metrics.buildInfo.set({ version: build.version, commit: build.commit }, 1);

  const connection = await loadConnection(cfg.kubeconfig, { warn: (message, err) => log.warn(message, { err }) });
  const identity = cfg.identity ?? makeIdentity(process.env.POD_NAME ?? hostname(), random);
  const rest = new KubeRest(connection, {
    observer: { onResponse: (verb, code) => metrics.apiRequests.inc({ verb, code }) },
    userAgent: userAgent(build.version, identity),
  });
  log.info('starting', { version: build.version, commit: build.commit, identity, namespaces: cfg.namespaces.length ? cfg.namespaces : 'all', server: connection.server, credentials: connection.source });

  const elector = cfg.leaderElect
    ? new LeaderElector({
        identity,
        store: new KubeLeaseStore({ rest, namespace: cfg.leaderElectionNamespace, name: cfg.leaseName }),
        monotonic: mono,
        wall,
        timers,
        random,
        leaseDurationMs: cfg.leaseDurationMs,
        renewDeadlineMs: cfg.renewDeadlineMs,
        retryPeriodMs: cfg.retryPeriodMs,
        hooks: {
          onStartedLeading: () => {
            log.info('started leading', { identity });
            metrics.leader.set(1);
            metrics.leaderTransitions.inc({ direction: 'started' });
            controller.startedLeading();
          },
          onStoppedLeading: () => {
            log.warn('stopped leading', { identity });
            metrics.leader.set(0);
            metrics.leaderTransitions.inc({ direction: 'stopped' });
          },
          onNewLeader: (leader) => log.info('leader observed', { leader: leader || '(none)' }),
          onError: (err, operation) => log.warn('lease operation failed', { operation, err }),
        },
      })
    : undefined;
  const leadership: Leadership = elector
    ? { isLeader: () => elector.isLeader(), isLeaderFresh: () => elector.isLeaderFresh() }
    : { isLeader: () => true, isLeaderFresh: () => true };

  const scheduler: Scheduler = new Scheduler({
    mono,
    wall,
    timers,
    maxSleepMs: SCHEDULER_MAX_SLEEP_MS,
    onFire: (fire) => controller.onFire(fire),
    onClockStep: (deltaMs) => {
      metrics.clockSteps.inc();
      log.warn('wall clock stepped; slots recomputed', { deltaMs: Math.round(deltaMs) });
    },
    onError: (err: unknown) => log.error('scheduler callback failed', { err: err instanceof Error ? err : String(err) }),
  });
  const priority = new WritePriority(timers);
  const creator = new JobCreator({
    rest,
    maxConcurrent: cfg.maxConcurrentCreates,
    bucket: new TokenBucket(cfg.qps, cfg.burst, mono),
    wall,
    timers,
    random,
    metrics,
    fence: () => leadership.isLeaderFresh(),
    priority,
  });
  const controller: Controller = new Controller({
    rest,
    scheduler,
    creator,
    events: new EventRecorder(rest, wall, log.child({ component: 'events' }), identity, priority, () => metrics.eventsDropped.inc()),
    metrics,
    leadership,
    priority,
    wall,
    mono,
    timers,
    log,
  });
  const statusWriter = new StatusWriter(rest, controller, mono, timers, log.child({ component: 'status' }), priority);

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
        handler: {
          added: (o) => {
            scheduleGauges?.set(o);
            controller.scjChanged(o);
          },
          updated: (_old, o) => {
            scheduleGauges?.set(o);
            controller.scjChanged(o);
          },
          deleted: (o) => {
            scheduleGauges?.delete(o);
            controller.scjDeleted(o);
          },
        },
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
        handler: {
          added: (o) => controller.jobChanged(undefined, o),
          updated: (old, o) => controller.jobChanged(old, o),
          deleted: (o) => controller.jobDeleted(o),
        },
      }),
  );
  controller.attach(mergedCache(scjReflectors), statusWriter);
  metrics.scheduleCounts = () => controller.counts();

  const allReflectors = [...jobReflectors, ...scjReflectors];
  const synced = (): boolean => allReflectors.every((r) => r.hasSynced);
  let schedulerStarted = false; // before the first sync there is no loop to judge
  const schedulerStall = (): string | undefined => {
    if (!schedulerStarted) return undefined;
    const idle = mono.nowMs() - scheduler.lastWakeMonoMs();
    return idle > 6 * SCHEDULER_MAX_SLEEP_MS ? `scheduler loop has not woken for ${Math.round(idle / 1000)} s` : undefined;
  };
  const metricsServer = await serveMetrics(cfg.metricsPort, metrics.registry, {
    ...(scheduleGauges ? { extra: () => scheduleGauges.render() } : {}),
    ...(cfg.metricsSecure ? { secure: metricsSecurity(cfg.metricsCertDir, new MetricsAuthorizer(rest, mono), wall.nowMs(), log) } : {}),
  });
  const healthServer = await serveHealth(cfg.healthPort, {
    healthz: [
      { name: 'scheduler', run: schedulerStall },
      { name: 'leader-lease', run: () => (elector && !elector.healthy() ? 'leader has not renewed its Lease within the lease duration' : undefined) },
    ],
    readyz: [
      { name: 'caches', run: () => (synced() ? undefined : 'caches not synced yet') },
      { name: 'scheduler', run: schedulerStall },
    ],
  });
  log.info('serving', { metricsPort: metricsServer.port, healthPort: healthServer.port });

  // Jobs first: when SecondCronJobs arrive, their Jobs are already known (catch-up needs them).
  for (const r of jobReflectors) r.start();
  await waitFor(() => jobReflectors.every((r) => r.hasSynced));
  for (const r of scjReflectors) r.start();
  await waitFor(synced);
  scheduler.start();
  schedulerStarted = true;
  if (elector) elector.start();
  else {
    metrics.leader.set(1); // the only scheduler: alerts on "no leader" must not fire
    metrics.leaderTransitions.inc({ direction: 'started' });
    controller.startedLeading();
  }
  const resync = setInterval(() => controller.resync(), RESYNC_MS);

  signals.onShutdown(async (signal) => {
    log.info('shutting down', { signal });
    clearInterval(resync);
    scheduler.stop();
    await Promise.race([creator.drain(), sleep(cfg.shutdownTimeoutMs)]);
    if (elector) {
      await elector.release().catch((err: unknown) => log.warn('lease release failed', { err: err instanceof Error ? err : String(err) }));
      log.info('lease released', { identity });
    }
    for (const r of allReflectors) r.stop();
    await Promise.all([metricsServer.close(), healthServer.close()]);
    log.info('stopped');
  });
}

/** The serving certificate (mounted, or self-signed now like kubebuilder's default) and the authorizer. */
function metricsSecurity(certDir: string | undefined, authorizer: MetricsAuthorizer, nowMs: number, log: Logger): NonNullable<MetricsOptions['secure']> {
  const tls = certDir
    ? { cert: readFileSync(join(certDir, 'tls.crt'), 'utf8'), key: readFileSync(join(certDir, 'tls.key'), 'utf8') }
    : selfSignedCertificate({
        commonName: 'secondcron-metrics',
        dnsNames: ['localhost', hostname()],
        ipAddresses: ['127.0.0.1'],
        notBefore: new Date(nowMs - 3_600_000), // an hour of slack for clock skew
        validDays: 365,
      });
  log.info('serving /metrics over HTTPS with authorization', { certificate: certDir ? `${certDir}/tls.crt` : 'self-signed' });
  return { tls, authorize: (authorization) => authorizer.check(authorization) };
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

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await sleep(50);
}

main().catch((err: unknown) => {
  const log: Logger = createLogger({ level: 'error' });
  log.error('fatal', { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
});

