// The observability contract on real components: three operator replicas against the test control
// plane, a real Prometheus scraping them every second with grafana/alerts.yaml loaded, and then every
// dashboard query and every alert expression evaluated through Prometheus' HTTP API. Also
// promtool's own checks of the rules, and the health endpoints of all three replicas.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { RUN_SECONDS_ANNOTATION } from '../cluster/cluster.js';
import { exportedFamilies } from '../unit/metrics/registry-names.js';
import { type TestNamespace, kubectl, kubectlOk, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startOperator } from './helpers/operator.js';
import {
  type VariableValues,
  dashboardQueries,
  grafanaPath,
  loadDashboard,
  loadRules,
  parseLabelValues,
  ruleQueries,
  substituteVariables,
  variableQuery,
} from './helpers/prometheus-queries.js';
import { PrometheusServer, type Sample, promtool } from './helpers/prometheus-server.js';
import { applyScj, podTemplate } from './helpers/scj.js';
import { installCrd } from '../cluster/crd.js';

const JOB = 'secondcron';
const REPLICAS = 3;
const SCRAPE_INTERVAL = '1s';
/** Scrapes to collect before evaluating: enough for every 15 s window to hold many samples. */
const MIN_SCRAPES = 20;
/** What Grafana would use for $__rate_interval at a 1 s scrape interval over a short range. */
const RATE_INTERVAL = '15s';

describe('observability on a real Prometheus', { timeout: 300_000 }, () => {
  let ns: TestNamespace | undefined;
  const operators: OperatorProcess[] = [];
  let prom: PrometheusServer | undefined;
  let vars: VariableValues;
  // The operator's default, which the chart's RBAC names (resourceNames); the namespace is the test's own.
  const leaseName = 'secondcron-leader';

  before(async () => {
    await installCrd(kubectl);
    ns = await uniqueNamespace('obs');
    const namespace = ns.name;
    vars = { rateInterval: RATE_INTERVAL, job: JOB, namespace, scheduleNamespace: namespace };

    const started = await Promise.allSettled(
      Array.from({ length: REPLICAS }, (_, i) =>
        startOperator({
          namespaces: [namespace],
          identity: `obs-${i}`,
          args: [
            '--lease-duration', '4s',
            '--renew-deadline', '3s',
            '--retry-period', '500ms',
            '--leader-election-namespace', namespace,
          ],
        }),
      ),
    );
    for (const s of started) if (s.status === 'fulfilled') operators.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;

    // Every second (Allow), a cron schedule, and a Forbid schedule whose 3 s pods make it skip slots.
    await applyScj(namespace, 'every-second', { intervalSeconds: 1 });
    await applyScj(namespace, 'cron-every-2s', { schedule: '*/2 * * * * *' });
    await applyScj(namespace, 'forbid-slow', {
      intervalSeconds: 1,
      concurrencyPolicy: 'Forbid',
      jobTemplate: podTemplate({ [RUN_SECONDS_ANNOTATION]: '3' }),
    });

    prom = await PrometheusServer.start({
      scrapeInterval: SCRAPE_INTERVAL,
      ruleFiles: [grafanaPath('alerts.yaml')],
      // The namespace label stands in for the one Kubernetes service discovery would attach; the
      // per-schedule gauges bring their own (the SecondCronJob's), kept as the chart's ServiceMonitor does.
      jobs: [{ name: JOB, targets: operators.map((o) => `127.0.0.1:${o.metricsPort}`), labels: { namespace }, honorLabels: true }],
    });
    const running = prom;
    await eventually(
      `${MIN_SCRAPES} scrapes of each replica`,
      async () => {
        const counts = await running.vector(`count_over_time(up{job="${JOB}"}[2m])`);
        return counts.length === REPLICAS && counts.every((s) => Number(s.value[1]) >= MIN_SCRAPES) ? true : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 1_000 },
    );
  });

  after(async () => {
    await prom?.stop();
    await Promise.all(operators.map((o) => o.dispose()));
    await ns?.cleanup();
  });

  /** Operator logs and Prometheus' log, for failure messages. */
  const diagnostics = (): string =>
    [...operators.map((o) => `--- ${o.identity} log tail ---\n${o.logs(15)}`), `--- prometheus log tail ---\n${prom?.logTail(10) ?? ''}`].join('\n');

  /** Leader transitions so far: more than one "started" means a handover happened during the run. */
  const leaderHistory = async (): Promise<string> => {
    const samples = await server().vector(`secondcron_leader_transitions_total{job="${JOB}"} > 0`);
    return 'leader transitions: ' + samples.map((s) => `${s.metric.instance} ${s.metric.direction}=${s.value[1]}`).join(', ');
  };

  const server = (): PrometheusServer => {
    assert.ok(prom, 'prometheus started');
    return prom;
  };

  test('promtool check rules accepts grafana/alerts.yaml', async () => {
    const res = await promtool(['check', 'rules', grafanaPath('alerts.yaml')]);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    const alertCount = loadRules().groups.flatMap((g) => g.rules).length;
    assert.match(res.stdout + res.stderr, new RegExp(`SUCCESS: ${alertCount} rules found`));
  });

  test('promtool test rules passes grafana/alerts.test.yaml', async () => {
    const res = await promtool(['test', 'rules', grafanaPath('alerts.test.yaml')]);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout + res.stderr, /SUCCESS/);
    assert.doesNotMatch(res.stdout + res.stderr, /FAILED/);
  });

  test('all replicas are scraped, Ready (followers too) and healthy', async () => {
    const targets = await server().targets();
    assert.equal(targets.length, REPLICAS);
    for (const t of targets) assert.equal(t.health, 'up', `${t.labels.instance}: ${t.lastError}`);
    for (const o of operators) {
      for (const path of ['/readyz', '/healthz']) {
        const res = await fetch(`http://127.0.0.1:${o.healthPort}${path}?verbose`);
        assert.equal(res.status, 200, `${o.identity} ${path}: ${await res.text()}`);
      }
    }
  });

  test('/metrics of every replica serves every metric of the registry', async () => {
    const families = (await exportedFamilies()).map((f) => f.name);
    for (const o of operators) {
      const text = await o.metrics();
      const typed = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
      const missing = families.filter((f) => !typed.has(f));
      assert.deepEqual(missing, [], `${o.identity} /metrics lacks families`);
      for (const sample of ['secondcron_leader ', 'secondcron_jobs_created_total{result="created"}', 'secondcron_trigger_latency_seconds_bucket{le="+Inf"}', 'nodejs_eventloop_lag_p99_seconds ']) {
        assert.ok(text.includes(`\n${sample}`), `${o.identity} /metrics has a sample ${sample}`);
      }
    }
  });

  test('exactly one leader, and it is the Lease holder', async () => {
    const leaders = await server().vector(`secondcron_leader{job="${JOB}"} == 1`);
    assert.equal(leaders.length, 1, `leaders: ${JSON.stringify(leaders.map((s) => s.metric.instance))}; ${await leaderHistory()}\n${diagnostics()}`);
    const [sum] = await server().vector(`sum(secondcron_leader{job="${JOB}"})`);
    assert.equal(Number(sum?.value[1]), 1);
    const holder = (await kubectlOk(['get', 'lease', leaseName, '-n', vars.namespace, '-o', 'jsonpath={.spec.holderIdentity}'])).trim();
    const leaderInstance = (leaders[0] as Sample).metric.instance;
    const leader = operators.find((o) => `127.0.0.1:${o.metricsPort}` === leaderInstance);
    assert.equal(holder, leader?.identity, 'the replica reporting secondcron_leader=1 holds the Lease');
  });

  test('the operator did its job: Jobs created, latency observed', async () => {
    const [created] = await server().vector(`sum(secondcron_jobs_created_total{job="${JOB}", result="created"})`);
    assert.ok(Number(created?.value[1]) >= 10, `created ${created?.value[1]}\n${diagnostics()}`);
    const [p99] = await server().vector(
      `histogram_quantile(0.99, sum by (le) (rate(secondcron_trigger_latency_seconds_bucket{job="${JOB}"}[${RATE_INTERVAL}])))`,
    );
    const value = Number(p99?.value[1]);
    assert.ok(Number.isFinite(value) && value > 0, `p99 trigger latency ${p99?.value[1]}`);
  });

  test('every dashboard panel query parses and returns data', async () => {
    const queries = dashboardQueries(loadDashboard()).filter((q) => q.source === 'panel');
    assert.ok(queries.length >= 20, `${queries.length} panel queries`);
    const problems: string[] = [];
    for (const q of queries) {
      const expr = substituteVariables(q.expr, vars);
      const answer = await server().query(expr);
      if (!answer.ok) problems.push(`${q.where}: ${answer.errorType}: ${answer.error}\n    ${expr}`);
      else if (answer.resultType !== 'vector' || (answer.result as Sample[]).length === 0) {
        problems.push(`${q.where}: no data (${answer.resultType})\n    ${expr}`);
      }
    }
    assert.deepEqual(problems, [], `${problems.join('\n')}\n${diagnostics()}`);
  });

  test('the job and namespace variables list this installation', async () => {
    const dashboard = loadDashboard();
    const expected: Record<string, string> = { job: JOB, namespace: vars.namespace, schedule_namespace: vars.namespace };
    for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) {
      const query = variableQuery(v);
      assert.ok(query, `$${v.name} has a query`);
      const { selector, label } = parseLabelValues(query);
      const samples = await server().vector(substituteVariables(selector, vars));
      const values = new Set(samples.map((s) => s.metric[label]));
      assert.deepEqual([...values], [expected[v.name]], `$${v.name} values`);
    }
  });

  test('the dashboard annotations parse', async () => {
    for (const q of dashboardQueries(loadDashboard()).filter((x) => x.source === 'annotation')) {
      const answer = await server().query(substituteVariables(q.expr, vars));
      assert.ok(answer.ok, `${q.where}: ${answer.ok ? '' : answer.error}`);
    }
  });

  test('every alert expression parses; no-leader, multiple-leaders and replica-down do not fire', async () => {
    const mustBeQuiet = new Set(['alert SecondCronNoLeader', 'alert SecondCronMultipleLeaders', 'alert SecondCronReplicaDown']);
    const queries = ruleQueries(loadRules());
    assert.equal(queries.length, 9);
    for (const q of queries) {
      const answer = await server().query(q.expr);
      assert.ok(answer.ok, `${q.where}: ${answer.ok ? '' : `${answer.errorType}: ${answer.error}`}`);
      assert.equal(answer.resultType, 'vector', q.where);
      if (mustBeQuiet.has(q.where)) {
        if ((answer.result as Sample[]).length > 0) {
          assert.fail(`${q.where} would fire: ${JSON.stringify(answer.result)}; ${await leaderHistory()}\n${diagnostics()}`);
        }
      }
    }
  });

  test('Prometheus loaded and evaluated the rules; leader alerts are inactive', async () => {
    const rules = await eventually(
      'every rule evaluated',
      async () => {
        const list = await server().rules();
        return list.length > 0 && list.every((r) => r.health === 'ok') ? list : undefined;
      },
      { timeoutMs: 15_000 },
    );
    assert.deepEqual(
      rules.map((r) => r.name).sort(),
      loadRules().groups.flatMap((g) => g.rules).map((r) => r.alert).sort(),
    );
    for (const r of rules) assert.equal(r.lastError ?? '', '', `${r.name}: ${r.lastError}`);
    for (const name of ['SecondCronNoLeader', 'SecondCronMultipleLeaders', 'SecondCronReplicaDown']) {
      // Not even pending: pending would mean the condition held at some evaluation in this run.
      const state = rules.find((r) => r.name === name)?.state;
      assert.equal(state, 'inactive', `${name} is ${state}; ${await leaderHistory()}`);
    }
  });
});
