// Static checks of grafana/alerts.yaml and of the promtool tests next to it. The rules' behaviour
// is tested by `promtool test rules grafana/alerts.test.yaml` (run by the integration test, which
// also loads the rules into a live Prometheus).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { loadYaml } from '@kubernetes/client-node';

import { grafanaPath, loadRules, repoRoot, ruleQueries } from '../../integration/helpers/prometheus-queries.js';
import { scanPromQL } from './promql-selectors.js';

const EXPECTED_ALERTS = [
  'SecondCronNoLeader',
  'SecondCronMultipleLeaders',
  'SecondCronTriggerLatencyHigh',
  'SecondCronCreateErrors',
  'SecondCronMissedTriggers',
  'SecondCronReplicaDown',
  'SecondCronScheduleNotReady',
  'SecondCronScheduleNoSuccess',
  'SecondCronScheduleNextTimeInPast',
];
const RUNBOOKS_URL = 'https://github.com/secondcron/secondcron/blob/main/docs/runbooks.md';
/** The documented convention: one exact matcher, so one substitution retargets the file. */
const JOB_MATCHER = 'job="secondcron"';

interface PromtoolTests {
  rule_files: string[];
  tests: {
    name?: string;
    alert_rule_test?: { alertname: string; eval_time: string; exp_alerts?: unknown[] }[];
  }[];
}

const rules = loadRules();
const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);

describe('grafana/alerts.yaml', () => {
  test('defines exactly the expected alerts, each once', () => {
    assert.deepEqual([...alerts.map((a) => a.alert)].sort(), [...EXPECTED_ALERTS].sort());
  });

  test('every alert has a severity, a summary, a description and a runbook_url, nothing else', () => {
    for (const a of alerts) {
      assert.ok(['critical', 'warning'].includes(a.labels?.severity ?? ''), `${a.alert}: severity`);
      assert.deepEqual(Object.keys(a.annotations ?? {}).sort(), ['description', 'runbook_url', 'summary'], `${a.alert}: annotations`);
      for (const key of ['summary', 'description']) {
        assert.ok((a.annotations?.[key] ?? '').trim().length > 10, `${a.alert}: annotation ${key}`);
      }
    }
  });

  test('every runbook_url points at the section of docs/runbooks.md named after its alert', () => {
    const doc = readFileSync(join(repoRoot(), 'docs', 'runbooks.md'), 'utf8');
    // GitHub's anchors: the heading lower-cased (these headings are single words).
    const sections = new Map(
      doc.split(/^## /m).slice(1).map((body) => [(body.split('\n')[0] ?? '').trim().toLowerCase(), body] as const),
    );
    for (const a of alerts) {
      const anchor = (a.alert ?? '').toLowerCase();
      assert.equal(a.annotations?.runbook_url, `${RUNBOOKS_URL}#${anchor}`, `${a.alert}: runbook_url`);
      const body = sections.get(anchor);
      assert.ok(body, `docs/runbooks.md has a section "## ${a.alert}"`);
      for (const part of ['**Meaning.**', '**Impact.**', '**Diagnosis.**', '**Mitigation.**']) {
        assert.ok(body.includes(part), `${a.alert}: runbook section has ${part}`);
      }
      assert.match(body, /kubectl /, `${a.alert}: the runbook shows how to look with kubectl`);
      assert.match(body, /[a-z_]+\{job="secondcron"/, `${a.alert}: the runbook gives a PromQL query`);
    }
    assert.deepEqual([...sections.keys()].sort(), alerts.map((a) => (a.alert ?? '').toLowerCase()).sort(), 'no runbook without an alert');
  });

  test(`every selector carries ${JOB_MATCHER}, the documented job label convention`, () => {
    let selectors = 0;
    for (const q of ruleQueries(rules)) {
      for (const s of scanPromQL(q.expr).selectors) {
        selectors++;
        const matchers = s.matchers.split(',').map((m) => m.trim());
        assert.ok(matchers.includes(JOB_MATCHER), `${q.where}: ${s.metric}{${s.matchers}}`);
      }
    }
    assert.ok(selectors >= alerts.length, 'the scanner sees the selectors');
  });

  test('the leader alerts wait long enough to ride out a handover seen with scrape skew', () => {
    const forSeconds = (name: string): number => {
      const f = alerts.find((a) => a.alert === name)?.for ?? '0s';
      const m = /^(\d+)(s|m)$/.exec(f);
      assert.ok(m, `${name}: for "${f}"`);
      return Number(m[1]) * (m[2] === 'm' ? 60 : 1);
    };
    // Two scrape intervals of up to a minute: overlapping 1s during a handover must not page.
    assert.ok(forSeconds('SecondCronMultipleLeaders') >= 120);
    assert.ok(forSeconds('SecondCronNoLeader') >= 60);
  });

  test('missed triggers wait longer than one burst keeps the 5 m increase above zero', () => {
    const missed = alerts.find((a) => a.alert === 'SecondCronMissedTriggers');
    assert.match(missed?.expr ?? '', /\[5m\]/);
    assert.equal(missed?.for, '10m');
  });

  test('every aggregation is by/on (job, namespace, …), so the chart\'s multiCluster keeps its label through all of them with one substitution', () => {
    let clauses = 0;
    for (const a of alerts) {
      for (const m of a.expr.matchAll(/\b(by|on)\s*\(([^)]*)\)/g)) {
        clauses++;
        assert.match(`${m[1]} (${m[2]})`, /^(by|on) \(job, namespace(, [a-z]+)*\)$/, `${a.alert}: ${m[0]}`);
      }
      // Aggregations without by() would drop every label, the cluster's too.
      assert.doesNotMatch(a.expr, /\b(sum|max|min|count|avg)\s*\(/, `${a.alert}: an aggregation without by`);
    }
    assert.ok(clauses >= alerts.length, `the scan sees the clauses (${clauses})`);
  });

  test('per-schedule alerts keep the SecondCronJob identity (job, namespace, name) through every aggregation', () => {
    for (const a of alerts.filter((x) => (x.alert ?? '').startsWith('SecondCronSchedule'))) {
      const bys = [...a.expr.matchAll(/\b(?:by|on)\s*\(([^)]*)\)/g)].map((m) => (m[1] ?? '').split(',').map((l) => l.trim()).sort().join(','));
      assert.ok(bys.length > 0, `${a.alert} aggregates over replicas`);
      for (const b of bys) assert.equal(b, 'job,name,namespace', `${a.alert}: by/on (${b})`);
    }
  });
});

describe('grafana/alerts.test.yaml', () => {
  const file = loadYaml<PromtoolTests>(readFileSync(grafanaPath('alerts.test.yaml'), 'utf8'));

  test('tests alerts.yaml', () => {
    assert.deepEqual(file.rule_files, ['alerts.yaml']);
  });

  test('shows every alert both firing and not firing', () => {
    const cases = file.tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const name of EXPECTED_ALERTS) {
      const mine = cases.filter((c) => c.alertname === name);
      assert.ok(mine.some((c) => (c.exp_alerts ?? []).length > 0), `${name} is tested firing`);
      assert.ok(mine.some((c) => (c.exp_alerts ?? []).length === 0), `${name} is tested not firing`);
    }
  });
});
