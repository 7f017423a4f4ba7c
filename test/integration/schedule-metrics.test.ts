// The per-schedule gauges on real components: two operator replicas against the test control plane,
// a real Prometheus scraping both (honor_labels, a target namespace label that differs from the
// SecondCronJobs'), and the per-schedule alerts of grafana/alerts.yaml loaded with every `for:` set to
// 0s — the waiting is promtool's to test (grafana/alerts.test.yaml); this test proves the wiring:
// the series match the resources' status, and each alert fires and resolves on real series.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { SCHEDULE_METRIC_NAMES } from '../../src/metrics/schedule-gauges.js';
import { installCrd } from '../cluster/crd.js';
import { type TestNamespace, kubectl, kubectlOk, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startReplicas } from './helpers/operator.js';
import { grafanaPath } from './helpers/prometheus-queries.js';
import { PrometheusServer, type Sample } from './helpers/prometheus-server.js';
import { applyScj, getScj, patchScj } from './helpers/scj.js';

const JOB = 'secondcron';
const REPLICAS = 2;
/** What Kubernetes service discovery would attach: the operator's namespace, not the resources'. */
const OPERATOR_NAMESPACE = 'secondcron-system';
const LEASE = 'secondcron-leader';

interface ScjStatus {
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
  nextScheduleTime?: string;
  queuedScheduleTime?: string;
  active?: unknown[];
  conditions?: { type: string; status: string }[];
}
interface Scj {
  metadata: { name: string; namespace: string; creationTimestamp: string };
  spec: { schedule?: string; intervalSeconds?: number; timeZone?: string; concurrencyPolicy?: string; suspend?: boolean };
  status?: ScjStatus;
}

const seconds = (rfc3339: string | undefined): number | undefined => (rfc3339 ? Date.parse(rfc3339) / 1000 : undefined);
const rfc3339 = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** What each gauge must say about a SecondCronJob, read straight from the object kubectl returns. */
function expectedGauges(o: Scj): Record<string, number | undefined> {
  const s = o.status ?? {};
  return {
    secondcron_schedule_info: 1,
    secondcron_schedule_created_timestamp_seconds: seconds(o.metadata.creationTimestamp),
    secondcron_schedule_last_schedule_timestamp_seconds: seconds(s.lastScheduleTime),
    secondcron_schedule_last_successful_timestamp_seconds: seconds(s.lastSuccessfulTime),
    secondcron_schedule_next_schedule_timestamp_seconds: seconds(s.nextScheduleTime),
    secondcron_schedule_queued_timestamp_seconds: seconds(s.queuedScheduleTime),
    secondcron_schedule_active_jobs: s.active?.length ?? 0,
    secondcron_schedule_ready: s.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? 1 : 0,
    secondcron_schedule_suspended: o.spec.suspend ? 1 : 0,
  };
}

describe('per-schedule gauges and alerts on a real Prometheus', { timeout: 420_000 }, () => {
  let ns: TestNamespace | undefined;
  let operators: OperatorProcess[] = [];
  let prom: PrometheusServer | undefined;
  let rulesDir: string | undefined;

  const server = (): PrometheusServer => {
    assert.ok(prom, 'prometheus started');
    return prom;
  };
  const namespace = (): string => {
    assert.ok(ns, 'namespace created');
    return ns.name;
  };
  const diagnostics = (): string =>
    [...operators.map((o) => `--- ${o.identity} log tail ---\n${o.logs(15)}`), `--- prometheus ---\n${prom?.logTail(10) ?? ''}`].join('\n');

  before(async () => {
    await installCrd(kubectl);
    ns = await uniqueNamespace('schedule-metrics');
    operators = await startReplicas(REPLICAS, ns.name);

    // Every `for:` of the shipped rules set to 0s; nothing else changes.
    rulesDir = mkdtempSync(join(tmpdir(), 'secondcron-rules-'));
    const source = readFileSync(grafanaPath('alerts.yaml'), 'utf8');
    const forLines = source.match(/^\s+for: \S+$/gm) ?? [];
    assert.ok(forLines.length >= 6, `found ${forLines.length} for: lines`);
    writeFileSync(join(rulesDir, 'alerts.yaml'), source.replace(/^(\s+)for: \S+$/gm, '$1for: 0s'));

    prom = await PrometheusServer.start({
      scrapeInterval: '1s',
      ruleFiles: [join(rulesDir, 'alerts.yaml')],
      jobs: [
        {
          name: JOB,
          targets: operators.map((o) => `127.0.0.1:${o.metricsPort}`),
          labels: { namespace: OPERATOR_NAMESPACE },
          honorLabels: true,
        },
      ],
    });
  });

  after(async () => {
    const name = ns?.name;
    if (name) {
      // A Lease left taken over by a failed test would keep the finalizers from being handled.
      await kubectl(['delete', 'lease', LEASE, '-n', name, '--ignore-not-found']);
      await kubectl(['delete', 'secondcronjobs', '--all', '-n', name, '--timeout=60s']);
    }
    await prom?.stop();
    await Promise.all(operators.map((o) => o.dispose()));
    await ns?.cleanup();
    if (rulesDir) rmSync(rulesDir, { recursive: true, force: true });
  });

  /** max over replicas of one gauge, by SecondCronJob name, in this test's namespace. */
  const gauge = async (metric: string): Promise<Map<string, number>> => {
    const samples = await server().vector(`max by (name) (${metric}{job="${JOB}", namespace="${namespace()}"})`);
    return new Map(samples.map((s) => [s.metric.name ?? '', Number(s.value[1])]));
  };

  const firing = async (alert: string): Promise<string[]> => {
    const samples: Sample[] = await server().vector(`ALERTS{alertname="${alert}", alertstate="firing", namespace="${namespace()}"}`);
    return samples.map((s) => s.metric.name ?? '').sort();
  };

  const readyStatus = async (name: string): Promise<string | undefined> =>
    (await getScj<Scj>(namespace(), name)).status?.conditions?.find((c) => c.type === 'Ready')?.status;

  test('every replica exports each schedule; the series equal the resources\' status and spec', async () => {
    const nsName = namespace();
    // Runs and succeeds, then is suspended so that its status stops moving (exact comparison).
    await applyScj(nsName, 'ran', { intervalSeconds: 2 });
    // A cron schedule in a time zone, due on the hour (none of its slots falls in this test).
    await applyScj(nsName, 'hourly', { schedule: '0 0 * * * *', timeZone: 'Asia/Kolkata', concurrencyPolicy: 'Forbid' });
    await applyScj(nsName, 'paused', { intervalSeconds: 5, suspend: true });
    await applyScj(nsName, 'broken', { schedule: '61 * * * * *' }); // second 61: Ready=False, InvalidSchedule
    await eventually('"ran" has a successful Job', async () => ((await getScj<Scj>(nsName, 'ran')).status?.lastSuccessfulTime ? true : undefined), {
      timeoutMs: 90_000,
    });
    await patchScj(nsName, 'ran', { spec: { suspend: true } });
    const names = ['ran', 'hourly', 'paused', 'broken'];
    // Settled: ran suspended with no active Job, hourly scheduled, broken judged — and the same on
    // two reads two seconds apart (late status writes, such as the Ready condition's generation).
    let previous = '';
    const objs = await eventually(
      'statuses settled and stable',
      async () => {
        const read = await Promise.all(names.map((n) => getScj<Scj>(nsName, n)));
        const [ran, hourly, , broken] = read as [Scj, Scj, Scj, Scj];
        const judged =
          !ran.status?.nextScheduleTime &&
          (ran.status?.active?.length ?? 0) === 0 &&
          hourly.status?.nextScheduleTime &&
          broken.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False');
        const snapshot = JSON.stringify(read.map((o) => o.status));
        const stable = judged && snapshot === previous;
        previous = snapshot;
        return stable ? read : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 2_000 },
    );

    const mismatches = await eventually(
      'Prometheus shows every status as the API server does',
      async () => {
        const problems: string[] = [];
        for (const metric of SCHEDULE_METRIC_NAMES) {
          const got = await gauge(metric);
          for (const o of objs) {
            const want = expectedGauges(o)[metric];
            if (got.get(o.metadata.name) !== want) problems.push(`${metric}{name="${o.metadata.name}"}: ${got.get(o.metadata.name)} != ${want}`);
          }
        }
        return problems.length === 0 ? problems : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 1_000 },
    ).catch((err: unknown) => [String(err)]);
    assert.deepEqual(mismatches, [], diagnostics());

    // Each replica exports every schedule (not only the leader); the resource's namespace label
    // survived the target's (honor_labels).
    const perReplica = await server().vector(`count by (instance) (secondcron_schedule_info{job="${JOB}", namespace="${nsName}"})`);
    assert.deepEqual(perReplica.map((s) => Number(s.value[1])), Array(REPLICAS).fill(names.length));
    const [info] = await server().vector(`secondcron_schedule_info{job="${JOB}", namespace="${nsName}", name="hourly"}`);
    assert.deepEqual(
      [info?.metric.schedule, info?.metric.interval_seconds ?? '', info?.metric.time_zone, info?.metric.concurrency_policy],
      ['0 0 * * * *', '', 'Asia/Kolkata', 'Forbid'],
    );
    const nextHourly = (await gauge('secondcron_schedule_next_schedule_timestamp_seconds')).get('hourly') ?? 0;
    assert.equal(new Date(nextHourly * 1000).getUTCMinutes(), 30, 'on the hour in Asia/Kolkata (UTC+05:30)');
  });

  test('SecondCronScheduleNotReady fires for an invalid schedule and resolves when it is fixed', async () => {
    const nsName = namespace();
    await eventually('NotReady firing for broken only', async () => ((await firing('SecondCronScheduleNotReady')).join() === 'broken' ? true : undefined), {
      timeoutMs: 30_000,
    });
    // Hourly: its next slot stays in the future while the next test takes the Lease away.
    await patchScj(nsName, 'broken', { spec: { schedule: '0 0 * * * *' } });
    await eventually('broken Ready again', async () => ((await readyStatus('broken')) === 'True' ? true : undefined), { timeoutMs: 30_000 });
    await eventually('NotReady resolved', async () => ((await firing('SecondCronScheduleNotReady')).length === 0 ? true : undefined), {
      timeoutMs: 30_000,
    });
  });

  test('NextTimeInPast and NoSuccess fire while no replica schedules, and resolve', async () => {
    const nsName = namespace();
    await applyScj(nsName, 'overdue', { intervalSeconds: 3600 });
    await applyScj(nsName, 'unlucky', { intervalSeconds: 3600 });
    for (const n of ['overdue', 'unlucky']) {
      await eventually(`${n} scheduled`, async () => ((await getScj<Scj>(nsName, n)).status?.nextScheduleTime ? true : undefined), { timeoutMs: 30_000 });
    }

    // Take the Lease away from the replicas for an hour: the leader must step down, and nobody
    // writes status any more. What the status then says is what the alerts must judge.
    const now = new Date().toISOString().replace(/\.\d+Z$/, '.000000Z');
    await kubectlOk([
      'patch', 'lease', LEASE, '-n', nsName, '--type', 'merge',
      '-p', JSON.stringify({ spec: { holderIdentity: 'intruder', leaseDurationSeconds: 3600, renewTime: now, acquireTime: now } }),
    ]);
    await eventually(
      'no replica leads',
      async () => {
        const [sum] = await server().vector(`sum(secondcron_leader{job="${JOB}"})`);
        return Number(sum?.value[1]) === 0 ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
    // Give a status write that was already in flight time to land before ours.
    await new Promise((r) => setTimeout(r, 2_000));

    const t = Date.now();
    // Its next slot ten minutes ago: a schedule that nobody moved on.
    await kubectlOk(['patch', 'scj', 'overdue', '-n', nsName, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { nextScheduleTime: rfc3339(t - 600_000) } })]);
    // Last success four hours ago; period one hour, so three periods (3 h) have passed without one.
    await kubectlOk([
      'patch', 'scj', 'unlucky', '-n', nsName, '--subresource=status', '--type=merge',
      '-p', JSON.stringify({ status: { lastScheduleTime: rfc3339(t - 60_000), nextScheduleTime: rfc3339(t + 3_540_000), lastSuccessfulTime: rfc3339(t - 4 * 3_600_000) } }),
    ]);
    await eventually('NextTimeInPast firing for overdue', async () => ((await firing('SecondCronScheduleNextTimeInPast')).join() === 'overdue' ? true : undefined), {
      timeoutMs: 30_000,
    });
    await eventually('NoSuccess firing for unlucky', async () => ((await firing('SecondCronScheduleNoSuccess')).join() === 'unlucky' ? true : undefined), {
      timeoutMs: 30_000,
    });

    // A success resolves NoSuccess.
    await kubectlOk(['patch', 'scj', 'unlucky', '-n', nsName, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { lastSuccessfulTime: rfc3339(Date.now()) } })]);
    await eventually('NoSuccess resolved', async () => ((await firing('SecondCronScheduleNoSuccess')).length === 0 ? true : undefined), { timeoutMs: 30_000 });

    // The Lease back: a replica leads again, rewrites overdue's next slot, and the alert resolves.
    await kubectlOk(['delete', 'lease', LEASE, '-n', nsName]);
    await eventually(
      'overdue has a next slot in the future again',
      async () => {
        const next = seconds((await getScj<Scj>(nsName, 'overdue')).status?.nextScheduleTime) ?? 0;
        return next * 1000 > Date.now() ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
    await eventually('NextTimeInPast resolved', async () => ((await firing('SecondCronScheduleNextTimeInPast')).length === 0 ? true : undefined), {
      timeoutMs: 30_000,
    }).catch((err: unknown) => assert.fail(`${String(err)}\n${diagnostics()}`));
  });

  test('a deleted SecondCronJob leaves no series behind', async () => {
    const nsName = namespace();
    await kubectlOk(['delete', 'scj', 'paused', '-n', nsName, '--timeout=30s']);
    await eventually(
      'no series of "paused"',
      async () => {
        const left = await server().vector(`{__name__=~"secondcron_schedule_.+", job="${JOB}", namespace="${nsName}", name="paused"}`);
        return left.length === 0 ? true : undefined;
      },
      { timeoutMs: 20_000 },
    );
  });
});
