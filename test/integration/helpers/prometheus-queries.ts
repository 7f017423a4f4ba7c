// Every PromQL expression shipped in grafana/ — dashboard panels, template variables, annotations
// and alert rules — in one list, so the unit tests (names, conventions) and the integration test
// (evaluated on a real Prometheus) check exactly the same set.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { loadYaml } from '@kubernetes/client-node';

import { repoRoot } from '../../cluster/repo-root.js';

export type QuerySource = 'panel' | 'variable' | 'annotation' | 'alert';

export interface ShippedQuery {
  source: QuerySource;
  /** Human-readable origin for messages, e.g. 'panel "Leaders" A' or 'alert SecondCronNoLeader'. */
  where: string;
  expr: string;
}

// ---- the files ---------------------------------------------------------------------------------

export interface DashboardTarget {
  expr?: string;
  refId?: string;
  legendFormat?: string;
  format?: string;
  datasource?: { type?: string; uid?: string };
}

export interface DashboardPanel {
  id?: number;
  type: string;
  title?: string;
  description?: string;
  datasource?: { type?: string; uid?: string };
  gridPos?: { h: number; w: number; x: number; y: number };
  fieldConfig?: { defaults?: { unit?: string } };
  options?: Record<string, unknown>;
  targets?: DashboardTarget[];
  /** Panels of a collapsed row. */
  panels?: DashboardPanel[];
}

export interface DashboardVariable {
  name: string;
  type: string;
  query?: string | { query?: string };
  definition?: string;
  datasource?: { type?: string; uid?: string };
  includeAll?: boolean;
  allValue?: string;
  label?: string;
  multi?: boolean;
}

export interface Dashboard {
  schemaVersion: number;
  editable?: boolean;
  title: string;
  uid?: string;
  panels: DashboardPanel[];
  templating: { list: DashboardVariable[] };
  annotations?: { list: { name: string; expr?: string; datasource?: { type?: string; uid?: string } }[] };
}

export interface AlertRule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleFile {
  groups: { name: string; interval?: string; rules: AlertRule[] }[];
}

export { repoRoot };

export const grafanaPath = (file: 'dashboard.json' | 'alerts.yaml' | 'alerts.test.yaml' | '.lint'): string => join(repoRoot(), 'grafana', file);

export function loadDashboard(): Dashboard {
  return JSON.parse(readFileSync(grafanaPath('dashboard.json'), 'utf8')) as Dashboard;
}

export function loadRules(): RuleFile {
  return loadYaml<RuleFile>(readFileSync(grafanaPath('alerts.yaml'), 'utf8'));
}

/** Rows and their panels, flattened (a collapsed row keeps its panels inside it). */
export function allPanels(dashboard: Dashboard): DashboardPanel[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

export function variableQuery(v: DashboardVariable): string | undefined {
  if (typeof v.query === 'string') return v.query;
  return v.query?.query ?? v.definition;
}

const LABEL_VALUES = /^\s*label_values\(\s*(.*?)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$/s;

/**
 * Grafana's `label_values(<selector>, <label>)` as the PromQL selector it reads and the label it
 * lists. Other variable query forms are not used by this dashboard and are rejected.
 */
export function parseLabelValues(query: string): { selector: string; label: string } {
  const m = LABEL_VALUES.exec(query);
  if (!m) throw new Error(`not a label_values(selector, label) query: ${query}`);
  return { selector: m[1] as string, label: m[2] as string };
}

// ---- the list ----------------------------------------------------------------------------------

export function dashboardQueries(dashboard: Dashboard): ShippedQuery[] {
  const out: ShippedQuery[] = [];
  for (const panel of allPanels(dashboard)) {
    for (const t of panel.targets ?? []) {
      if (t.expr !== undefined) out.push({ source: 'panel', where: `panel "${panel.title}" ${t.refId ?? ''}`.trim(), expr: t.expr });
    }
  }
  for (const v of dashboard.templating.list) {
    if (v.type !== 'query') continue;
    const q = variableQuery(v);
    if (q !== undefined) out.push({ source: 'variable', where: `variable $${v.name}`, expr: parseLabelValues(q).selector });
  }
  for (const a of dashboard.annotations?.list ?? []) {
    if (a.expr !== undefined) out.push({ source: 'annotation', where: `annotation "${a.name}"`, expr: a.expr });
  }
  return out;
}

export function ruleQueries(rules: RuleFile): ShippedQuery[] {
  return rules.groups.flatMap((g) =>
    g.rules.map((r) => ({ source: 'alert' as const, where: `alert ${r.alert ?? r.record ?? '?'}`, expr: r.expr.trim() })),
  );
}

export function allShippedQueries(): ShippedQuery[] {
  return [...dashboardQueries(loadDashboard()), ...ruleQueries(loadRules())];
}

// ---- dashboard variables -----------------------------------------------------------------------

export interface VariableValues {
  /** Stands in for Grafana's $__rate_interval (at least 4 scrape intervals), e.g. '30s'. */
  rateInterval: string;
  /** Regex values as Grafana would substitute them into `=~` matchers. */
  job: string;
  namespace: string;
  /** The $schedule_namespace regex: namespaces of SecondCronJobs (per-schedule gauges). */
  scheduleNamespace: string;
  /** Grafana's $__interval, for completeness; the dashboard does not use it today. */
  interval?: string;
}

/** Replaces the Grafana variables the dashboard uses; throws on any variable left over. */
export function substituteVariables(expr: string, values: VariableValues): string {
  const table: Record<string, string> = {
    __rate_interval: values.rateInterval,
    __interval: values.interval ?? values.rateInterval,
    job: values.job,
    namespace: values.namespace,
    schedule_namespace: values.scheduleNamespace,
  };
  const out = expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced: string | undefined, bare: string | undefined) => {
    const name = (braced ?? bare) as string;
    const value = table[name];
    if (value === undefined) throw new Error(`unknown dashboard variable ${whole} in: ${expr}`);
    return value;
  });
  return out;
}
