// The chart against a real API server: helm install (every object accepted, pods running on kwok
// nodes), RBAC proved sufficient by real operator processes using a token of the chart's
// ServiceAccount, proved exact by the API server's audit log of their requests (every verb sent is
// granted, every verb granted is sent) and minimal by `kubectl auth can-i`, helm upgrade with changed values
// (including the switch to per-namespace Roles), helm uninstall (the CRD and a user's
// SecondCronJob survive) and a reinstall that adopts the kept CRD.
//
// This file starts its own control plane: the chart installs the CRD, which must not exist yet,
// while the shared cluster's CRD is applied by other test files with kubectl.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { V1ClusterRole, V1CustomResourceDefinition, V1Deployment, V1Lease, V1NodeList, V1PodList, V1Role } from '@kubernetes/client-node';
import { Agent, request } from 'undici';

import { startCluster, type Cluster } from '../cluster/cluster.js';
import { OperatorProcess } from '../cluster/operator-process.js';
import { prometheusOperatorCrds } from '../cluster/prometheus-operator-crds.js';
import { eventually } from './helpers/eventually.js';
import { CHART_DIR, helm, helmOk, type Manifest, parseManifests, renderChart, valuesFile } from './helpers/helm.js';
import { withReleaseDiagnostics } from './helpers/helm-diagnostics.js';
import { GRANTED_WITHOUT_REQUEST, grantedAccess, usedAccess } from './helpers/audit-rbac.js';
import { type Access, canI, describeAccess, serviceAccountKubeconfig, serviceAccountUser } from './helpers/helm-rbac.js';
import { scjManifest } from './helpers/scj.js';
import { buildUmbrella, UMBRELLA_GLOBALS } from './helpers/umbrella.js';

const RELEASE = 'sc';
const RELEASE_NS = 'secondcron-system';
const USER_NS = 'team-a';
const OTHER_NS = 'team-b';
const SA = 'sc-secondcron';
const LEASE = 'secondcron-leader';
const SCJ = 'every-second';
/** A second SecondCronJob, deleted while the operators run: its finalizer makes them delete its Jobs. */
const DELETED_SCJ = 'deleted-while-running';
/** The operator's User-Agent (secondcron/<version> (<identity>)); the test's own kubectl calls as the ServiceAccount are not the operator's. */
const OPERATOR_AGENT = /^secondcron\//;
/**
 * Granted but sent only on paths a short test does not take; anything else granted must show up in
 * the audit log of the operators' requests.
 */
const GRANTED_FOR_RARE_PATHS: Record<string, string> = {
  ...GRANTED_WITHOUT_REQUEST,
  'get batch/jobs': "sent only when a create's answer was lost (a timeout, a reset connection): the Job is then read by name",
  'patch /events': "a repeated Event's count, written a minute after the Event was created",
};
// Short lease timings so leader election and failover take seconds (the chart's defaults are client-go's).
const FAST_LEASE = ['--lease-duration', '4s', '--renew-deadline', '3s', '--retry-period', '500ms', '--leader-election-namespace', RELEASE_NS];

let cluster: Cluster;
let work: string;

async function kubectlOk(args: string[], input?: string): Promise<string> {
  const res = await cluster.kubectl(args, { input });
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${res.code}): ${res.stderr.trim()}`);
  return res.stdout;
}

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse(await kubectlOk([...args, '-o', 'json'])) as T;
}

async function exists(args: string[]): Promise<boolean> {
  const res = await cluster.kubectl(['get', ...args, '-o', 'name']);
  if (res.code === 0) return true;
  if (/NotFound|not found/.test(res.stderr)) return false;
  throw new Error(`kubectl get ${args.join(' ')}: ${res.stderr}`);
}

function helmIn(args: string[]): Promise<string> {
  return helmOk(args, { kubeconfig: cluster.kubeconfigPath });
}

/** helm install/upgrade/uninstall --wait in the release namespace; a failure carries what the cluster shows. */
function helmWait(args: string[]): Promise<string> {
  return withReleaseDiagnostics(cluster, RELEASE_NS, () => helmIn(args));
}

async function leaseHolder(): Promise<string | undefined> {
  const res = await cluster.kubectl(['get', 'lease', LEASE, '-n', RELEASE_NS, '-o', 'json']);
  if (res.code !== 0) return undefined;
  return (JSON.parse(res.stdout) as V1Lease).spec?.holderIdentity || undefined;
}

async function jobCount(): Promise<number> {
  const list = await getJson<{ items: unknown[] }>(['get', 'jobs', '-n', USER_NS, '-l', `secondcron.io/secondcronjob=${SCJ}`]);
  return list.items.length;
}

/** Operator processes as the chart's ServiceAccount; every one must be disposed by the test. */
function saOperators(kubeconfig: string, count: number, extra: { namespaces?: string[]; prefix: string }): OperatorProcess[] {
  return Array.from({ length: count }, (_, i) => new OperatorProcess({
    kubeconfig,
    env: cluster.env,
    namespaces: extra.namespaces ?? [],
    identity: `${extra.prefix}-${i}`,
    args: FAST_LEASE,
  }));
}

/** Logs and metrics show no request the API server refused for lack of permission. */
async function assertNoForbidden(ops: OperatorProcess[]): Promise<void> {
  for (const op of ops) {
    const refused = op.logs().split('\n').filter((line) => /forbidden/i.test(line));
    assert.deepEqual(refused.slice(0, 5), [], `${op.identity} was refused ${refused.length} request(s)`);
    if (op.running) assert.doesNotMatch(await op.metrics(), /secondcron_api_requests_total\{[^}]*code="403"/, `${op.identity} counted a 403`);
  }
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'secondcron-helm-install-'));
  const t0 = performance.now();
  // Three nodes in zones a, b, a: room for one replica per node.
  // The audit log records every request of the chart's ServiceAccount (the operators below).
  cluster = await startCluster({ nodes: 3, auditUsers: [serviceAccountUser(RELEASE_NS, SA)] });
  process.stderr.write(`[helm-install] private control plane ready in ${Math.round(performance.now() - t0)} ms\n`);
  for (const ns of [USER_NS, OTHER_NS]) {
    await kubectlOk(['create', 'namespace', ns]);
    await kubectlOk(['wait', '--for=create', 'serviceaccount/default', '-n', ns, '--timeout=60s']);
  }
});

after(async () => {
  await cluster?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('helm install / upgrade / uninstall on a real API server', () => {
  test('bad values are refused by helm install with the schema message, and no release is left', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--set', 'replicaCount=-1'], /at '\/replicaCount': minimum: got -1, want 1/],
      [['--set', 'leaderElection.leaseDuration=x'], /at '\/leaderElection\/leaseDuration': 'x' does not match pattern/],
    ];
    for (const [args, message] of cases) {
      const res = await helm(['install', 'bad', CHART_DIR, '-n', RELEASE_NS, '--create-namespace', ...args], { kubeconfig: cluster.kubeconfigPath });
      assert.notEqual(res.code, 0, `helm install accepted ${args.join(' ')}`);
      assert.match(res.stderr, message);
    }
    const states = ['--deployed', '--failed', '--pending', '--superseded', '--uninstalling'];
    const releases = JSON.parse(await helmIn(['list', '--all-namespaces', ...states, '-o', 'json'])) as Array<{ name: string }>;
    assert.deepEqual(releases.map((r) => r.name), []);
    // Helm keeps release records in Secrets labelled owner=helm: none was written.
    assert.equal((await kubectlOk(['get', 'secrets', '--all-namespaces', '-l', 'owner=helm', '-o', 'name'])).trim(), '');
    assert.equal(await exists(['crd', 'secondcronjobs.secondcron.io']), false, 'a refused install created the CRD');
  });

  test('every rendered object passes the API server strict field validation (server-side dry run)', async () => {
    // Strict field validation rejects unknown or duplicate fields that a plain apply would drop
    // with a warning, so a misspelt key in a template fails here.
    await kubectlOk(['create', 'namespace', 'strict-check']);
    try {
      for (const values of [{}, { watchNamespaces: [USER_NS, OTHER_NS], grafanaDashboard: { enabled: true }, podDisruptionBudget: { maxUnavailable: '50%' } }]) {
        const file = valuesFile(values);
        try {
          // Not the helm test pod: admission looks up its ServiceAccount, which a dry run does not create
          // (the e2e runs it against the real release).
          const manifest = await helmIn(['template', 'strict', CHART_DIR, '-n', 'strict-check', '-f', file, '--skip-tests']);
          const count = parseManifests(manifest).length;
          const out = await kubectlOk(['create', '--dry-run=server', '--validate=strict', '-f', '-', '-o', 'name'], manifest);
          assert.equal(out.trim().split('\n').length, count, out);
        } finally {
          rmSync(join(file, '..'), { recursive: true, force: true });
        }
      }
    } finally {
      await kubectlOk(['delete', 'namespace', 'strict-check', '--wait=false']);
    }
  });

  test('helm install: every object is accepted, 3 replicas run on kwok nodes, spread over nodes and zones', async (t) => {
    const t0 = performance.now();
    const out = await helmWait(['install', RELEASE, CHART_DIR, '-n', RELEASE_NS, '--create-namespace', '--wait', '--timeout', '3m']);
    t.diagnostic(`helm install --wait: ${Math.round(performance.now() - t0)} ms`);
    // NOTES.txt: how to find the leader of this release.
    assert.ok(out.includes(`kubectl -n ${RELEASE_NS} get lease ${LEASE}`), out);

    const status = JSON.parse(await helmIn(['status', RELEASE, '-n', RELEASE_NS, '-o', 'json'])) as { info: { status: string }; version: number };
    assert.equal(status.info.status, 'deployed');
    assert.equal(status.version, 1);

    // Every object of the release manifest exists in the API, as rendered.
    const manifest = await helmIn(['get', 'manifest', RELEASE, '-n', RELEASE_NS]);
    const rendered = parseManifests(manifest);
    const got = JSON.parse(await kubectlOk(['get', '-f', '-', '-o', 'json'], manifest)) as { items: Manifest[] };
    const key = (o: Manifest): string => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
    assert.deepEqual(got.items.map(key).sort(), rendered.map(key).sort());
    assert.equal(rendered.length, 14); // 11, and secure metrics' two ClusterRoles and one binding
    for (const o of got.items) assert.equal(o.metadata?.annotations?.['meta.helm.sh/release-name'], RELEASE, key(o));

    const crd = await getJson<V1CustomResourceDefinition>(['get', 'crd', 'secondcronjobs.secondcron.io']);
    assert.equal(crd.metadata?.annotations?.['helm.sh/resource-policy'], 'keep');
    assert.ok(crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));

    const dep = await getJson<V1Deployment>(['get', 'deployment', SA, '-n', RELEASE_NS]);
    assert.equal(dep.status?.readyReplicas, 3);
    const pods = await getJson<V1PodList>(['get', 'pods', '-n', RELEASE_NS, '-l', `app.kubernetes.io/instance=${RELEASE}`]);
    assert.equal(pods.items.length, 3);
    for (const p of pods.items) {
      assert.equal(p.status?.phase, 'Running', p.metadata?.name);
      // Admission kept the restricted settings (nothing mutated them away).
      assert.equal(p.spec?.containers[0]?.securityContext?.readOnlyRootFilesystem, true);
      assert.ok(p.spec?.volumes?.some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken)), 'token volume mounted');
    }
    const nodes = await getJson<V1NodeList>(['get', 'nodes']);
    const zoneOf = new Map(nodes.items.map((n) => [n.metadata?.name, n.metadata?.labels?.['topology.kubernetes.io/zone']]));
    const used = pods.items.map((p) => p.spec?.nodeName);
    assert.equal(new Set(used).size, 3, `one replica per node, got ${used.join(', ')}`);
    assert.equal(new Set(used.map((n) => zoneOf.get(n))).size, 2, 'both zones used');
    // Pod Security: the pods meet "restricted" (server-side dry run of a namespace label).
    const psa = await cluster.kubectl(['label', '--dry-run=server', '--overwrite', 'namespace', RELEASE_NS, 'pod-security.kubernetes.io/enforce=restricted']);
    assert.equal(psa.code, 0, psa.stderr);
    assert.doesNotMatch(psa.stderr, /violate/i, psa.stderr);
  });

  test('RBAC is sufficient: 3 operators with the ServiceAccount token elect one leader and create Jobs', async (t) => {
    const kubeconfig = await serviceAccountKubeconfig(cluster, RELEASE_NS, SA, work);
    const whoami = JSON.parse((await cluster.kubectl(['--kubeconfig', kubeconfig, 'auth', 'whoami', '-o', 'json'])).stdout) as { status: { userInfo: { username: string } } };
    assert.equal(whoami.status.userInfo.username, serviceAccountUser(RELEASE_NS, SA));

    const ops = saOperators(kubeconfig, 3, { prefix: 'op' });
    t.after(async () => {
      await Promise.all(ops.map((op) => op.dispose()));
    });
    const t0 = performance.now();
    await Promise.all(ops.map((op) => op.start()));
    await Promise.all(ops.map((op) => op.ready(60_000)));
    t.diagnostic(`3 operators ready: ${Math.round(performance.now() - t0)} ms`);

    const ids = ops.map((op) => op.identity);
    const leader = await eventually('one of the operators holds the Lease', async () => {
      const holder = await leaseHolder();
      return holder && ids.includes(holder) ? holder : undefined;
    });
    // Exactly one replica believes it leads (secondcron_leader is 1 on the leader only).
    await eventually('secondcron_leader = 1 on the holder only', async () => {
      const flags = await Promise.all(ops.map((op) => op.metric('secondcron_leader')));
      return flags.every((f, i) => f === (ids[i] === leader ? 1 : 0)) ? true : undefined;
    });
    t.diagnostic(`leader ${leader}: ${Math.round(performance.now() - t0)} ms after start`);

    await kubectlOk(['apply', '-f', '-'], JSON.stringify(scjManifest(USER_NS, SCJ, { intervalSeconds: 1 })));
    await eventually('Jobs created every second', async () => ((await jobCount()) >= 3 ? true : undefined), { timeoutMs: 30_000 });
    const scj = await getJson<{ metadata: { finalizers?: string[] } }>(['get', 'secondcronjob', SCJ, '-n', USER_NS]);
    assert.ok((scj.metadata.finalizers ?? []).length > 0, 'finalizer added (patch)');
    // The status of a 1 s schedule is written every ~4–5 s (DESIGN §2 lets it trail by up to 5 s).
    await eventually(
      'status written (secondcronjobs/status)',
      async () => ((await getJson<{ status?: { lastScheduleTime?: string } }>(['get', 'secondcronjob', SCJ, '-n', USER_NS])).status?.lastScheduleTime ? true : undefined),
      { timeoutMs: 15_000 },
    );
    const evs = await getJson<{ items: Array<{ reason: string }> }>(['get', 'events', '-n', USER_NS, '--field-selector', `involvedObject.name=${SCJ}`]);
    assert.ok(evs.items.some((e) => e.reason === 'SuccessfulCreate'), 'Events recorded');

    // The leader releases the Lease on SIGTERM (update), a follower takes over and keeps scheduling.
    const leaderOp = ops.find((op) => op.identity === leader) as OperatorProcess;
    await leaderOp.stop();
    const next = await eventually('a follower takes the Lease', async () => {
      const holder = await leaseHolder();
      return holder && holder !== leader && ids.includes(holder) ? holder : undefined;
    });
    const before = await jobCount();
    await eventually(`the new leader ${next} creates Jobs`, async () => ((await jobCount()) > before + 1 ? true : undefined), { timeoutMs: 30_000 });

    // A SecondCronJob deleted while it has Jobs: the finalizer deletes them, then lets it go.
    await kubectlOk(['apply', '-f', '-'], JSON.stringify(scjManifest(USER_NS, DELETED_SCJ, { intervalSeconds: 1 })));
    const ownedJobs = async (): Promise<number> => (await getJson<{ items: unknown[] }>(['get', 'jobs', '-n', USER_NS, '-l', `secondcron.io/secondcronjob=${DELETED_SCJ}`])).items.length;
    await eventually(`Jobs of ${DELETED_SCJ}`, async () => ((await ownedJobs()) > 0 ? true : undefined), { timeoutMs: 30_000 });
    await kubectlOk(['delete', 'secondcronjob', DELETED_SCJ, '-n', USER_NS, '--timeout=60s']);
    await eventually(`the Jobs of ${DELETED_SCJ} deleted`, async () => ((await ownedJobs()) === 0 ? true : undefined), { timeoutMs: 30_000 });
    await assertNoForbidden(ops);
  });

  test('secure metrics as the ServiceAccount: only GET /metrics is reviewed (one TokenReview, one SubjectAccessReview)', async (t) => {
    const kubeconfig = await serviceAccountKubeconfig(cluster, RELEASE_NS, SA, work);
    // An operator serving /metrics securely (it leads: the test before stopped its operators).
    const op = new OperatorProcess({ kubeconfig, env: cluster.env, namespaces: [], identity: 'secure-metrics', metricsSecure: true, args: FAST_LEASE });
    const agent = new Agent({ connect: { rejectUnauthorized: false } });
    t.after(async () => {
      await agent.close();
      await op.dispose();
    });
    await op.start();
    await op.ready(60_000);
    // Any valid token: the default ServiceAccount of a user namespace, which may not read /metrics.
    const token = (await kubectlOk(['create', 'token', 'default', '-n', USER_NS, '--duration=10m'])).trim();
    const status = async (path: string): Promise<number> => {
      const res = await request(`https://127.0.0.1:${op.metricsPort}${path}`, { dispatcher: agent, headers: { authorization: `Bearer ${token}` } });
      await res.body.dump();
      return res.statusCode;
    };
    const reviews = async (): Promise<number> =>
      (await usedAccess(cluster.auditLogPath as string, serviceAccountUser(RELEASE_NS, SA), OPERATOR_AGENT)).filter((u) => /^create authentication.k8s.io\/tokenreviews$|^create authorization.k8s.io\/subjectaccessreviews$/.test(u.key)).length;
    const reviewsBefore = await reviews();
    for (const path of ['/METRICS', '/metrics/', '/random']) assert.equal(await status(path), 404, path);
    assert.equal(await reviews(), reviewsBefore, 'a path not served was reviewed');
    assert.equal(await status('/metrics'), 403, 'a token the API server accepts, of a user without get /metrics');
    assert.equal(await status('/metrics'), 403, 'the same, from the cache');
    await eventually('one TokenReview and one SubjectAccessReview in the audit log', async () => ((await reviews()) === reviewsBefore + 2 ? true : undefined), { timeoutMs: 5_000 });
  });

  test('RBAC is exact: every verb the operators sent is granted, every verb granted was sent (API server audit log)', async (t) => {
    const names = new Set([SA, `${SA}-leader-election`, `${SA}-metrics-auth`]);
    const roles = (await renderChart({ release: RELEASE, namespace: RELEASE_NS })).filter(
      (d) => (d.kind === 'ClusterRole' || d.kind === 'Role') && names.has(d.metadata?.name ?? ''),
    ) as Array<V1ClusterRole | V1Role>;
    assert.equal(roles.length, names.size, 'the roles bound to the ServiceAccount');
    const granted = grantedAccess(roles.flatMap((r) => r.rules ?? []));
    const used = await usedAccess(cluster.auditLogPath as string, serviceAccountUser(RELEASE_NS, SA), OPERATOR_AGENT);
    assert.ok(used.length > 50, `only ${used.length} requests of the operators in the audit log`);
    const usedKeys = new Set(used.map((u) => u.key));
    t.diagnostic(`${used.length} requests; sent: ${[...usedKeys].sort().join(', ')}`);
    assert.deepEqual([...new Set(used.filter((u) => u.code === 403).map((u) => u.key))], [], 'refused for lack of permission');
    assert.deepEqual([...usedKeys].filter((k) => !granted.has(k)).sort(), [], 'sent but not granted');
    const unused = [...granted].filter((k) => !usedKeys.has(k));
    assert.deepEqual(unused.filter((k) => !(k in GRANTED_FOR_RARE_PATHS)).sort(), [], 'granted but never sent');
    for (const k of unused) t.diagnostic(`granted, not sent here: ${k} (${GRANTED_FOR_RARE_PATHS[k]})`);
    // The exceptions are real grants, not stale names.
    for (const k of Object.keys(GRANTED_FOR_RARE_PATHS)) assert.ok(granted.has(k), `${k} is not granted any more: drop it from the exceptions`);
  });

  test('RBAC is minimal: kubectl auth can-i as the ServiceAccount', async () => {
    const user = serviceAccountUser(RELEASE_NS, SA);
    const allowed: Access[] = [
      ...['list', 'watch', 'patch'].map((verb) => ({ verb, resource: 'secondcronjobs.secondcron.io' })),
      { verb: 'patch', resource: 'secondcronjobs.secondcron.io', subresource: 'status', namespace: USER_NS },
      { verb: 'update', resource: 'secondcronjobs.secondcron.io', subresource: 'finalizers', namespace: USER_NS },
      ...['get', 'list', 'watch', 'create', 'delete'].map((verb) => ({ verb, resource: 'jobs.batch' })),
      { verb: 'create', resource: 'events', namespace: USER_NS },
      { verb: 'patch', resource: 'events', namespace: USER_NS },
      { verb: 'create', resource: 'leases.coordination.k8s.io', namespace: RELEASE_NS },
      ...['get', 'list', 'watch', 'update'].map((verb) => ({ verb, resource: 'leases.coordination.k8s.io', namespace: RELEASE_NS, name: LEASE })),
      // metrics.secure (the default): who is scraping, and may they.
      { verb: 'create', resource: 'tokenreviews.authentication.k8s.io' },
      { verb: 'create', resource: 'subjectaccessreviews.authorization.k8s.io' },
    ];
    const denied: Access[] = [
      { verb: 'get', resource: 'secrets', namespace: RELEASE_NS },
      { verb: 'get', resource: 'secrets', namespace: USER_NS },
      { verb: 'list', resource: 'secrets' },
      { verb: 'get', resource: 'pods', namespace: USER_NS },
      { verb: 'create', resource: 'pods', subresource: 'exec', namespace: USER_NS },
      { verb: 'create', resource: 'pods', namespace: USER_NS },
      { verb: 'get', resource: 'leases.coordination.k8s.io', namespace: USER_NS, name: LEASE },
      { verb: 'get', resource: 'leases.coordination.k8s.io', namespace: 'kube-system', name: 'kube-controller-manager' },
      { verb: 'create', resource: 'leases.coordination.k8s.io', namespace: USER_NS },
      { verb: 'list', resource: 'leases.coordination.k8s.io' },
      { verb: 'list', resource: 'leases.coordination.k8s.io', namespace: RELEASE_NS },
      { verb: 'watch', resource: 'leases.coordination.k8s.io', namespace: RELEASE_NS, name: 'some-other-lease' },
      { verb: 'get', resource: 'leases.coordination.k8s.io', namespace: RELEASE_NS, name: 'some-other-lease' },
      { verb: 'delete', resource: 'leases.coordination.k8s.io', namespace: RELEASE_NS, name: LEASE },
      { verb: 'create', resource: 'customresourcedefinitions.apiextensions.k8s.io' },
      { verb: 'delete', resource: 'customresourcedefinitions.apiextensions.k8s.io' },
      { verb: 'update', resource: 'customresourcedefinitions.apiextensions.k8s.io' },
      { verb: 'create', resource: 'secondcronjobs.secondcron.io', namespace: USER_NS },
      { verb: 'delete', resource: 'secondcronjobs.secondcron.io', namespace: USER_NS },
      // Never sent (the audit log test above): finalizers and status are merge/JSON patches.
      { verb: 'get', resource: 'secondcronjobs.secondcron.io', namespace: USER_NS },
      { verb: 'update', resource: 'secondcronjobs.secondcron.io', namespace: USER_NS },
      { verb: 'get', resource: 'secondcronjobs.secondcron.io', subresource: 'status', namespace: USER_NS },
      { verb: 'update', resource: 'secondcronjobs.secondcron.io', subresource: 'status', namespace: USER_NS },
      { verb: 'patch', resource: 'jobs.batch', namespace: USER_NS },
      { verb: 'update', resource: 'jobs.batch', subresource: 'status', namespace: USER_NS },
      { verb: 'get', resource: 'configmaps', namespace: RELEASE_NS },
      { verb: 'create', resource: 'serviceaccounts', subresource: 'token', namespace: RELEASE_NS },
      { verb: 'create', resource: 'clusterrolebindings' },
      { verb: 'escalate', resource: 'clusterroles' },
      { verb: 'impersonate', resource: 'users' },
      { verb: 'create', resource: 'deployments.apps', namespace: RELEASE_NS },
    ];
    const wrong: string[] = [];
    for (const a of allowed) if (!(await canI(cluster, user, a))) wrong.push(`denied but needed: ${describeAccess(a)}`);
    for (const a of denied) if (await canI(cluster, user, a)) wrong.push(`allowed but not needed: ${describeAccess(a)}`);
    assert.deepEqual(wrong, []);
  });

  test('helm upgrade with changed values: per-namespace Roles, fewer replicas, new lease timings, monitoring objects', async (t) => {
    // The prometheus-operator CRDs as released (their real OpenAPI schemas validate the chart's objects).
    for (const file of await prometheusOperatorCrds()) await kubectlOk(['apply', '--server-side', '-f', file]);
    for (const plural of ['servicemonitors', 'podmonitors', 'prometheusrules']) {
      await kubectlOk(['wait', '--for=condition=established', `crd/${plural}.monitoring.coreos.com`, '--timeout=30s']);
    }
    // Every monitoring knob at once (HTTPS with a CA Secret, relabelings, rule edits) must pass the
    // real schemas too: a server-side dry run of what the chart renders for them.
    const monitoring = (
      await renderChart({
        release: RELEASE,
        namespace: RELEASE_NS,
        values: {
          metrics: {
            secure: true,
            certSecret: 'metrics-tls',
            // Prometheus' own ServiceAccount token (bearerTokenFile), the default: valid for the real CRD too.
            readerSubjects: [{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }],
            serviceMonitor: {
              enabled: true,
              interval: '1m30s',
              scrapeTimeout: '20s',
              annotations: { note: 'x' },
              relabelings: [{ action: 'replace', sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' }],
              metricRelabelings: [{ action: 'drop', sourceLabels: ['__name__'], regex: 'nodejs_gc_.*' }],
            },
            prometheusRule: {
              enabled: true,
              disabled: { SecondCronReplicaDown: true },
              alertLabels: { team: 'platform' },
              additionalRules: [{ record: 'secondcron:jobs_created:rate5m', expr: 'sum(rate(secondcron_jobs_created_total[5m]))' }],
            },
          },
        },
      })
    ).filter((d) => d.kind === 'ServiceMonitor' || d.kind === 'PrometheusRule');
    assert.equal(monitoring.length, 2);
    for (const doc of monitoring) await kubectlOk(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(doc));
    const bad = { ...monitoring.find((d) => d.kind === 'ServiceMonitor'), spec: { endpoints: [{ port: 'metrics', interval: '30s1m' }], selector: {} } };
    const refused = await cluster.kubectl(['apply', '--dry-run=server', '-f', '-'], { input: JSON.stringify(bad) });
    assert.notEqual(refused.code, 0, 'the CRD refuses an interval the chart schema refuses too');
    assert.match(refused.stderr, /interval/);
    // The PodMonitor alternative, with the same knobs, passes its real schema too.
    const podMonitor = (
      await renderChart({
        release: RELEASE,
        namespace: RELEASE_NS,
        values: {
          metrics: {
            certSecret: 'metrics-tls',
            podMonitor: { enabled: true },
            serviceMonitor: { scraperTokenSecret: true, interval: '1m30s', scrapeTimeout: '20s', relabelings: [{ action: 'replace', sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' }] },
          },
        },
      })
    ).filter((d) => d.kind === 'PodMonitor' || d.kind === 'ServiceMonitor');
    assert.deepEqual(podMonitor.map((d) => d.kind), ['PodMonitor']);
    await kubectlOk(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(podMonitor[0]));
    const values = valuesFile({
      replicaCount: 2,
      watchNamespaces: [USER_NS],
      leaderElection: { leaseDuration: '20s', renewDeadline: '12s' },
      logLevel: 'debug',
      podDisruptionBudget: { maxUnavailable: 1 },
      metrics: { serviceMonitor: { enabled: true, scraperTokenSecret: true }, prometheusRule: { enabled: true } },
      grafanaDashboard: { enabled: true },
    });
    const t0 = performance.now();
    try {
      await helmWait(['upgrade', RELEASE, CHART_DIR, '-n', RELEASE_NS, '-f', values, '--wait', '--timeout', '3m']);
    } finally {
      rmSync(join(values, '..'), { recursive: true, force: true });
    }
    t.diagnostic(`helm upgrade --wait: ${Math.round(performance.now() - t0)} ms`);
    const status = JSON.parse(await helmIn(['status', RELEASE, '-n', RELEASE_NS, '-o', 'json'])) as { info: { status: string }; version: number };
    assert.deepEqual([status.info.status, status.version], ['deployed', 2]);

    const dep = await getJson<V1Deployment>(['get', 'deployment', SA, '-n', RELEASE_NS]);
    assert.equal(dep.spec?.replicas, 2);
    assert.equal(dep.status?.readyReplicas, 2);
    const env = Object.fromEntries((dep.spec?.template.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    assert.equal(env.SECONDCRON_NAMESPACES, USER_NS);
    assert.equal(env.SECONDCRON_LEASE_DURATION, '20s');
    assert.equal(env.SECONDCRON_RENEW_DEADLINE, '12s');
    assert.equal(env.SECONDCRON_LOG_LEVEL, 'debug');
    const pdb = await getJson<{ spec: Record<string, unknown> }>(['get', 'pdb', SA, '-n', RELEASE_NS]);
    assert.deepEqual([pdb.spec.maxUnavailable, pdb.spec.minAvailable], [1, undefined]);

    // Cluster-wide access is gone; the operator's rules now live in a Role in the watched namespace.
    assert.equal(await exists(['clusterrole', SA]), false);
    assert.equal(await exists(['clusterrolebinding', SA]), false);
    assert.equal(await exists(['role', SA, '-n', USER_NS]), true);
    for (const kind of ['servicemonitor', 'prometheusrule']) assert.equal(await exists([kind, SA, '-n', RELEASE_NS]), true, kind);
    assert.equal(await exists(['configmap', `${SA}-dashboard`, '-n', RELEASE_NS]), true);
    // The ServiceMonitor's credentials (metrics.secure, the default): the token controller filled in
    // the scraper's Secret, and that token may get /metrics — tried on the API server's own
    // /metrics, which the same non-resource rule guards.
    const scraperToken = await eventually('the scraper token Secret filled in', async () => {
      const secret = await getJson<{ data?: { token?: string } }>(['get', 'secret', `${SA}-metrics-scraper`, '-n', RELEASE_NS]);
      return secret.data?.token ? Buffer.from(secret.data.token, 'base64').toString('utf8') : undefined;
    });
    const scraped = await cluster.kubectl(['--token', scraperToken, 'get', '--raw', '/metrics']);
    assert.equal(scraped.code, 0, scraped.stderr);
    assert.match(scraped.stdout, /^apiserver_request_total\{/m);
    const user = serviceAccountUser(RELEASE_NS, SA);
    assert.equal(await canI(cluster, user, { verb: 'list', resource: 'secondcronjobs.secondcron.io' }), false, 'cluster-wide list');
    assert.equal(await canI(cluster, user, { verb: 'create', resource: 'jobs.batch', namespace: OTHER_NS }), false, 'jobs elsewhere');
    assert.equal(await canI(cluster, user, { verb: 'create', resource: 'jobs.batch', namespace: USER_NS }), true, 'jobs in the watched namespace');

    // …and they suffice: an operator limited to that namespace, as the ServiceAccount, schedules.
    const kubeconfig = await serviceAccountKubeconfig(cluster, RELEASE_NS, SA, work);
    const ops = saOperators(kubeconfig, 1, { prefix: 'ns-op', namespaces: [USER_NS] });
    t.after(async () => {
      await Promise.all(ops.map((op) => op.dispose()));
    });
    const op = ops[0] as OperatorProcess;
    await op.start();
    await op.ready(60_000);
    await eventually('the namespaced operator leads', async () => ((await leaseHolder()) === op.identity ? true : undefined), { timeoutMs: 30_000 });
    const before = await jobCount();
    await eventually('the namespaced operator creates Jobs', async () => ((await jobCount()) > before + 1 ? true : undefined), { timeoutMs: 30_000 });
    await assertNoForbidden(ops);
  });

  test('helm uninstall keeps the CRD and the SecondCronJob; a reinstall adopts the kept CRD', async (t) => {
    const t0 = performance.now();
    await helmWait(['uninstall', RELEASE, '-n', RELEASE_NS, '--wait', '--timeout', '2m']);
    t.diagnostic(`helm uninstall --wait: ${Math.round(performance.now() - t0)} ms`);

    assert.equal(await exists(['crd', 'secondcronjobs.secondcron.io']), true, 'CRD kept');
    assert.equal(await exists(['secondcronjob', SCJ, '-n', USER_NS]), true, 'SecondCronJob kept');
    for (const args of [
      ['deployment', SA, '-n', RELEASE_NS],
      ['serviceaccount', SA, '-n', RELEASE_NS],
      ['role', `${SA}-leader-election`, '-n', RELEASE_NS],
      ['role', SA, '-n', USER_NS],
      ['clusterrole', `${SA}-view`],
      ['service', `${SA}-metrics`, '-n', RELEASE_NS],
      ['pdb', SA, '-n', RELEASE_NS],
    ]) {
      assert.equal(await exists(args), false, `${args.join(' ')} removed`);
    }

    // The kept CRD still carries this release's ownership annotations, so the same release can
    // be installed again without --take-ownership.
    await helmWait(['install', RELEASE, CHART_DIR, '-n', RELEASE_NS, '--wait', '--timeout', '3m']);
    assert.equal(await exists(['secondcronjob', SCJ, '-n', USER_NS]), true);
    await helmWait(['uninstall', RELEASE, '-n', RELEASE_NS, '--wait', '--timeout', '2m']);
    assert.equal(await exists(['crd', 'secondcronjobs.secondcron.io']), true);
  });

  test('an umbrella chart (condition: secondcron.enabled, global values) installs; the pods carry the globals', async () => {
    const ns = 'platform';
    // The CRD is still here (kept above), owned by nobody now: the parent leaves it alone.
    const umbrella = await buildUmbrella({ crds: { enabled: false }, replicaCount: 1, leaderElection: { enabled: false } });
    try {
      await kubectlOk(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: UMBRELLA_GLOBALS.priorityClassName }, value: 1000 }));
      await withReleaseDiagnostics(cluster, ns, () => helmIn(['install', 'platform', umbrella.dir, '-n', ns, '--create-namespace', '--wait', '--timeout', '3m']));
      const pods = await getJson<V1PodList>(['get', 'pods', '-n', ns, '-l', 'app.kubernetes.io/name=secondcron']);
      assert.equal(pods.items.length, 1);
      const pod = pods.items[0];
      // Admission resolved the PriorityClass: the API server saw the global value.
      assert.deepEqual([pod?.spec?.priorityClassName, pod?.spec?.priority], [UMBRELLA_GLOBALS.priorityClassName, 1000]);
      assert.deepEqual(pod?.spec?.imagePullSecrets, [{ name: 'parent-pull' }]);
      assert.equal(pod?.spec?.containers[0]?.image, 'mirror.example/ghcr.io/secondcron/secondcron:0.1.0');
      assert.equal(pod?.metadata?.labels?.['platform.example/suite'], 'ops');
      assert.equal(await exists(['configmap', 'platform-settings', '-n', ns]), true, 'the parent\'s own object');
      await helmIn(['upgrade', 'platform', umbrella.dir, '-n', ns, '--reset-then-reuse-values', '--set', 'secondcron.enabled=false', '--wait', '--timeout', '2m']);
      assert.equal(await exists(['deployment', 'platform-secondcron', '-n', ns]), false, 'the condition removed the subchart');
      assert.equal(await exists(['configmap', 'platform-settings', '-n', ns]), true);
    } finally {
      await helm(['uninstall', 'platform', '-n', ns, '--wait', '--timeout', '2m'], { kubeconfig: cluster.kubeconfigPath });
      await cluster.kubectl(['delete', 'priorityclass', UMBRELLA_GLOBALS.priorityClassName, '--ignore-not-found']);
      umbrella.remove();
    }
  });
});
