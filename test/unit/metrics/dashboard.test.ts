// Static checks of grafana/dashboard.json: the conventions a Grafana user relies on (a datasource
// variable, job/namespace filters on every query, $__rate_interval, a unit and a description on
// every panel) and the rows the issue asks for. Whether each query returns data is checked on a real
// Prometheus in test/integration/observability.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { loadYaml } from '@kubernetes/client-node';

import {
  type Dashboard,
  type DashboardPanel,
  allPanels,
  dashboardQueries,
  grafanaPath,
  loadDashboard,
  parseLabelValues,
  variableQuery,
} from '../../integration/helpers/prometheus-queries.js';
import { SCHEDULE_METRIC_NAMES } from '../../../src/metrics/schedule-gauges.js';
import { scanPromQL } from './promql-selectors.js';

const dashboard: Dashboard = loadDashboard();
const panels = allPanels(dashboard);
const dataPanels = panels.filter((p) => p.type !== 'row');
const rows = panels.filter((p) => p.type === 'row');

const DATASOURCE_REF = { type: 'prometheus', uid: '${datasource}' };

function label(p: DashboardPanel): string {
  return `panel "${p.title ?? p.id}"`;
}

describe('grafana/dashboard.json', () => {
  test('is valid JSON of a current schema with a title and a stable uid', () => {
    assert.doesNotThrow(() => JSON.parse(readFileSync(grafanaPath('dashboard.json'), 'utf8')));
    assert.ok(dashboard.schemaVersion >= 39, `schemaVersion ${dashboard.schemaVersion} < 39`);
    assert.ok(dashboard.title);
    assert.ok(dashboard.uid && /^[A-Za-z0-9_-]{1,40}$/.test(dashboard.uid), 'uid is set and valid');
  });

  test('has a Prometheus datasource variable and job/namespace variables from secondcron_leader', () => {
    const vars = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    const ds = vars.get('datasource');
    assert.equal(ds?.type, 'datasource');
    assert.equal(ds?.query, 'prometheus');
    for (const name of ['job', 'namespace']) {
      const v = vars.get(name);
      assert.equal(v?.type, 'query', `$${name} is a query variable`);
      assert.deepEqual(v?.datasource, DATASOURCE_REF, `$${name} queries the selected datasource`);
      assert.ok(v);
      const query = variableQuery(v);
      assert.ok(query, `$${name} has a query`);
      const { selector, label: listed } = parseLabelValues(query);
      assert.equal(listed, name);
      assert.deepEqual(scanPromQL(selector).selectors.map((s) => s.metric), ['secondcron_leader']);
    }
    // Without a namespace label (a plain static scrape) "All" must still match: `.*` matches "".
    assert.equal(vars.get('namespace')?.allValue, '.*');
  });

  test('every panel has a description, a unit and the datasource variable', () => {
    assert.ok(dataPanels.length >= 15, `only ${dataPanels.length} panels`);
    for (const p of dataPanels) {
      assert.ok(p.title, `panel ${p.id} has a title`);
      assert.ok(p.description && p.description.trim().length >= 20, `${label(p)} has a description`);
      assert.ok(p.fieldConfig?.defaults?.unit, `${label(p)} has a unit`);
      assert.deepEqual(p.datasource, DATASOURCE_REF, `${label(p)} uses $datasource`);
      assert.ok((p.targets ?? []).length > 0, `${label(p)} has queries`);
      for (const t of p.targets ?? []) {
        assert.deepEqual(t.datasource, DATASOURCE_REF, `${label(p)} ${t.refId} uses $datasource`);
        assert.ok(t.expr?.trim(), `${label(p)} ${t.refId} has an expression`);
      }
      const refIds = (p.targets ?? []).map((t) => t.refId);
      assert.equal(new Set(refIds).size, refIds.length, `${label(p)} refIds are unique`);
    }
  });

  test('panel ids are unique and panels do not overlap on the 24-column grid', () => {
    const ids = panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length, 'unique ids');
    const cells = new Map<string, string>();
    for (const p of panels) {
      const g = p.gridPos;
      assert.ok(g, `${label(p)} has a gridPos`);
      assert.ok(g.x >= 0 && g.w > 0 && g.x + g.w <= 24, `${label(p)} fits in 24 columns`);
      for (let x = g.x; x < g.x + g.w; x++) {
        for (let y = g.y; y < g.y + g.h; y++) {
          const other = cells.get(`${x},${y}`);
          assert.equal(other, undefined, `${label(p)} overlaps ${other}`);
          cells.set(`${x},${y}`, label(p));
        }
      }
    }
  });

  test('every query filters on $job, and on $namespace (operator) or $schedule_namespace (per-schedule gauges)', () => {
    for (const q of dashboardQueries(dashboard).filter((q) => q.source !== 'variable')) {
      for (const s of scanPromQL(q.expr).selectors) {
        // First, so that the chart's multiCluster puts the cluster matcher into every selector with one substitution.
        assert.match(s.matchers, /^job=~"\$job"/, `${q.where}: ${s.metric} filters on $job first`);
        // The per-schedule gauges carry the SecondCronJob's namespace, not the operator's.
        const ns = s.metric.startsWith('secondcron_schedule_') ? 'schedule_namespace' : 'namespace';
        assert.match(s.matchers, new RegExp(`(^|,)\\s*namespace=~"\\$${ns}"`), `${q.where}: ${s.metric} filters on $${ns}`);
      }
    }
  });

  test("passes dashboard-linter's rules: read-only, job variable, instance exclusion with a reason", () => {
    assert.equal(dashboard.editable, false, 'editable: false (provisioned; edits belong in the repo)');
    const job = dashboard.templating.list.find((v) => v.name === 'job');
    assert.equal(job?.label, 'Job');
    assert.equal(job?.multi, true);
    assert.equal(job?.allValue, '.+');
    const lint = loadYaml<{ exclusions: Record<string, { reason?: string }> }>(readFileSync(grafanaPath('.lint'), 'utf8'));
    const hasInstanceVariable = dashboard.templating.list.some((v) => v.name === 'instance');
    if (!hasInstanceVariable) {
      for (const rule of ['template-instance-rule', 'target-instance-rule']) {
        assert.ok((lint.exclusions[rule]?.reason ?? '').length > 40, `.lint states why ${rule} does not apply`);
      }
    }
  });

  test('a per-schedule table shows every secondcron_schedule_* gauge, one row per SecondCronJob', () => {
    const table = dataPanels.find((p) => p.type === 'table' && p.title === 'Schedules');
    assert.ok(table, 'table panel "Schedules"');
    const exprs = (table.targets ?? []).map((t) => t.expr ?? '');
    for (const name of SCHEDULE_METRIC_NAMES) assert.ok(exprs.some((e) => e.includes(`${name}{`)), `column from ${name}`);
    for (const t of table.targets ?? []) {
      assert.equal(t.format, 'table', `${t.refId} is a table query`);
      assert.match(t.expr ?? '', /^max by \(namespace, name[,)]/, `${t.refId}: one row per (namespace, name) across replicas`);
    }
  });

  test('every rate, increase and other range window is $__rate_interval', () => {
    let windows = 0;
    for (const q of dashboardQueries(dashboard)) {
      const { ranges } = scanPromQL(q.expr);
      windows += ranges.length;
      for (const r of ranges) assert.equal(r, '$__rate_interval', `${q.where}: window [${r}]`);
      // A rate without any window would not parse, but say so here rather than in Prometheus.
      const calls = q.expr.match(/\b(rate|irate|increase|delta|changes)\s*\(/g) ?? [];
      assert.ok(calls.length <= ranges.length, `${q.where}: ${calls.length} range functions, ${ranges.length} windows`);
    }
    assert.ok(windows >= 20, `only ${windows} range windows found: the scanner is not seeing the queries`);
  });

  test('has the rows the issue asks for, each with panels', () => {
    const titles = rows.map((r) => r.title);
    for (const wanted of [
      'Trigger latency',
      'Timer lateness',
      'Throughput and results',
      'Missed triggers',
      'Leader election',
      'Job create queue',
      'Kubernetes API',
      'Node.js runtime',
      'Schedules',
    ]) {
      assert.ok(titles.includes(wanted), `row "${wanted}" (rows: ${titles.join(', ')})`);
    }
    // A row "owns" the panels below it until the next row.
    const byY = [...panels].sort((a, b) => (a.gridPos?.y ?? 0) - (b.gridPos?.y ?? 0));
    let current = '';
    const counts = new Map<string, number>();
    for (const p of byY) {
      if (p.type === 'row') current = p.title ?? '';
      else counts.set(current, (counts.get(current) ?? 0) + 1);
    }
    for (const r of titles) assert.ok((counts.get(r ?? '') ?? 0) > 0, `row "${r}" has panels`);
  });

  test('trigger latency has p50/p90/p99 from summed buckets and a heatmap of the buckets', () => {
    const exprs = dataPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ p, t, expr: t.expr ?? '' })));
    for (const phi of ['0.5', '0.9', '0.99']) {
      assert.ok(
        exprs.some(({ expr }) =>
          new RegExp(`histogram_quantile\\(${phi.replace('.', '\\.')}, sum by \\(le\\) \\(rate\\(secondcron_trigger_latency_seconds_bucket`).test(expr),
        ),
        `p${Number(phi) * 100} of trigger latency`,
      );
    }
    const heatmaps = exprs.filter(({ p }) => p.type === 'heatmap');
    assert.ok(
      heatmaps.some(({ t, expr }) => t.format === 'heatmap' && /sum by \(le\) \(increase\(secondcron_trigger_latency_seconds_bucket/.test(expr)),
      'a heatmap of the trigger latency buckets',
    );
  });
});
