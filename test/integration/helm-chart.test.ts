// The Helm chart as text: `helm lint --strict`, what `helm template` renders for default and
// non-default values (replicas, PDB, security, RBAC rules listed exactly, env wiring checked by the
// operator's own flag parser), the schema's and the templates' refusals, and the copies of the CRD,
// alert rules and dashboard that the chart ships (byte-equal to their sources).
// Needs only the pinned helm (SECONDCRON_BIN_DIR), not the cluster.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1Container,
  V1CustomResourceDefinition,
  V1Deployment,
  V1NetworkPolicy,
  V1Pod,
  V1PodDisruptionBudget,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
  V1Service,
  V1ServiceAccount,
} from '@kubernetes/client-node';

import { chartNodeOptions } from '../../bench/lib/operator.js';
import { envName, FLAGS, parseConfig, type Config } from '../../src/config.js';
import { DEFAULT_TLS_POLICY } from '../../src/http/tls-policy.js';
import { runCommand } from '../cluster/run-command.js';
import {
  CHART_DIR,
  helm,
  helmOk,
  type Manifest,
  ofKind,
  only,
  parseManifests,
  parseYaml,
  REPO_ROOT,
  renderChart,
  templateChart,
  valuesFile,
} from './helpers/helm.js';
import { promtool } from './helpers/prometheus-server.js';
import { buildUmbrella, UMBRELLA_OWN } from './helpers/umbrella.js';

const RELEASE = 'sc';
const NS = 'secondcron-system';
const FULLNAME = 'sc-secondcron';

/** Exactly what the operator sends (helm-install.test.ts checks it against the API server's audit log). */
const OPERATOR_RULES = [
  { apiGroups: ['secondcron.io'], resources: ['secondcronjobs'], verbs: ['list', 'watch', 'patch'] },
  { apiGroups: ['secondcron.io'], resources: ['secondcronjobs/status'], verbs: ['patch'] },
  { apiGroups: ['secondcron.io'], resources: ['secondcronjobs/finalizers'], verbs: ['update'] },
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];
const LEASE_RULES = (leaseName: string): unknown[] => [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [leaseName], verbs: ['get', 'list', 'watch', 'update'] },
];

/** Everything changed that can be, to prove each value reaches the output. */
const NON_DEFAULT_VALUES = {
  replicaCount: 5,
  image: { repository: 'registry.example/secondcron', tag: 'ignored', digest: `sha256:${'ab'.repeat(32)}`, pullPolicy: 'Always' },
  watchNamespaces: ['team-a', 'team-b'],
  leaderElection: { leaseName: 'scj-lease', leaseDuration: '30s', renewDeadline: '20s', retryPeriod: '1500ms' },
  shutdownTimeout: '40s',
  terminationGracePeriodSeconds: 60,
  logLevel: 'debug',
  maxConcurrentCreates: 4,
  qps: 12.5,
  burst: 25,
  heapLimitMiB: 512,
  connectionLimits: { readHeaderTimeout: '5s', requestTimeout: '1m', socketTimeout: '2500ms', keepAliveTimeout: '1m', tlsHandshakeTimeout: '3s', maxHeaderBytes: 8192, maxHeadersCount: 20 },
  metrics: {
    port: 9090,
    maxConnections: 100,
    jobName: 'scj-operator',
    service: { port: 9091 },
    perSchedule: { enabled: false },
    serviceMonitor: { enabled: true, interval: '1m30s', labels: { release: 'kube-prometheus' }, honorLabels: false, scraperTokenSecret: true },
    prometheusRule: { enabled: true, labels: { release: 'kube-prometheus' } },
  },
  health: { port: 9092, maxConnections: 8 },
  grafanaDashboard: { enabled: true, namespace: 'monitoring', annotations: { grafana_folder: 'Operators' } },
  podDisruptionBudget: { maxUnavailable: 2 },
  topologySpread: { whenUnsatisfiable: 'DoNotSchedule', maxSkew: 2 },
  resources: { requests: { cpu: '100m', memory: '200Mi' }, limits: { memory: '1Gi' } },
  priorityClassName: 'system-cluster-critical',
  crds: { keep: false, annotations: { 'argocd.argoproj.io/sync-wave': '-1' }, labels: { team: 'platform', 'app.kubernetes.io/name': 'ignored' } },
  rbac: { aggregateToDefaultRoles: false },
};

const CONNECTION_DEFAULTS = { headersTimeoutMs: 32_000, requestTimeoutMs: 64_000, inactivityTimeoutMs: 32_000, keepAliveTimeoutMs: 90_000, tlsHandshakeTimeoutMs: 10_000, maxHeaderBytes: 16_384, maxHeadersCount: 64 };
const CONNECTION_CHANGED = { headersTimeoutMs: 5_000, requestTimeoutMs: 60_000, inactivityTimeoutMs: 2_500, keepAliveTimeoutMs: 60_000, tlsHandshakeTimeoutMs: 3_000, maxHeaderBytes: 8_192, maxHeadersCount: 20 };

/** client-node models are class instances with undefined fields; compare plain JSON. */
function plain<T>(value: T): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}

function operatorContainer(docs: Manifest[]): V1Container {
  const dep = only<V1Deployment>(docs, 'Deployment');
  const containers = dep.spec?.template.spec?.containers ?? [];
  assert.equal(containers.length, 1);
  return containers[0] as V1Container;
}

/** The container env as the kubelet would resolve it for a pod `podName` in `namespace`. */
function resolvedEnv(container: V1Container, podName: string, namespace: string): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.name': podName, 'metadata.namespace': namespace };
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef) {
      const v = fields[e.valueFrom.fieldRef.fieldPath];
      assert.ok(v !== undefined, `env ${e.name}: unexpected fieldRef ${e.valueFrom.fieldRef.fieldPath}`);
      env[e.name] = v;
    } else assert.fail(`env ${e.name} has neither a value nor a fieldRef`);
  }
  return env;
}

function allRules(docs: Manifest[]): Array<{ where: string; rule: V1PolicyRule }> {
  return [...ofKind<V1ClusterRole>(docs, 'ClusterRole'), ...ofKind<V1Role>(docs, 'Role')].flatMap((r) =>
    (r.rules ?? []).map((rule) => ({ where: `${r.kind}/${r.metadata?.namespace ?? ''}/${r.metadata?.name}`, rule })),
  );
}

describe('helm chart files', () => {
  test('Chart.yaml: apiVersion v2, appVersion equals package.json version', () => {
    const chart = parseYaml<{ apiVersion: string; name: string; appVersion: string; version: string }>(
      readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8'),
    );
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(chart.apiVersion, 'v2');
    assert.equal(chart.name, 'secondcron');
    assert.equal(chart.appVersion, pkg.version);
  });

  // `make chart-sync` copies these; .Files.Get cannot read outside the chart directory.
  const COPIES: Array<[string, string]> = [
    ['config/crd/secondcronjobs.secondcron.io.yaml', 'secondcronjobs.secondcron.io.yaml'],
    ['grafana/alerts.yaml', 'alerts.yaml'],
    ['grafana/dashboard.json', 'dashboard.json'],
  ];
  for (const [source, copy] of COPIES) {
    test(`files/${copy} is byte-for-byte ${source} (else run \`make chart-sync\`)`, () => {
      const want = readFileSync(join(REPO_ROOT, source));
      const got = readFileSync(join(CHART_DIR, 'files', copy));
      assert.ok(want.equals(got), `helm/secondcron/files/${copy} differs from ${source}: run \`make chart-sync\``);
    });
  }

  test('files/ holds only the synced copies', () => {
    assert.deepEqual(readdirSync(join(CHART_DIR, 'files')).sort(), COPIES.map(([, c]) => c).sort());
  });

  test('the README documents every value of values.yaml', () => {
    const readme = readFileSync(join(CHART_DIR, 'README.md'), 'utf8');
    const values = parseYaml<Record<string, unknown>>(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'));
    const leaves: string[] = [];
    const walk = (prefix: string, v: unknown): void => {
      // Objects the chart owns are documented key by key; free-form maps and lists as a whole.
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length > 0 &&
          !['resources', 'podSecurityContext', 'securityContext', 'nodeSelector'].includes(prefix)) {
        for (const [k, child] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, child);
      } else leaves.push(prefix);
    };
    walk('', values);
    const missing = leaves.filter((key) => !readme.includes(`| \`${key}\` |`));
    assert.deepEqual(missing, [], 'values without a row in the README values table');
    assert.ok(leaves.length > 40, `expected the full values tree, got ${leaves.length} keys`);
  });
});

describe('helm lint --strict', () => {
  test('default values', async () => {
    const res = await helm(['lint', '--strict', CHART_DIR]);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    assert.match(res.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  test('non-default values', async () => {
    const file = valuesFile(NON_DEFAULT_VALUES);
    try {
      const res = await helm(['lint', '--strict', CHART_DIR, '-f', file]);
      assert.equal(res.code, 0, res.stdout + res.stderr);
      assert.match(res.stdout, /0 chart\(s\) failed/);
    } finally {
      rmSync(join(file, '..'), { recursive: true, force: true });
    }
  });
});

describe('helm package', () => {
  test('the packaged chart renders exactly what the directory renders (nothing needed is .helmignored)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'secondcron-package-'));
    try {
      const out = await helm(['package', CHART_DIR, '--destination', dir]);
      assert.equal(out.code, 0, out.stderr);
      const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
      assert.equal(tgz, 'secondcron-0.1.0.tgz');
      const values = { metrics: { prometheusRule: { enabled: true } }, grafanaDashboard: { enabled: true } };
      const fromDir = await templateChart({ values });
      const file = valuesFile(values);
      try {
        const fromPackage = await helm(['template', 'sc', join(dir, tgz), '--namespace', NS, '-f', file]);
        assert.equal(fromPackage.code, 0, fromPackage.stderr);
        assert.equal(fromPackage.stdout, fromDir.stdout);
      } finally {
        rmSync(join(file, '..'), { recursive: true, force: true });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('helm template, default values', async () => {
  const docs = await renderChart({ release: RELEASE, namespace: NS });

  test('renders exactly the expected objects', () => {
    const names = docs.map((d) => `${d.kind}/${d.metadata?.namespace ?? ''}/${d.metadata?.name}`).sort();
    assert.deepEqual(names, [
      `ClusterRole//${FULLNAME}`,
      `ClusterRole//${FULLNAME}-edit`,
      `ClusterRole//${FULLNAME}-metrics-auth`,
      `ClusterRole//${FULLNAME}-metrics-reader`,
      `ClusterRole//${FULLNAME}-view`,
      `ClusterRoleBinding//${FULLNAME}`,
      `ClusterRoleBinding//${FULLNAME}-metrics-auth`,
      'CustomResourceDefinition//secondcronjobs.secondcron.io',
      `Deployment/${NS}/${FULLNAME}`,
      `Pod/${NS}/${FULLNAME}-test`,
      `PodDisruptionBudget/${NS}/${FULLNAME}`,
      `Role/${NS}/${FULLNAME}-leader-election`,
      `RoleBinding/${NS}/${FULLNAME}-leader-election`,
      `Service/${NS}/${FULLNAME}-metrics`,
      `ServiceAccount/${NS}/${FULLNAME}`,
    ]);
  });

  test('Deployment: 3 replicas, rolling update without losing a ready replica, spread over nodes and zones', () => {
    const dep = only<V1Deployment>(docs, 'Deployment');
    assert.equal(dep.spec?.replicas, 3);
    assert.deepEqual(plain(dep.spec?.strategy), { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    const selector = dep.spec?.selector.matchLabels;
    assert.deepEqual(selector, { 'app.kubernetes.io/name': 'secondcron', 'app.kubernetes.io/instance': RELEASE });
    const pod = dep.spec?.template;
    for (const [k, v] of Object.entries(selector ?? {})) assert.equal(pod?.metadata?.labels?.[k], v);
    assert.deepEqual(plain(pod?.spec?.topologySpreadConstraints), ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'].map((key) => ({
      topologyKey: key,
      maxSkew: 1,
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: selector },
      matchLabelKeys: ['pod-template-hash'],
    })));
  });

  test('Deployment: non-root without fixed ids, read-only, seccomp RuntimeDefault, no capabilities, token mounted, Linux nodes', () => {
    const dep = only<V1Deployment>(docs, 'Deployment');
    const spec = dep.spec?.template.spec;
    assert.equal(spec?.automountServiceAccountToken, true);
    assert.equal(spec?.serviceAccountName, FULLNAME);
    // OpenShift's restricted SCC assigns its own uid and refuses a pod that names another one.
    assert.deepEqual(plain(spec?.securityContext), { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    assert.deepEqual(plain(spec?.nodeSelector), { 'kubernetes.io/os': 'linux' });
    const sc = operatorContainer(docs).securityContext;
    assert.equal(sc?.runAsNonRoot, true);
    assert.deepEqual([sc?.runAsUser, sc?.runAsGroup], [undefined, undefined]);
    assert.equal(sc?.readOnlyRootFilesystem, true);
    assert.equal(sc?.allowPrivilegeEscalation, false);
    assert.equal(sc?.privileged, false);
    assert.deepEqual(sc?.capabilities?.drop, ['ALL']);
    assert.equal(sc?.capabilities?.add, undefined);
    assert.equal(sc?.seccompProfile?.type, 'RuntimeDefault');
  });

  test('Deployment: runAsNonRoot is verifiable from the image alone (a numeric, non-zero Dockerfile USER)', () => {
    // The kubelet refuses runAsNonRoot for an image whose USER is a name; the e2e reads the uid
    // and gid the runtime actually gave the container.
    const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)\s*$/gm)].map((m) => m[1]);
    assert.deepEqual(users, ['65532:65532']);
  });

  test('Deployment: probes on the health port, ports, resources, grace period beyond the shutdown timeout', () => {
    const dep = only<V1Deployment>(docs, 'Deployment');
    const c = operatorContainer(docs);
    assert.deepEqual(plain(c.ports), [
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
    assert.equal(c.startupProbe?.httpGet?.path, '/readyz');
    assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');
    assert.equal(c.livenessProbe?.httpGet?.path, '/healthz');
    for (const p of [c.startupProbe, c.readinessProbe, c.livenessProbe]) assert.equal(p?.httpGet?.port, 'health');
    assert.equal(c.resources?.requests?.cpu, '50m');
    assert.equal(c.resources?.limits?.memory, '512Mi');
    assert.equal(c.image, 'ghcr.io/secondcron/secondcron:0.1.0');
    const env = resolvedEnv(c, 'p', NS);
    const shutdownMs = parseConfig([], env).shutdownTimeoutMs;
    const grace = dep.spec?.template.spec?.terminationGracePeriodSeconds ?? 0;
    assert.ok(grace * 1000 >= shutdownMs + 5000, `grace ${grace}s vs shutdown timeout ${shutdownMs} ms`);
  });

  test('env: every SECONDCRON_* variable is an operator flag, and the operator parses them to the defaults', () => {
    const c = operatorContainer(docs);
    const flagEnv = new Set(FLAGS.map((f) => envName(f.flag)));
    const set = (c.env ?? []).map((e) => e.name).filter((n) => n.startsWith('SECONDCRON_'));
    for (const name of set) assert.ok(flagEnv.has(name), `${name} is not a flag of src/config.ts`);
    // Only what has no place in a pod is left out: in-cluster config, identity from POD_NAME.
    const unset = [...flagEnv].filter((n) => !set.includes(n)).sort();
    // and the serving certificate's directory, set only with metrics.secure and metrics.certSecret.
    assert.deepEqual(unset, ['SECONDCRON_IDENTITY', 'SECONDCRON_KUBECONFIG', 'SECONDCRON_METRICS_CERT_DIR']);

    const env = resolvedEnv(c, 'sc-secondcron-abc-xyz', NS);
    assert.equal(env.POD_NAME, 'sc-secondcron-abc-xyz');
    assert.equal(env.POD_NAMESPACE, NS);
    const cfg = parseConfig([], env);
    const expected: Partial<Config> = {
      namespaces: [],
      leaderElect: true,
      leaderElectionNamespace: NS,
      leaseName: 'secondcron-leader',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      metricsPort: 8080,
      perScheduleMetrics: true,
      metricsSecure: true, // the chart's default and the binary's
      metricsTlsMinVersion: 'VersionTLS12',
      metricsTlsCipherSuites: [...DEFAULT_TLS_POLICY.cipherSuites], // the chart lists the binary's default
      healthPort: 8081,
      // controller-runtime's timeouts (src/http/connection-limits.ts), the same as the binary's defaults.
      metricsLimits: { ...CONNECTION_DEFAULTS, maxConnections: 256 },
      healthLimits: { ...CONNECTION_DEFAULTS, maxConnections: 32 },
      maxConcurrentCreates: 400,
      qps: 200,
      burst: 400,
      logLevel: 'info',
      shutdownTimeoutMs: 10_000,
      kubeconfig: undefined,
      identity: undefined,
    };
    for (const [k, v] of Object.entries(expected)) assert.deepEqual(cfg[k as keyof Config], v, k);
  });

  test('env: V8 heap limit from heapLimitMiB', () => {
    const env = resolvedEnv(operatorContainer(docs), 'p', NS);
    assert.equal(env.NODE_OPTIONS, '--max-old-space-size=160 --max-semi-space-size=4');
    assert.equal(chartNodeOptions(), env.NODE_OPTIONS, 'make bench runs the operator with the same flags');
  });

  test('PodDisruptionBudget keeps one replica', () => {
    const pdb = only<V1PodDisruptionBudget>(docs, 'PodDisruptionBudget');
    assert.equal(pdb.spec?.minAvailable, 1);
    assert.equal(pdb.spec?.maxUnavailable, undefined);
    assert.deepEqual(pdb.spec?.selector?.matchLabels, only<V1Deployment>(docs, 'Deployment').spec?.selector.matchLabels);
  });

  test('RBAC: the operator ClusterRole grants exactly what the operator uses', () => {
    const role = only<V1ClusterRole>(docs, 'ClusterRole', FULLNAME);
    assert.deepEqual(plain(role.rules), OPERATOR_RULES);
    const binding = only<V1ClusterRoleBinding>(docs, 'ClusterRoleBinding', FULLNAME);
    assert.deepEqual(plain(binding.roleRef), { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: FULLNAME });
    assert.deepEqual(plain(binding.subjects), [{ kind: 'ServiceAccount', name: FULLNAME, namespace: NS }]);
  });

  test('RBAC: Leases only through a Role in the release namespace, get/list/watch/update only of the one Lease', () => {
    const role = only<V1Role>(docs, 'Role');
    assert.equal(role.metadata?.namespace, NS);
    assert.deepEqual(plain(role.rules), LEASE_RULES('secondcron-leader'));
    const binding = only<V1RoleBinding>(docs, 'RoleBinding');
    assert.equal(binding.metadata?.namespace, NS);
    assert.deepEqual(plain(binding.roleRef), { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.metadata?.name });
    assert.deepEqual(plain(binding.subjects), [{ kind: 'ServiceAccount', name: FULLNAME, namespace: NS }]);
    for (const { where, rule } of allRules(docs)) {
      if (where.startsWith('ClusterRole/')) assert.ok(!rule.resources?.includes('leases'), `${where} grants leases`);
    }
  });

  test('RBAC: nothing grants secrets, pods, pods/exec, CRDs or wildcards; aggregated roles are bound to nobody', () => {
    for (const { where, rule } of allRules(docs)) {
      for (const r of rule.resources ?? []) {
        assert.ok(!['secrets', 'pods', 'pods/exec', 'customresourcedefinitions', '*'].includes(r), `${where} grants ${r}`);
      }
      assert.ok(!(rule.verbs ?? []).includes('*'), `${where} grants verb *`);
      assert.ok(!(rule.apiGroups ?? []).includes('*'), `${where} grants apiGroup *`);
      assert.ok(!(rule.apiGroups ?? []).includes('apiextensions.k8s.io'), `${where} grants apiextensions`);
    }
    const bound = [...ofKind<V1ClusterRoleBinding>(docs, 'ClusterRoleBinding'), ...ofKind<V1RoleBinding>(docs, 'RoleBinding')].map((b) => b.roleRef.name);
    for (const suffix of ['-view', '-edit']) {
      const agg = only<V1ClusterRole>(docs, 'ClusterRole', FULLNAME + suffix);
      assert.equal(agg.metadata?.labels?.['rbac.authorization.k8s.io/aggregate-to-edit'], 'true');
      assert.ok(!bound.includes(FULLNAME + suffix), `${FULLNAME + suffix} must not be bound by the chart`);
    }
  });

  test('ServiceAccount and metrics Service', () => {
    const sa = only<V1ServiceAccount>(docs, 'ServiceAccount');
    assert.equal(sa.automountServiceAccountToken, true);
    const svc = only<V1Service>(docs, 'Service');
    assert.deepEqual(plain(svc.spec?.ports), [{ name: 'metrics', port: 8080, targetPort: 'metrics', protocol: 'TCP' }]);
    assert.deepEqual(svc.spec?.selector, only<V1Deployment>(docs, 'Deployment').spec?.selector.matchLabels);
  });

  test('CRD: the repository file, unchanged but for labels and helm.sh/resource-policy: keep', () => {
    const rendered = only<V1CustomResourceDefinition>(docs, 'CustomResourceDefinition');
    const [source] = parseManifests(readFileSync(join(REPO_ROOT, 'config/crd/secondcronjobs.secondcron.io.yaml'), 'utf8')) as unknown as V1CustomResourceDefinition[];
    assert.ok(source);
    assert.deepEqual(plain(rendered.spec), plain(source.spec));
    assert.equal(rendered.apiVersion, source.apiVersion);
    assert.equal(rendered.metadata?.name, source.metadata?.name);
    assert.deepEqual(rendered.metadata?.annotations, { 'helm.sh/resource-policy': 'keep' });
    for (const [k, v] of Object.entries(source.metadata?.labels ?? {})) assert.equal(rendered.metadata?.labels?.[k], v);
    // Validation rules survive fromYaml/toYaml in the template.
    assert.match(JSON.stringify(rendered.spec), /\(has\(self\.schedule\) \? 1 : 0\) \+ \(has\(self\.schedules\) \? 1 : 0\) \+ \(has\(self\.intervalSeconds\) \? 1 : 0\) == 1/);
  });

  test('no ServiceMonitor, PodMonitor, PrometheusRule or dashboard unless asked for', () => {
    for (const kind of ['ServiceMonitor', 'PodMonitor', 'PrometheusRule', 'ConfigMap']) assert.equal(ofKind(docs, kind).length, 0, kind);
  });
});

describe('helm template, non-default values', async () => {
  const docs = await renderChart({ release: RELEASE, namespace: NS, values: NON_DEFAULT_VALUES });
  const defaults = await renderChart({ release: RELEASE, namespace: NS });

  test('the output differs from the default output', () => {
    assert.notDeepEqual(plain(docs), plain(defaults));
  });

  test('Deployment: replicas, image digest, grace period, ports, resources, spread, priority class', () => {
    const dep = only<V1Deployment>(docs, 'Deployment');
    const spec = dep.spec?.template.spec;
    assert.equal(dep.spec?.replicas, 5);
    const c = operatorContainer(docs);
    assert.equal(c.image, `registry.example/secondcron@sha256:${'ab'.repeat(32)}`);
    assert.equal(c.imagePullPolicy, 'Always');
    assert.equal(spec?.terminationGracePeriodSeconds, 60);
    assert.equal(spec?.priorityClassName, 'system-cluster-critical');
    assert.deepEqual(c.ports?.map((p) => p.containerPort), [9090, 9092]);
    assert.equal(c.resources?.limits?.memory, '1Gi');
    assert.deepEqual(spec?.topologySpreadConstraints?.map((t) => [t.topologyKey, t.maxSkew, t.whenUnsatisfiable]), [
      ['kubernetes.io/hostname', 2, 'DoNotSchedule'],
      ['topology.kubernetes.io/zone', 2, 'DoNotSchedule'],
    ]);
  });

  test('env: the operator parses every changed value', () => {
    const cfg = parseConfig([], resolvedEnv(operatorContainer(docs), 'p', NS));
    const expected: Partial<Config> = {
      namespaces: ['team-a', 'team-b'],
      leaderElectionNamespace: NS,
      leaseName: 'scj-lease',
      leaseDurationMs: 30_000,
      renewDeadlineMs: 20_000,
      retryPeriodMs: 1_500,
      metricsPort: 9090,
      perScheduleMetrics: false,
      healthPort: 9092,
      metricsLimits: { ...CONNECTION_CHANGED, maxConnections: 100 },
      healthLimits: { ...CONNECTION_CHANGED, maxConnections: 8 },
      maxConcurrentCreates: 4,
      qps: 12.5,
      burst: 25,
      logLevel: 'debug',
      shutdownTimeoutMs: 40_000,
    };
    for (const [k, v] of Object.entries(expected)) assert.deepEqual(cfg[k as keyof Config], v, k);
    assert.equal(resolvedEnv(operatorContainer(docs), 'p', NS).NODE_OPTIONS, '--max-old-space-size=512 --max-semi-space-size=4');
  });

  test('PDB: maxUnavailable replaces minAvailable', () => {
    const pdb = only<V1PodDisruptionBudget>(docs, 'PodDisruptionBudget');
    assert.equal(pdb.spec?.maxUnavailable, 2);
    assert.equal(pdb.spec?.minAvailable, undefined);
  });

  test('RBAC with watchNamespaces: a Role per namespace with the same rules, nothing cluster-wide', () => {
    // Aggregation off, namespaced mode: no operator ClusterRole; what secure metrics needs is
    // cluster-scoped by nature (TokenReviews, SubjectAccessReviews, the non-resource URL /metrics).
    const names = (kind: string): string[] => ofKind(docs, kind).map((r) => r.metadata?.name ?? '').sort();
    assert.deepEqual(names('ClusterRole'), [`${FULLNAME}-metrics-auth`, `${FULLNAME}-metrics-reader`]);
    assert.deepEqual(names('ClusterRoleBinding'), [`${FULLNAME}-metrics-auth`, `${FULLNAME}-metrics-scraper`]);
    for (const ns of ['team-a', 'team-b']) {
      const role = ofKind<V1Role>(docs, 'Role').find((r) => r.metadata?.namespace === ns);
      assert.ok(role, `Role in ${ns}`);
      assert.deepEqual(plain(role.rules), OPERATOR_RULES);
      const binding = ofKind<V1RoleBinding>(docs, 'RoleBinding').find((b) => b.metadata?.namespace === ns);
      assert.deepEqual(plain(binding?.subjects), [{ kind: 'ServiceAccount', name: FULLNAME, namespace: NS }]);
    }
    const leaseRoles = ofKind<V1Role>(docs, 'Role').filter((r) => (r.rules ?? []).some((rule) => rule.resources?.includes('leases')));
    assert.deepEqual(leaseRoles.map((r) => r.metadata?.namespace), [NS]);
    assert.deepEqual(plain(leaseRoles[0]?.rules), LEASE_RULES('scj-lease'));
  });

  test('CRD without the keep policy, with crds.annotations and crds.labels (the chart\'s own labels win)', () => {
    const crd = only<V1CustomResourceDefinition>(docs, 'CustomResourceDefinition');
    assert.deepEqual(crd.metadata?.annotations, { 'argocd.argoproj.io/sync-wave': '-1' });
    assert.equal(crd.metadata?.labels?.team, 'platform');
    assert.equal(crd.metadata?.labels?.['app.kubernetes.io/name'], 'secondcron');
  });

  test('ServiceMonitor: scrapes the metrics port and sets the job label the alerts select', () => {
    const sm = only(docs, 'ServiceMonitor') as Manifest & {
      spec: { selector: { matchLabels: Record<string, string> }; endpoints: Array<Record<string, unknown>> };
    };
    assert.equal(sm.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(sm.metadata?.labels?.release, 'kube-prometheus');
    const svc = only<V1Service>(docs, 'Service');
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) assert.equal(svc.metadata?.labels?.[k], v);
    assert.deepEqual(sm.spec.endpoints, [{
      port: 'metrics',
      path: '/metrics',
      honorLabels: false,
      // metrics.secure (the default): HTTPS, the scraper ServiceAccount's token, a self-signed certificate.
      scheme: 'https',
      authorization: { type: 'Bearer', credentials: { name: `${FULLNAME}-metrics-scraper`, key: 'token' } },
      tlsConfig: { insecureSkipVerify: true },
      interval: '1m30s',
      relabelings: [{ action: 'replace', targetLabel: 'job', replacement: 'scj-operator' }],
    }]);
    assert.equal(svc.spec?.ports?.[0]?.port, 9091);
  });

  test('PrometheusRule: the rules of grafana/alerts.yaml with the job matcher rewritten, valid for promtool', async (t) => {
    const rule = only(docs, 'PrometheusRule') as Manifest & { spec: { groups: unknown[] } };
    const source = readFileSync(join(REPO_ROOT, 'grafana/alerts.yaml'), 'utf8');
    assert.ok(source.includes('job="secondcron"'));
    const want = parseYaml<{ groups: unknown[] }>(source.replaceAll('job="secondcron"', 'job="scj-operator"'));
    assert.deepEqual(rule.spec.groups, want.groups);
    assert.ok(!JSON.stringify(rule.spec).includes('job=\\"secondcron\\"'));

    const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p));
    if (!promtool) {
      t.skip('promtool not installed (make prometheus)');
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'secondcron-rules-'));
    try {
      // JSON is YAML: the rendered groups as a plain rules file.
      writeFileSync(join(dir, 'rules.yaml'), JSON.stringify({ groups: rule.spec.groups }));
      const res = await runCommand(promtool, ['check', 'rules', join(dir, 'rules.yaml')]);
      assert.equal(res.code, 0, res.stdout + res.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('Grafana dashboard ConfigMap: sidecar label, chosen namespace, the JSON of grafana/dashboard.json', () => {
    const cm = only<V1ConfigMap>(docs, 'ConfigMap');
    assert.equal(cm.metadata?.labels?.grafana_dashboard, '1');
    assert.equal(cm.metadata?.namespace, 'monitoring');
    assert.equal(cm.metadata?.annotations?.grafana_folder, 'Operators');
    const want = JSON.parse(readFileSync(join(REPO_ROOT, 'grafana/dashboard.json'), 'utf8')) as unknown;
    assert.deepEqual(JSON.parse(cm.data?.['secondcron.json'] ?? 'null'), want);
  });

  test('optional parts can be switched off', async () => {
    const off = await renderChart({
      values: { crds: { enabled: false }, podDisruptionBudget: { enabled: false }, topologySpread: { enabled: false }, metrics: { service: { enabled: false } } },
    });
    for (const kind of ['CustomResourceDefinition', 'PodDisruptionBudget', 'Service']) assert.equal(ofKind(off, kind).length, 0, kind);
    assert.equal(only<V1Deployment>(off, 'Deployment').spec?.template.spec?.topologySpreadConstraints, undefined);
    // One replica without leader election: no PDB (it would block drains), no Lease Role.
    const single = await renderChart({ values: { replicaCount: 1, leaderElection: { enabled: false } } });
    assert.equal(ofKind(single, 'PodDisruptionBudget').length, 0);
    assert.ok(!allRules(single).some(({ rule }) => rule.resources?.includes('leases')));
    assert.equal(parseConfig([], resolvedEnv(operatorContainer(single), 'p', NS)).leaderElect, false);
    const v8Default = await renderChart({ values: { heapLimitMiB: null } });
    assert.equal(resolvedEnv(operatorContainer(v8Default), 'p', NS).NODE_OPTIONS, undefined);
  });
});

describe('helm template, the knobs users expect (cert-manager, ingress-nginx, kube-prometheus-stack)', () => {
  const KNOBS = {
    global: { imageRegistry: 'mirror.example:5000/hub' },
    image: { registry: 'ignored.example' },
    namespaceOverride: 'ops',
    commonLabels: { team: 'platform', 'cost-center': '42' },
    revisionHistoryLimit: 3,
    automountServiceAccountToken: false,
    extraArgs: ['--log-level=debug'],
    extraEnvFrom: [{ configMapRef: { name: 'proxy-env' } }],
    extraVolumes: [{ name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }],
    extraVolumeMounts: [{ name: 'token', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
    metrics: {
      service: { labels: { scrape: 'yes' } },
      serviceMonitor: {
        enabled: true,
        namespace: 'monitoring',
        scraperTokenSecret: true,
        annotations: { note: 'x' },
        relabelings: [{ action: 'replace', sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' }],
        metricRelabelings: [{ action: 'drop', sourceLabels: ['__name__'], regex: 'nodejs_gc_.*' }],
      },
      prometheusRule: {
        enabled: true,
        disabled: { SecondCronReplicaDown: true, SecondCronScheduleNoSuccess: true },
        alertLabels: { team: 'platform', severity: 'ignored' },
        additionalRules: [{ alert: 'MyScheduleLate', expr: 'vector(1)', labels: { severity: 'info' } }],
      },
    },
    networkPolicy: { enabled: true, metricsFrom: [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }], apiServer: { cidrs: ['10.0.0.1/32'] } },
  };
  const docsP = renderChart({ release: RELEASE, namespace: NS, values: KNOBS });

  test('image.registry, and global.imageRegistry winning over it', async () => {
    assert.equal(operatorContainer(await docsP).image, 'mirror.example:5000/hub/ghcr.io/secondcron/secondcron:0.1.0');
    const own = await renderChart({ values: { image: { registry: 'registry.example', repository: 'team/secondcron', tag: '1.2.3' } } });
    assert.equal(operatorContainer(own).image, 'registry.example/team/secondcron:1.2.3');
  });

  test('namespaceOverride places every namespaced object (and the RBAC subjects) in that namespace', async () => {
    const docs = await docsP;
    const namespaced = docs.filter((d) => d.metadata?.namespace !== undefined);
    assert.ok(namespaced.length >= 6);
    for (const d of namespaced) {
      // The ServiceMonitor, and the scraper identity whose token Secret it names, live in Prometheus' namespace.
      const want = d.kind === 'ServiceMonitor' || d.metadata?.name === `${FULLNAME}-metrics-scraper` ? 'monitoring' : 'ops';
      assert.equal(d.metadata?.namespace, want, `${d.kind}/${d.metadata?.name}`);
    }
    for (const b of [...ofKind<V1ClusterRoleBinding>(docs, 'ClusterRoleBinding'), ...ofKind<V1RoleBinding>(docs, 'RoleBinding')]) {
      const want = b.metadata?.name === `${FULLNAME}-metrics-scraper` ? 'monitoring' : 'ops';
      for (const sub of b.subjects ?? []) assert.equal(sub.namespace, want, `${b.kind}/${b.metadata?.name} subject`);
    }
  });

  test('commonLabels on every object and on the pods', async () => {
    const docs = await docsP;
    for (const d of docs) {
      assert.equal(d.metadata?.labels?.team, 'platform', `${d.kind}/${d.metadata?.name}`);
      assert.equal(d.metadata?.labels?.['cost-center'], '42', `${d.kind}/${d.metadata?.name}`);
    }
    assert.equal(only<V1Deployment>(docs, 'Deployment').spec?.template.metadata?.labels?.team, 'platform');
  });

  test('revisionHistoryLimit, automountServiceAccountToken, extraArgs, extraEnvFrom, extra volumes', async () => {
    const docs = await docsP;
    const dep = only<V1Deployment>(docs, 'Deployment');
    assert.equal(dep.spec?.revisionHistoryLimit, 3);
    assert.equal(dep.spec?.template.spec?.automountServiceAccountToken, false);
    assert.equal(only<V1ServiceAccount>(docs, 'ServiceAccount', FULLNAME).automountServiceAccountToken, false);
    const c = operatorContainer(docs);
    assert.deepEqual(c.args, ['--log-level=debug']);
    // Flags win over the chart's env: the operator sees debug although logLevel is info.
    assert.equal(parseConfig(c.args ?? [], resolvedEnv(c, 'p', 'ops')).logLevel, 'debug');
    assert.deepEqual(plain(c.envFrom), [{ configMapRef: { name: 'proxy-env' } }]);
    assert.deepEqual(plain(c.volumeMounts?.map((m) => m.mountPath)), ['/tmp', '/var/run/secrets/kubernetes.io/serviceaccount']);
    assert.deepEqual(dep.spec?.template.spec?.volumes?.map((v) => v.name), ['tmp', 'token']);
    const defaultDocs = await renderChart();
    const defaults = only<V1Deployment>(defaultDocs, 'Deployment');
    assert.equal(defaults.spec?.revisionHistoryLimit, 10);
    assert.equal(defaults.spec?.template.spec?.automountServiceAccountToken, true);
    assert.equal(operatorContainer(defaultDocs).args, undefined);
  });

  test('Service labels; ServiceMonitor namespace, annotations, relabelings after the job relabelling, metricRelabelings', async () => {
    const docs = await docsP;
    assert.equal(only<V1Service>(docs, 'Service').metadata?.labels?.scrape, 'yes');
    const sm = only(docs, 'ServiceMonitor') as Manifest & {
      spec: { namespaceSelector: { matchNames: string[] }; endpoints: Array<{ relabelings: unknown[]; metricRelabelings: unknown[]; honorLabels: boolean }> };
    };
    assert.equal(sm.metadata?.namespace, 'monitoring');
    assert.equal(sm.metadata?.annotations?.note, 'x');
    assert.deepEqual(sm.spec.namespaceSelector.matchNames, ['ops'], 'still finds the Service where it is');
    const ep = sm.spec.endpoints[0];
    assert.equal(ep?.honorLabels, true);
    assert.deepEqual(ep?.relabelings, [
      { action: 'replace', targetLabel: 'job', replacement: 'secondcron' },
      { action: 'replace', sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' },
    ]);
    assert.deepEqual(ep?.metricRelabelings, [{ action: 'drop', sourceLabels: ['__name__'], regex: 'nodejs_gc_.*' }]);
  });

  test('PrometheusRule: disabled alerts left out, alertLabels added (severity kept), additional rules in their own group', async () => {
    const rule = only(await docsP, 'PrometheusRule') as Manifest & {
      spec: { groups: Array<{ name: string; rules: Array<{ alert?: string; labels?: Record<string, string> }> }> };
    };
    const names = rule.spec.groups.flatMap((g) => g.rules.map((r) => r.alert));
    assert.ok(!names.includes('SecondCronReplicaDown') && !names.includes('SecondCronScheduleNoSuccess'));
    assert.ok(names.includes('SecondCronNoLeader') && names.includes('SecondCronScheduleNotReady'));
    const shipped = rule.spec.groups.filter((g) => g.name !== 'secondcron-additional').flatMap((g) => g.rules);
    for (const r of shipped) {
      assert.equal(r.labels?.team, 'platform', `${r.alert}`);
      assert.ok(['critical', 'warning'].includes(r.labels?.severity ?? ''), `${r.alert} keeps its severity`);
    }
    assert.deepEqual(rule.spec.groups.find((g) => g.name === 'secondcron-additional')?.rules, [
      { alert: 'MyScheduleLate', expr: 'vector(1)', labels: { severity: 'info' } },
    ]);
  });

  test('PrometheusRule: disabling an alert that does not exist fails with the list of alerts', async () => {
    const res = await templateChart({ values: { metrics: { prometheusRule: { enabled: true, disabled: { SecondCronNoLeaders: true } } } } });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /metrics.prometheusRule.disabled: no alert named SecondCronNoLeaders \(the alerts are SecondCronNoLeader, /);
  });

  test('metrics.secure (the default): HTTPS with TokenReview/SubjectAccessReview RBAC, a metrics-reader role, a ServiceMonitor scraping with its own ServiceAccount\'s token', async () => {
    const docs = await renderChart({
      release: RELEASE,
      namespace: NS,
      values: {
        metrics: {
          readerSubjects: [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }],
          serviceMonitor: { enabled: true },
        },
      },
    });
    const cfg = parseConfig([], resolvedEnv(operatorContainer(docs), 'p', NS));
    assert.deepEqual([cfg.metricsSecure, cfg.metricsCertDir], [true, undefined], 'secure by default, self-signed at start');
    // The self-signed certificate carries the metrics Service's names (src/main.ts adds the pod's and localhost).
    const svc = only<V1Service>(docs, 'Service', `${FULLNAME}-metrics`).metadata?.name;
    assert.deepEqual(cfg.metricsCertDnsNames, [`${svc}`, `${svc}.${NS}`, `${svc}.${NS}.svc`, `${svc}.${NS}.svc.cluster.local`]);
    const auth = only<V1ClusterRole>(docs, 'ClusterRole', `${FULLNAME}-metrics-auth`);
    assert.deepEqual(plain(auth.rules), [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    const authBinding = only<V1ClusterRoleBinding>(docs, 'ClusterRoleBinding', `${FULLNAME}-metrics-auth`);
    assert.deepEqual(plain(authBinding.subjects), [{ kind: 'ServiceAccount', name: FULLNAME, namespace: NS }]);
    const reader = only<V1ClusterRole>(docs, 'ClusterRole', `${FULLNAME}-metrics-reader`);
    assert.deepEqual(plain(reader.rules), [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    const readerBinding = only<V1ClusterRoleBinding>(docs, 'ClusterRoleBinding', `${FULLNAME}-metrics-reader`);
    assert.deepEqual(plain(readerBinding.subjects), [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }]);
    // By default Prometheus presents its own ServiceAccount's token (bound above): nothing long-lived.
    const scraper = `${FULLNAME}-metrics-scraper`;
    assert.deepEqual(docs.filter((d) => d.metadata?.name === scraper).map((d) => d.kind), [], 'no scraper identity, no token Secret');
    assert.deepEqual(docs.filter((d) => d.kind === 'Secret').map((d) => d.metadata?.name), [], 'no Secret at all');
    const byDefault = (only(docs, 'ServiceMonitor') as Manifest & { spec: { endpoints: Array<Record<string, unknown>> } }).spec.endpoints[0] ?? {};
    assert.deepEqual([byDefault.scheme, byDefault.authorization, byDefault.bearerTokenFile], ['https', undefined, '/var/run/secrets/kubernetes.io/serviceaccount/token']);
    const noReaders = await templateChart({ release: RELEASE, namespace: NS, values: { metrics: { serviceMonitor: { enabled: true } } } });
    assert.notEqual(noReaders.code, 0, 'a ServiceMonitor whose scrapes would all be 403 is refused');
    assert.match(noReaders.stderr, /set metrics.readerSubjects to that ServiceAccount .* or metrics.serviceMonitor.scraperTokenSecret=true/);

    // scraperTokenSecret: a ServiceAccount, its token Secret (filled in by the token controller), bound to the reader role.
    const withSecret = await renderChart({ release: RELEASE, namespace: NS, values: { metrics: { serviceMonitor: { enabled: true, scraperTokenSecret: true } } } });
    const sa = only<V1ServiceAccount>(withSecret, 'ServiceAccount', scraper);
    assert.deepEqual([sa.metadata?.namespace, sa.automountServiceAccountToken], [NS, false]);
    const secret = only(withSecret, 'Secret', scraper) as Manifest & { type?: string };
    assert.deepEqual([secret.metadata?.namespace, secret.type, secret.metadata?.annotations], [NS, 'kubernetes.io/service-account-token', { 'kubernetes.io/service-account.name': scraper }]);
    const scraperBinding = only<V1ClusterRoleBinding>(withSecret, 'ClusterRoleBinding', scraper);
    assert.deepEqual(plain(scraperBinding.roleRef), { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${FULLNAME}-metrics-reader` });
    assert.deepEqual(plain(scraperBinding.subjects), [{ kind: 'ServiceAccount', name: scraper, namespace: NS }]);
    const sm = only(withSecret, 'ServiceMonitor') as Manifest & { spec: { endpoints: Array<Record<string, unknown>> } };
    const ep = sm.spec.endpoints[0] ?? {};
    assert.deepEqual([ep.scheme, ep.authorization, ep.tlsConfig], ['https', { type: 'Bearer', credentials: { name: scraper, key: 'token' } }, { insecureSkipVerify: true }]);
    assert.equal(ep.bearerTokenFile, undefined, 'the Secret instead of bearerTokenFile');

    // With a certificate Secret: mounted, handed to the operator, and verified by Prometheus.
    const withCert = await renderChart({
      release: RELEASE,
      namespace: NS,
      values: { metrics: { certSecret: 'metrics-tls', readerSubjects: [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }], serviceMonitor: { enabled: true } } },
    });
    const c = operatorContainer(withCert);
    assert.equal(parseConfig([], resolvedEnv(c, 'p', NS)).metricsCertDir, '/etc/secondcron/metrics-certs');
    assert.ok(c.volumeMounts?.some((m) => m.name === 'metrics-certs' && m.mountPath === '/etc/secondcron/metrics-certs' && m.readOnly));
    const vol = only<V1Deployment>(withCert, 'Deployment').spec?.template.spec?.volumes?.find((v) => v.name === 'metrics-certs');
    assert.equal(vol?.secret?.secretName, 'metrics-tls');
    const smCert = only(withCert, 'ServiceMonitor') as Manifest & { spec: { endpoints: Array<Record<string, unknown>> } };
    assert.deepEqual(smCert.spec.endpoints[0]?.tlsConfig, { serverName: `${FULLNAME}-metrics.${NS}.svc`, ca: { secret: { name: 'metrics-tls', key: 'ca.crt' } } });
    assert.equal(ofKind(withSecret, 'ClusterRoleBinding').filter((b) => b.metadata?.name === `${FULLNAME}-metrics-reader`).length, 0, 'no reader binding without subjects');

    // metrics.secure=false switches back to plain HTTP, with no extra RBAC and no scraper.
    const plainDocs = await renderChart({ release: RELEASE, namespace: NS, values: { metrics: { secure: false, serviceMonitor: { enabled: true } } } });
    assert.equal(parseConfig([], resolvedEnv(operatorContainer(plainDocs), 'p', NS)).metricsSecure, false);
    assert.equal(ofKind(plainDocs, 'ClusterRole').filter((r) => /-metrics-(auth|reader)$/.test(r.metadata?.name ?? '')).length, 0);
    assert.deepEqual(ofKind(plainDocs, 'ServiceAccount').map((a) => a.metadata?.name), [FULLNAME]);
    const plainEp = (only(plainDocs, 'ServiceMonitor') as Manifest & { spec: { endpoints: Array<Record<string, unknown>> } }).spec.endpoints[0] ?? {};
    assert.deepEqual([plainEp.scheme, plainEp.authorization, plainEp.tlsConfig], [undefined, undefined, undefined]);
  });

  test('metrics.podMonitor: the same endpoint on the pods instead of the Service; the scraper for it; never both', async () => {
    const values = { metrics: { podMonitor: { enabled: true }, serviceMonitor: { namespace: 'monitoring', interval: '1m', caSecret: 'prom-ca', scraperTokenSecret: true }, certSecret: 'metrics-tls' } };
    const docs = await renderChart({ release: RELEASE, namespace: NS, values });
    assert.equal(ofKind(docs, 'ServiceMonitor').length, 0);
    const pm = only(docs, 'PodMonitor') as Manifest & {
      spec: { selector: { matchLabels: Record<string, string> }; namespaceSelector: { matchNames: string[] }; podMetricsEndpoints: Array<Record<string, unknown>> };
    };
    assert.deepEqual([pm.apiVersion, pm.metadata?.namespace, pm.spec.namespaceSelector.matchNames], ['monitoring.coreos.com/v1', 'monitoring', [NS]]);
    const pods = only<V1Deployment>(docs, 'Deployment').spec?.template.metadata?.labels ?? {};
    for (const [k, v] of Object.entries(pm.spec.selector.matchLabels)) assert.equal(pods[k], v, `the pods carry ${k}`);
    const ports = operatorContainer(docs).ports?.map((p) => p.name);
    assert.ok(ports?.includes('metrics'), 'the endpoint names a port of the operator container');
    // The ServiceMonitor's endpoint exactly, on the pods.
    const withService = await renderChart({ release: RELEASE, namespace: NS, values: { metrics: { ...values.metrics, podMonitor: { enabled: false }, serviceMonitor: { ...values.metrics.serviceMonitor, enabled: true } } } });
    const sm = only(withService, 'ServiceMonitor') as Manifest & { spec: { endpoints: Array<Record<string, unknown>> } };
    assert.deepEqual(pm.spec.podMetricsEndpoints, sm.spec.endpoints);
    assert.deepEqual((pm.spec.podMetricsEndpoints[0] ?? {}).tlsConfig, { serverName: `${FULLNAME}-metrics.${NS}.svc`, ca: { secret: { name: 'prom-ca', key: 'ca.crt' } } });
    // The scraper identity and its token Secret live beside the PodMonitor.
    assert.deepEqual(
      docs.filter((d) => d.metadata?.name === `${FULLNAME}-metrics-scraper` && d.kind !== 'ClusterRoleBinding').map((d) => [d.kind, d.metadata?.namespace]),
      [['ServiceAccount', 'monitoring'], ['Secret', 'monitoring']],
    );
    const both = await templateChart({ release: RELEASE, namespace: NS, values: { metrics: { podMonitor: { enabled: true }, serviceMonitor: { enabled: true } } } });
    assert.notEqual(both.code, 0);
    assert.match(both.stderr, /metrics.serviceMonitor.enabled and metrics.podMonitor.enabled: choose one/);
  });

  test('metrics.certManager: a Certificate for the Service names, served from its Secret and verified by the ServiceMonitor', async () => {
    const issuerRef = { name: 'internal-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' };
    const docs = await renderChart({ release: RELEASE, namespace: NS, values: { metrics: { certManager: { enabled: true, issuerRef, duration: '2160h', renewBefore: '720h' }, readerSubjects: [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }], serviceMonitor: { enabled: true } } } });
    const svc = only<V1Service>(docs, 'Service', `${FULLNAME}-metrics`);
    const names = [svc.metadata?.name, `${svc.metadata?.name}.${NS}`, `${svc.metadata?.name}.${NS}.svc`];
    const cert = only(docs, 'Certificate') as Manifest & { spec: Record<string, unknown> };
    assert.deepEqual([cert.apiVersion, cert.metadata?.namespace], ['cert-manager.io/v1', NS]);
    assert.deepEqual(cert.spec, {
      secretName: `${FULLNAME}-metrics-tls`,
      commonName: `${FULLNAME}-metrics.${NS}.svc`,
      dnsNames: names,
      usages: ['server auth', 'digital signature'],
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      duration: '2160h',
      renewBefore: '720h',
      issuerRef,
    });
    // The operator serves that Secret (and follows its renewals)…
    const dep = only<V1Deployment>(docs, 'Deployment');
    assert.deepEqual(dep.spec?.template.spec?.volumes?.find((v) => v.name === 'metrics-certs')?.secret?.secretName, `${FULLNAME}-metrics-tls`);
    assert.equal(resolvedEnv(operatorContainer(docs), 'p', NS).SECONDCRON_METRICS_CERT_DIR, '/etc/secondcron/metrics-certs');
    assert.deepEqual(parseConfig([], resolvedEnv(operatorContainer(docs), 'p', NS)).metricsCertDnsNames, [], 'names only for the self-signed one');
    // …and the ServiceMonitor verifies it: the CA cert-manager writes beside it, a name the certificate carries.
    const sm = only(docs, 'ServiceMonitor') as Manifest & { spec: { endpoints: Array<{ tlsConfig?: { serverName?: string } }> } };
    assert.deepEqual(sm.spec.endpoints[0]?.tlsConfig, { serverName: `${FULLNAME}-metrics.${NS}.svc`, ca: { secret: { name: `${FULLNAME}-metrics-tls`, key: 'ca.crt' } } });
    assert.ok(names.includes(sm.spec.endpoints[0]?.tlsConfig?.serverName), 'serverName is one of the certificate names');

    for (const [values, message] of [
      [{ certManager: { enabled: true } }, /metrics.certManager.enabled needs metrics.certManager.issuerRef.name/],
      [{ certManager: { enabled: true, issuerRef }, certSecret: 'mine' }, /metrics.certManager.enabled and metrics.certSecret: choose one/],
    ] as const) {
      const res = await templateChart({ release: RELEASE, namespace: NS, values: { metrics: values } });
      assert.notEqual(res.code, 0, JSON.stringify(values));
      assert.match(res.stderr, message);
    }
    assert.equal(ofKind(await renderChart({ values: { metrics: { secure: false, certManager: { enabled: true, issuerRef } } } }), 'Certificate').length, 0, 'plain HTTP: no certificate');
  });

  test('metrics.secure with the ServiceMonitor in another namespace: the scraper and the CA Secret are looked for there', async () => {
    const elsewhere = { certSecret: 'metrics-tls', serviceMonitor: { enabled: true, namespace: 'monitoring', scraperTokenSecret: true } };
    const refused = await templateChart({ release: RELEASE, namespace: NS, values: { metrics: elsewhere } });
    assert.notEqual(refused.code, 0, 'a CA Secret reference that cannot resolve is refused');
    assert.match(refused.stderr, /metrics.serviceMonitor.caSecret is needed: the ServiceMonitor is in namespace monitoring, and prometheus-operator reads its CA Secret there, but the serving certificate's Secret metrics-tls is in /);
    const docs = await renderChart({ release: RELEASE, namespace: NS, values: { metrics: { ...elsewhere, serviceMonitor: { ...elsewhere.serviceMonitor, caSecret: 'secondcron-ca' } } } });
    const sm = only(docs, 'ServiceMonitor') as Manifest & { spec: { endpoints: Array<Record<string, unknown>> } };
    assert.equal(sm.metadata?.namespace, 'monitoring');
    assert.deepEqual(sm.spec.endpoints[0]?.tlsConfig, { serverName: `${FULLNAME}-metrics.${NS}.svc`, ca: { secret: { name: 'secondcron-ca', key: 'ca.crt' } } });
    const scraper = `${FULLNAME}-metrics-scraper`;
    assert.equal(only(docs, 'ServiceAccount', scraper).metadata?.namespace, 'monitoring');
    assert.equal(only(docs, 'Secret', scraper).metadata?.namespace, 'monitoring', 'the credentials Secret is where prometheus-operator reads it');
    assert.deepEqual(plain(only<V1ClusterRoleBinding>(docs, 'ClusterRoleBinding', scraper).subjects), [{ kind: 'ServiceAccount', name: scraper, namespace: 'monitoring' }]);
  });

  test('NetworkPolicy: ingress only to the metrics port from metricsFrom and the test pod, egress only to the API server and DNS', async () => {
    // client-node's model names the `from` field `_from` (a reserved word in its generator).
    const np = only<V1NetworkPolicy>(await docsP, 'NetworkPolicy');
    const spec = np.spec as NonNullable<V1NetworkPolicy['spec']>;
    const ingress = spec.ingress ?? [];
    const egress = spec.egress ?? [];
    const dep = only<V1Deployment>(await docsP, 'Deployment');
    assert.deepEqual(plain(spec.podSelector?.matchLabels), plain(dep.spec?.selector.matchLabels));
    assert.deepEqual(spec.policyTypes, ['Ingress', 'Egress']);
    const containerPorts = (operatorContainer(await docsP).ports ?? []).map((p) => p.name);
    // No health rule: the kubelet's probes come from the pod's own node, which a NetworkPolicy always admits.
    assert.deepEqual(ingress.map((i) => (i.ports ?? []).map((p) => p.port)), [['metrics']]);
    for (const i of ingress) for (const p of i.ports ?? []) assert.ok(containerPorts.includes(String(p.port)), `named port ${p.port}`);
    const testPod = { podSelector: { matchLabels: { 'app.kubernetes.io/component': 'test', 'app.kubernetes.io/instance': RELEASE } } };
    assert.deepEqual(plain(ingress[0]?._from), [{ namespaceSelector: { matchLabels: { name: 'monitoring' } } }, testPod]);
    const testPodLabels = only<V1Pod>(await docsP, 'Pod').metadata?.labels ?? {};
    for (const [k, v] of Object.entries(testPod.podSelector.matchLabels)) assert.equal(testPodLabels[k], v, `the helm test pod carries ${k}`);
    assert.deepEqual(egress.map((e) => (e.ports ?? []).map((p) => `${p.port}/${p.protocol}`)), [['443/TCP', '6443/TCP'], ['53/UDP', '53/TCP']]);
    assert.deepEqual(plain(egress[0]?.to), [{ ipBlock: { cidr: '10.0.0.1/32' } }]);
    assert.equal(ofKind(await renderChart(), 'NetworkPolicy').length, 0, 'off by default');
  });

  test('NetworkPolicy defaults: metrics from the namespace monitoring only, no open port; healthFrom adds a health rule', async () => {
    const ingressOf = async (networkPolicy: Record<string, unknown>, tests = true): Promise<unknown> =>
      plain(only<V1NetworkPolicy>(await renderChart({ values: { networkPolicy: { enabled: true, ...networkPolicy }, tests: { enabled: tests } } }), 'NetworkPolicy').spec?.ingress);
    const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    const testPod = { podSelector: { matchLabels: { 'app.kubernetes.io/component': 'test', 'app.kubernetes.io/instance': 'sc' } } };
    const metricsPort = [{ port: 'metrics', protocol: 'TCP' }];
    assert.deepEqual(await ingressOf({}), [{ ports: metricsPort, _from: [monitoring, testPod] }]);
    assert.deepEqual(await ingressOf({}, false), [{ ports: metricsPort, _from: [monitoring] }]);
    // Nobody named: nothing admitted (an empty `from` would admit everyone).
    assert.deepEqual(await ingressOf({ metricsFrom: [] }), []);
    const probers = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'blackbox' } } };
    assert.deepEqual(await ingressOf({ metricsFrom: [], healthFrom: [probers] }), [{ ports: [{ port: 'health', protocol: 'TCP' }], _from: [probers] }]);
  });
});

describe('helm template, umbrella-chart globals and cert-manager\'s knobs', () => {
  const VALUES = {
    global: { imagePullSecrets: ['mirror-pull', { name: 'regcred' }], commonLabels: { team: 'global', tier: 'ops' }, priorityClassName: 'platform-high' },
    imagePullSecrets: [{ name: 'regcred' }],
    commonLabels: { team: 'platform' },
    strategy: { rollingUpdate: { maxSurge: '50%', maxUnavailable: 1 } },
    deploymentAnnotations: { 'reloader.stakater.com/auto': 'true' },
    serviceAccount: { labels: { 'azure.workload.identity/use': 'true' } },
    extraInitContainers: [{ name: 'wait', image: 'busybox', command: ['true'] }],
    extraContainers: [{ name: 'proxy', image: 'envoy', args: ['--config', '/etc/envoy.yaml'] }],
    extraObjects: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '{{ include "secondcron.fullname" . }}-extra', namespace: '{{ .Release.Namespace }}' }, data: { a: 'b' } },
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-token\nstringData:\n  token: x\n',
    ],
  };
  const docsP = renderChart({ release: RELEASE, namespace: NS, values: VALUES });

  test('global.imagePullSecrets (names or {name}) join imagePullSecrets, each once; global.priorityClassName', async () => {
    const pod = only<V1Deployment>(await docsP, 'Deployment').spec?.template.spec;
    assert.deepEqual(plain(pod?.imagePullSecrets), [{ name: 'regcred' }, { name: 'mirror-pull' }]);
    assert.equal(pod?.priorityClassName, 'platform-high');
    const own = await renderChart({ values: { global: { priorityClassName: 'platform-high' }, priorityClassName: 'mine' } });
    assert.equal(only<V1Deployment>(own, 'Deployment').spec?.template.spec?.priorityClassName, 'mine');
    const none = only<V1Deployment>(await renderChart(), 'Deployment').spec?.template.spec;
    assert.deepEqual([none?.imagePullSecrets, none?.priorityClassName], [undefined, undefined]);
  });

  test('global.commonLabels on every chart object and the pods, under the chart\'s own commonLabels', async () => {
    const docs = (await docsP).filter((d) => !['ConfigMap', 'Secret'].includes(d.kind ?? ''));
    // 12 with metrics.secure=false; the secure default adds the authentication delegation and reader RBAC.
    assert.equal(docs.length, 15);
    for (const d of docs) assert.deepEqual([d.metadata?.labels?.team, d.metadata?.labels?.tier], ['platform', 'ops'], `${d.kind}/${d.metadata?.name}`);
    const podLabels = only<V1Deployment>(docs, 'Deployment').spec?.template.metadata?.labels;
    assert.deepEqual([podLabels?.team, podLabels?.tier], ['platform', 'ops']);
  });

  test('strategy, deploymentAnnotations, serviceAccount.labels', async () => {
    const docs = await docsP;
    const dep = only<V1Deployment>(docs, 'Deployment');
    assert.deepEqual(plain(dep.spec?.strategy), { type: 'RollingUpdate', rollingUpdate: { maxSurge: '50%', maxUnavailable: 1 } });
    assert.equal(dep.metadata?.annotations?.['reloader.stakater.com/auto'], 'true');
    assert.equal(dep.spec?.template.metadata?.annotations, undefined, 'not on the pods');
    assert.equal(only<V1ServiceAccount>(docs, 'ServiceAccount').metadata?.labels?.['azure.workload.identity/use'], 'true');
    // Recreate takes no rollingUpdate (the API server refuses one), although the default carries it.
    const recreate = only<V1Deployment>(await renderChart({ values: { strategy: { type: 'Recreate' } } }), 'Deployment');
    assert.deepEqual(plain(recreate.spec?.strategy), { type: 'Recreate' });
  });

  test('extraInitContainers before, extraContainers beside the operator', async () => {
    const pod = only<V1Deployment>(await docsP, 'Deployment').spec?.template.spec;
    assert.deepEqual(pod?.initContainers?.map((c) => c.name), ['wait']);
    assert.deepEqual(pod?.containers.map((c) => c.name), ['operator', 'proxy']);
    assert.deepEqual(pod?.containers[1]?.args, ['--config', '/etc/envoy.yaml']);
  });

  test('extraObjects: objects and strings, both rendered with tpl', async () => {
    const docs = await docsP;
    const cm = only<V1ConfigMap>(docs, 'ConfigMap');
    assert.deepEqual([cm.metadata?.name, cm.metadata?.namespace, cm.data?.a], [`${FULLNAME}-extra`, NS, 'b']);
    assert.equal(only(docs, 'Secret').metadata?.name, `${RELEASE}-token`);
  });

  test('the helm test pod: the operator\'s image, ServiceAccount, security and placement; Lease and Service link variables', async () => {
    const docs = await renderChart({ release: RELEASE, namespace: NS, values: { ...VALUES, tolerations: [{ key: 'k', operator: 'Exists' }] } });
    const pod = only<V1Pod>(docs, 'Pod');
    const dep = only<V1Deployment>(docs, 'Deployment').spec?.template.spec;
    assert.equal(pod.metadata?.annotations?.['helm.sh/hook'], 'test');
    assert.equal(pod.spec?.serviceAccountName, dep?.serviceAccountName);
    assert.equal(pod.spec?.automountServiceAccountToken, true);
    assert.equal(pod.spec?.restartPolicy, 'Never');
    assert.deepEqual(plain([pod.spec?.securityContext, pod.spec?.nodeSelector, pod.spec?.tolerations, pod.spec?.imagePullSecrets]),
      plain([dep?.securityContext, dep?.nodeSelector, dep?.tolerations, dep?.imagePullSecrets]));
    const [test, operator] = [pod.spec?.containers[0], dep?.containers[0]];
    assert.deepEqual(plain([test?.image, test?.imagePullPolicy, test?.securityContext]), plain([operator?.image, operator?.imagePullPolicy, operator?.securityContext]));
    // Not selected by the metrics Service (nor the PDB, the spread): it serves no metrics.
    const selector = only<V1Service>(docs, 'Service').spec?.selector ?? {};
    assert.ok(Object.entries(selector).some(([k, v]) => pod.metadata?.labels?.[k] !== v), 'the Service selects the test pod');
    const env = Object.fromEntries((test?.env ?? []).map((e) => [e.name, e.value]));
    // The kubelet names a Service link variable <NAME>_SERVICE_HOST, upper case, dashes as underscores.
    assert.deepEqual(env, {
      TEST_NAMESPACE: NS,
      TEST_LEASE: 'secondcron-leader',
      TEST_LEASE_DURATION_MS: '15000',
      TEST_METRICS_HOST_ENV: 'SC_SECONDCRON_METRICS_SERVICE_HOST',
      TEST_METRICS_DNS: `${FULLNAME}-metrics.${NS}.svc`,
      TEST_METRICS_PORT: '8080',
      TEST_METRICS_SECURE: 'true',
    });
    const off = await renderChart({ values: { tests: { enabled: false } } });
    assert.equal(ofKind(off, 'Pod').length, 0);
  });
});

describe('monitoring options: multiCluster, runbook URL base, alert thresholds and for', () => {
  type Rule = { alert?: string; expr: string; for?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  const rulesOf = async (values: Record<string, unknown>): Promise<Array<{ name: string; rules: Rule[] }>> =>
    (only(await renderChart({ values: { metrics: { prometheusRule: { enabled: true, ...values } } } }), 'PrometheusRule') as Manifest & { spec: { groups: Array<{ name: string; rules: Rule[] }> } }).spec.groups;

  test('multiCluster: every by/on of the rules keeps the cluster label; promtool test rules on two clusters\' series', async (t) => {
    const docs = await renderChart({ values: { multiCluster: { enabled: true }, metrics: { prometheusRule: { enabled: true } } } });
    const groups = (only(docs, 'PrometheusRule') as Manifest & { spec: { groups: Array<{ rules: Rule[] }> } }).spec.groups;
    const clauses = groups.flatMap((g) => g.rules).flatMap((r) => [...r.expr.matchAll(/\b(by|on)\s*\(([^)]*)\)/g)].map((m) => m[2] ?? ''));
    assert.ok(clauses.length >= 9);
    for (const c of clauses) assert.match(c, /^cluster, job, namespace/);
    const dir = mkdtempSync(join(tmpdir(), 'secondcron-multicluster-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'alerts-multicluster.yaml'), JSON.stringify({ groups }));
    writeFileSync(join(dir, 'alerts-multicluster.test.yaml'), readFileSync(join(REPO_ROOT, 'grafana', 'alerts-multicluster.test.yaml')));
    const res = await promtool(['test', 'rules', 'alerts-multicluster.test.yaml'], dir);
    assert.equal(res.code, 0, res.stdout + res.stderr);
    // The same tests fail on the rules without the option: they can tell the difference.
    writeFileSync(join(dir, 'alerts-multicluster.yaml'), JSON.stringify({ groups: await rulesOf({}) }));
    const without = await promtool(['test', 'rules', 'alerts-multicluster.test.yaml'], dir);
    assert.notEqual(without.code, 0, 'single-cluster rules pass the multi-cluster tests');
  });

  test('multiCluster: the dashboard gets a $cluster variable that every query and variable filters on', async () => {
    const docs = await renderChart({ values: { multiCluster: { enabled: true, label: 'k8s_cluster' }, grafanaDashboard: { enabled: true } } });
    const dashboard = JSON.parse(only<V1ConfigMap>(docs, 'ConfigMap').data?.['secondcron.json'] ?? '{}') as {
      templating: { list: Array<{ name: string; query?: unknown; multi?: boolean }> };
      panels: Array<{ targets?: Array<{ expr: string }>; panels?: Array<{ targets?: Array<{ expr: string }> }> }>;
    };
    const vars = dashboard.templating.list;
    assert.deepEqual(vars.slice(0, 3).map((v) => v.name), ['datasource', 'cluster', 'job']);
    assert.deepEqual([vars[1]?.query, vars[1]?.multi], [{ qryType: 1, query: 'label_values(secondcron_leader, k8s_cluster)', refId: 'PrometheusVariableQueryEditor-VariableQuery' }, false]);
    const exprs = dashboard.panels.flatMap((p) => [...(p.targets ?? []), ...(p.panels ?? []).flatMap((q) => q.targets ?? [])]).map((x) => x.expr);
    assert.ok(exprs.length > 30);
    const jobSelectors = exprs.join('\n').match(/job=~"\$job"/g)?.length ?? 0;
    assert.equal(exprs.join('\n').match(/\{k8s_cluster=~"\$cluster", job=~"\$job"/g)?.length, jobSelectors);
    for (const e of exprs) for (const m of e.matchAll(/\bby \(([^)]*)\)/g)) assert.match(m[1] ?? '', /^k8s_cluster, /, e);
    assert.ok(vars.filter((v) => !['datasource', 'cluster'].includes(v.name)).every((v) => JSON.stringify(v.query).includes('k8s_cluster=~\\"$cluster\\"')));
  });

  test('runbookUrlBase; per-alert threshold, for and severity; promtool accepts the result', async (t) => {
    const groups = await rulesOf({
      runbookUrlBase: 'https://wiki.example/ops/secondcron',
      alerts: { SecondCronTriggerLatencyHigh: { threshold: 1.5, for: '10m', severity: 'critical' }, SecondCronScheduleNextTimeInPast: { threshold: 300 } },
    });
    const rules = groups.flatMap((g) => g.rules);
    for (const r of rules) assert.equal(r.annotations?.runbook_url, `https://wiki.example/ops/secondcron#${(r.alert ?? '').toLowerCase()}`);
    const latency = rules.find((r) => r.alert === 'SecondCronTriggerLatencyHigh');
    assert.match(latency?.expr ?? '', /\) > 1\.5\n$/);
    assert.deepEqual([latency?.for, latency?.labels?.severity], ['10m', 'critical']);
    assert.match(rules.find((r) => r.alert === 'SecondCronScheduleNextTimeInPast')?.expr ?? '', /> 300\n/);
    const defaults = (await rulesOf({})).flatMap((g) => g.rules);
    assert.match(defaults.find((r) => r.alert === 'SecondCronTriggerLatencyHigh')?.expr ?? '', /\) > 0\.5\n$/);
    const dir = mkdtempSync(join(tmpdir(), 'secondcron-rules-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'rules.yaml'), JSON.stringify({ groups }));
    const res = await promtool(['check', 'rules', 'rules.yaml'], dir);
    assert.equal(res.code, 0, res.stdout + res.stderr);

    const unknown = await templateChart({ values: { metrics: { prometheusRule: { enabled: true, alerts: { SecondCronLate: { for: '1m' } } } } } });
    assert.match(unknown.stderr, /metrics.prometheusRule.alerts: no alert named SecondCronLate \(the alerts are /);
    const noThreshold = await templateChart({ values: { metrics: { prometheusRule: { enabled: true, alerts: { SecondCronNoLeader: { threshold: 2 } } } } } });
    assert.match(noThreshold.stderr, /alerts.SecondCronNoLeader.threshold: only SecondCronCreateErrors, SecondCronScheduleNextTimeInPast, SecondCronTriggerLatencyHigh have a threshold/);
  });
});

describe('an umbrella chart with condition: secondcron.enabled and global values', () => {
  test('enabled: the subchart renders with the parent\'s globals; disabled: nothing of it', async (t) => {
    const umbrella = await buildUmbrella({ crds: { enabled: false } });
    t.after(() => umbrella.remove());
    const render = async (args: string[]): Promise<Manifest[]> =>
      parseManifests(await helmOk(['template', 'platform', umbrella.dir, '--namespace', 'platform', ...args]));

    const on = await render([]);
    assert.ok(on.some((d) => `${d.kind}/${d.metadata?.name}` === UMBRELLA_OWN));
    const ours = on.filter((d) => `${d.kind}/${d.metadata?.name}` !== UMBRELLA_OWN);
    assert.equal(ours.length, on.length - 1);
    for (const d of ours) assert.equal(d.metadata?.labels?.['platform.example/suite'], 'ops', `${d.kind}/${d.metadata?.name}`);
    const pod = only<V1Deployment>(on, 'Deployment').spec?.template.spec;
    assert.equal(pod?.containers[0]?.image, 'mirror.example/ghcr.io/secondcron/secondcron:0.1.0');
    assert.deepEqual(plain(pod?.imagePullSecrets), [{ name: 'parent-pull' }]);
    assert.equal(pod?.priorityClassName, 'umbrella-high');

    const off = await render(['--set', 'secondcron.enabled=false']);
    assert.deepEqual(off.map((d) => `${d.kind}/${d.metadata?.name}`), [UMBRELLA_OWN]);
  });
});

describe('helm template, names that YAML reads as other types', () => {
  // Release and namespace names are DNS labels, and "on", "yes", "y", "true" are valid ones; helm
  // decodes manifests as YAML 1.1, where those words unquoted are booleans, and the install fails
  // with "cannot unmarshal bool into … metadata.labels". Everything taken from a name is quoted.
  // The YAML 1.1-only words are invisible to the YAML 1.2 parser used here, so for them the text is
  // searched for bare values; true/false are caught by the parsed types (the chart has real booleans).
  for (const [release, namespace] of [['on', 'yes'], ['y', 'n'], ['true', 'false']] as const) {
    test(`release "${release}" in namespace "${namespace}"`, async () => {
      const res = await templateChart({ release, namespace, values: { fullnameOverride: release, watchNamespaces: [namespace] } });
      assert.equal(res.code, 0, res.stderr);
      if (release !== 'true') {
        const bare = res.stdout.split('\n').filter((line) => new RegExp(`:\\s+(${release}|${namespace})\\s*$`).test(line));
        assert.deepEqual(bare, [], 'unquoted YAML 1.1 booleans');
      }
      const docs = parseManifests(res.stdout);
      for (const d of docs) {
        if (d.metadata?.namespace !== undefined) assert.equal(typeof d.metadata.namespace, 'string', `${d.kind} namespace`);
        assert.equal(typeof d.metadata?.name, 'string', `${d.kind} name`);
        for (const [k, v] of Object.entries(d.metadata?.labels ?? {})) assert.equal(typeof v, 'string', `${d.kind} label ${k}`);
      }
      assert.equal(only<V1Deployment>(docs, 'Deployment').metadata?.labels?.['app.kubernetes.io/instance'], release);
    });
  }
});

describe('bad values fail with a message naming the value', () => {
  const cases: Array<{ name: string; args: string[]; message: RegExp }> = [
    { name: 'replicaCount: -1 (schema minimum)', args: ['--set', 'replicaCount=-1'], message: /at '\/replicaCount': minimum: got -1, want 1/ },
    { name: 'replicaCount: "3" (schema type)', args: ['--set-string', 'replicaCount=3'], message: /at '\/replicaCount': got string, want integer/ },
    { name: 'leaderElection.leaseDuration: x (schema duration pattern)', args: ['--set', 'leaderElection.leaseDuration=x'], message: /at '\/leaderElection\/leaseDuration': 'x' does not match pattern/ },
    { name: 'leaderElection.retryPeriod: 0s (not positive)', args: ['--set', 'leaderElection.retryPeriod=0s'], message: /at '\/leaderElection\/retryPeriod': '0s' does not match pattern/ },
    { name: 'an unknown top-level key (strict schema)', args: ['--set', 'replicas=3'], message: /additional properties 'replicas' not allowed/ },
    { name: 'an unknown nested key', args: ['--set', 'leaderElection.leaseDurationSeconds=15'], message: /at '\/leaderElection': additional properties 'leaseDurationSeconds' not allowed/ },
    { name: 'logLevel: verbose', args: ['--set', 'logLevel=verbose'], message: /at '\/logLevel': value must be one of/ },
    { name: 'heapLimitMiB: 10 (schema minimum)', args: ['--set', 'heapLimitMiB=10'], message: /at '\/heapLimitMiB': minimum: got 10, want 64/ },
    { name: 'renewDeadline not below leaseDuration', args: ['--set', 'leaderElection.leaseDuration=10s'], message: /leaderElection.leaseDuration \(10s\) must be longer than leaderElection.renewDeadline \(10s\)/ },
    { name: 'renewDeadline not above 1.2 x retryPeriod', args: ['--set', 'leaderElection.retryPeriod=9s'], message: /renewDeadline \(10s\) must be longer than 1.2 x leaderElection.retryPeriod \(9s\)/ },
    { name: 'grace period shorter than shutdown timeout + 5 s', args: ['--set', 'shutdownTimeout=30s'], message: /terminationGracePeriodSeconds \(30\) must be at least shutdownTimeout \(30s\) \+ 5 s/ },
    // prometheus-operator's Duration pattern (the ServiceMonitor CRD would refuse these later, at apply).
    { name: 'serviceMonitor.interval: 30s1m (units out of order)', args: ['--set', 'metrics.serviceMonitor.interval=30s1m'], message: /at '\/metrics\/serviceMonitor\/interval': '30s1m' does not match pattern/ },
    { name: 'serviceMonitor.scrapeTimeout: 10 (no unit)', args: ['--set-string', 'metrics.serviceMonitor.scrapeTimeout=10'], message: /at '\/metrics\/serviceMonitor\/scrapeTimeout': '10' does not match pattern/ },
    { name: 'several replicas without leader election', args: ['--set', 'leaderElection.enabled=false'], message: /leaderElection.enabled=false with replicaCount=3/ },
    { name: 'strategy.type: Rolling', args: ['--set', 'strategy.type=Rolling'], message: /at '\/strategy\/type': value must be one of 'RollingUpdate', 'Recreate'/ },
    { name: 'strategy.rollingUpdate.maxSurge: 50 percent', args: ['--set', 'strategy.rollingUpdate.maxSurge=50 percent'], message: /at '\/strategy\/rollingUpdate\/maxSurge'/ },
    { name: 'an init container without a name', args: ['--set', 'extraInitContainers[0].image=busybox'], message: /at '\/extraInitContainers\/0': missing property 'name'/ },
    { name: 'connectionLimits.readHeaderTimeout longer than requestTimeout', args: ['--set', 'connectionLimits.readHeaderTimeout=2m'], message: /connectionLimits.readHeaderTimeout \(2m\) must not be longer than connectionLimits.requestTimeout \(64s\)/ },
    { name: 'connectionLimits.socketTimeout: 30 seconds', args: ['--set', 'connectionLimits.socketTimeout=30 seconds'], message: /at '\/connectionLimits\/socketTimeout': '30 seconds' does not match pattern/ },
    { name: 'metrics.maxConnections: 0 (schema minimum)', args: ['--set', 'metrics.maxConnections=0'], message: /at '\/metrics\/maxConnections': minimum: got 0, want 1/ },
    { name: 'health.maxConnections: "many" (schema type)', args: ['--set-string', 'health.maxConnections=many'], message: /at '\/health\/maxConnections': got string, want integer/ },
    { name: 'global.imagePullSecrets: [{}]', args: ['--set', 'global.imagePullSecrets[0].x=y'], message: /at '\/global\/imagePullSecrets\/0'/ },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const res = await templateChart({ args: c.args });
      assert.notEqual(res.code, 0, `helm template accepted ${c.args.join(' ')}`);
      assert.match(res.stderr, c.message);
    });
  }
});
