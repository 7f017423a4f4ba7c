// In-cluster mode as in a pod: the service-account token, CA and namespace mounted where the kubelet
// mounts them, KUBERNETES_SERVICE_HOST/PORT pointing at the API server, node as PID 1. The token is
// a real bound service-account token (TokenRequest API, bound to a Secret). Mid-run the token is
// rotated the way the kubelet rotates it (a new timestamped directory, the `..data` symlink renamed
// over the old one) and the old token is revoked at once (its Secret deleted). No 1 s slot may be lost.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';

import { type TestNamespace, kubectl, kubectlOk, testEnv, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { testOperator } from './helpers/operator.js';
import { podLauncher } from './helpers/pod-sandbox.js';
import { applyScj, listJobs } from './helpers/scj.js';
import { installCrd } from '../cluster/crd.js';

const SA = 'secondcron';

/** A token for the service account, valid only while Secret `secret` exists. */
async function boundToken(namespace: string, secret: string): Promise<string> {
  await kubectlOk(['create', 'secret', 'generic', secret, '-n', namespace]);
  return (await kubectlOk(['create', 'token', SA, '-n', namespace, '--bound-object-kind', 'Secret', '--bound-object-name', secret, '--duration', '1h'])).trim();
}

/** The kubelet's projected-volume layout: files are links into `..data`, itself a link to a timestamped directory. */
class ProjectedVolume {
  private generation = 0;

  constructor(
    readonly dir: string,
    private readonly files: Record<string, string>,
  ) {
    this.write(files);
    for (const name of Object.keys(files)) symlinkSync(join('..data', name), join(dir, name));
  }

  /** A new timestamped directory, then `..data` switched to it with one rename (atomic). */
  write(changes: Record<string, string>): void {
    Object.assign(this.files, changes);
    const next = `..${new Date().toISOString().replace(/[-:.]/g, '_')}.${++this.generation}`;
    mkdirSync(join(this.dir, next));
    for (const [name, content] of Object.entries(this.files)) writeFileSync(join(this.dir, next, name), content);
    symlinkSync(next, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
  }
}

async function statusFor(server: string, caPem: string, token: string, namespace: string): Promise<number> {
  const { Agent, request } = await import('undici');
  const dispatcher = new Agent({ connect: { ca: caPem } });
  try {
    const res = await request(`${server}/api/v1/namespaces/${namespace}/configmaps`, { headers: { authorization: `Bearer ${token}` }, dispatcher });
    await res.body.dump();
    return res.statusCode;
  } finally {
    await dispatcher.close();
  }
}

test('in-cluster: a kubelet-style token rotation with the old token revoked at once loses no slot', { timeout: 180_000 }, async (t) => {
  const ns: TestNamespace = await uniqueNamespace('in-cluster');
  t.after(() => ns.cleanup());
  await installCrd(kubectl);
  await kubectlOk(['create', 'serviceaccount', SA, '-n', ns.name]);
  // Everything inside the namespace (the operator is scoped to it); removed with the namespace.
  await kubectlOk(['create', 'rolebinding', 'secondcron', '--clusterrole=cluster-admin', `--serviceaccount=${ns.name}:${SA}`, '-n', ns.name]);

  const kubeconfig = JSON.parse(await kubectlOk(['config', 'view', '--raw', '-o', 'json'])) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[] };
  const cluster = kubeconfig.clusters[0]?.cluster;
  assert.ok(cluster, 'the test kubeconfig names the cluster');
  const server = new URL(cluster.server);
  const caPem = Buffer.from(cluster['certificate-authority-data'], 'base64').toString();

  const dir = mkdtempSync(join(tmpdir(), 'secondcron-sa-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = await boundToken(ns.name, 'token-1');
  const volume = new ProjectedVolume(dir, { token: first, 'ca.crt': caPem, namespace: ns.name });

  const { KUBECONFIG: _unused, POD_NAMESPACE: _none, ...env } = testEnv();
  const op = testOperator({
    kubeconfig: undefined,
    namespaces: [ns.name],
    identity: 'in-cluster',
    launcher: podLauncher({ serviceAccountDir: dir }),
    env: { ...env, KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
  });
  t.after(() => op.dispose());
  await op.start();
  await op.ready(60_000);
  assert.match(op.logs(), /in-cluster service account/);
  // No POD_NAMESPACE: the Lease lives in the namespace the service-account mount names.
  await eventually('Lease in the service account namespace', async () => ((await kubectlOk(['get', 'lease', '-n', ns.name, '-o', 'name'])).includes('/secondcron-leader') ? true : undefined), { timeoutMs: 30_000 });

  await applyScj(ns.name, 'every-second', { intervalSeconds: 1 });
  await eventually('Jobs every second', async () => ((await listJobs(ns.name, 'every-second')).length >= 3 ? true : undefined), { timeoutMs: 30_000 });
  // The API server names the field manager of a write after the User-Agent's product part.
  const job = JSON.parse(await kubectlOk(['get', 'jobs', '-n', ns.name, '-o', 'json', '--show-managed-fields'])) as { items: { metadata: { managedFields?: { manager: string; subresource?: string }[] } }[] };
  const creators = (job.items[0]?.metadata.managedFields ?? []).filter((f) => !f.subresource).map((f) => f.manager);
  assert.deepEqual(creators, ['secondcron'], 'Jobs are written with User-Agent secondcron/<version> (<identity>)');

  // Rotate: new token in place first (as the kubelet does, well before expiry), then the old one revoked.
  const second = await boundToken(ns.name, 'token-2');
  volume.write({ token: second });
  const rotatedAt = Date.now();
  await kubectlOk(['delete', 'secret', 'token-1', '-n', ns.name, '--wait=true']);
  // The API server caches successful token reviews for 10 s (--authentication-token-cache-ttl).
  await eventually('the old token is rejected', async () => ((await statusFor(cluster.server, caPem, first, ns.name)) === 401 ? true : undefined), { timeoutMs: 20_000, intervalMs: 100 });
  assert.equal(await statusFor(cluster.server, caPem, second, ns.name), 200, 'the new token works');

  await sleep(10_000);
  const jobs = await listJobs(ns.name, 'every-second');
  const from = Math.ceil((rotatedAt - 3_000) / 1000) * 1000;
  const to = Math.floor((Date.now() - 2_000) / 1000) * 1000;
  const seen = new Set(jobs.map((j) => j.slotMs));
  const lost: string[] = [];
  for (let slot = from; slot <= to; slot += 1000) if (!seen.has(slot)) lost.push(new Date(slot).toISOString());
  t.diagnostic(`slots ${new Date(from).toISOString()}..${new Date(to).toISOString()}: lost ${lost.length}`);
  const rejected = (await op.metrics()).split('\n').filter((l) => l.startsWith('secondcron_api_requests_total{') && l.includes('code="401"'));
  t.diagnostic(`401 answers seen by the operator: ${rejected.join('; ') || 'none'}`);
  assert.deepEqual(lost, [], `slots lost across the rotation:\n${op.logs(40)}`);
  assert.ok(rejected.length > 0, 'the operator did meet the revoked token (else the rotation was not tested)');
});
