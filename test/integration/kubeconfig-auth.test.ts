// Kubeconfigs as users have them, against the real API server: several files in $KUBECONFIG (the
// operator must use the context the real kubectl shows), and exec plugins (real scripts).
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { Agent, request } from 'undici';

import { installCrd } from '../cluster/crd.js';
import { runCommand } from '../cluster/run-command.js';
import { loadConnection } from '../../src/kube/connection.js';
import { KubeRest } from '../../src/kube/rest.js';
import { type TestNamespace, kubectl as clusterKubectl, kubectlOk, testBinDir, testEnv, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { testOperator } from './helpers/operator.js';

interface TestCluster {
  server: string;
  caData: string;
  token: string;
}

async function testCluster(): Promise<TestCluster> {
  const view = JSON.parse(await kubectlOk(['config', 'view', '--raw', '-o', 'json'])) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  const cluster = view.clusters[0]?.cluster;
  const token = view.users[0]?.user.token;
  assert.ok(cluster && token, 'the test kubeconfig has a cluster and a token user');
  return { server: cluster.server, caData: cluster['certificate-authority-data'], token };
}

async function statusWithToken(real: TestCluster, token: string): Promise<number> {
  const dispatcher = new Agent({ connect: { ca: Buffer.from(real.caData, 'base64').toString() } });
  try {
    const res = await request(`${real.server}/api/v1/namespaces/default`, { headers: { authorization: `Bearer ${token}` }, dispatcher });
    await res.body.dump();
    return res.statusCode;
  } finally {
    await dispatcher.close();
  }
}

function kubeconfigFile(path: string, doc: Record<string, unknown>): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, JSON.stringify({ apiVersion: 'v1', kind: 'Config', ...doc }), { mode: 0o600 });
  return path;
}

test('$KUBECONFIG with several files: the operator talks to the cluster `kubectl config current-context` shows', async (t) => {
  const real = await testCluster();
  // The operator is Ready once its caches synced, which needs the CRD (not left to an earlier test file).
  await installCrd(clusterKubectl);
  const ns: TestNamespace = await uniqueNamespace('merge');
  const dir = mkdtempSync(join(tmpdir(), 'secondcron-merge-'));
  t.after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await ns.cleanup();
  });
  // The first file sets current-context and defines "work"; the second defines the same names
  // (ignored by kubectl: first wins) and a current-context of its own (ignored too).
  const first = kubeconfigFile(join(dir, 'one', 'config'), {
    'current-context': 'work',
    contexts: [{ name: 'work', context: { cluster: 'work', user: 'work', namespace: ns.name } }],
    clusters: [{ name: 'work', cluster: { server: real.server, 'certificate-authority-data': real.caData } }],
  });
  const second = kubeconfigFile(join(dir, 'two', 'config'), {
    'current-context': 'elsewhere',
    contexts: [
      { name: 'elsewhere', context: { cluster: 'nowhere', user: 'work' } },
      { name: 'work', context: { cluster: 'nowhere', user: 'nobody' } },
    ],
    clusters: [
      { name: 'work', cluster: { server: 'https://127.0.0.1:1' } },
      { name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } },
    ],
    // The user is defined only here; its token file is relative to this file.
    users: [{ name: 'work', user: { tokenFile: 'token' } }],
  });
  writeFileSync(join(dir, 'two', 'token'), real.token);
  const env = { ...testEnv(), KUBECONFIG: [first, second].join(':') };

  const kubectl = (args: string[]) => runCommand(join(testBinDir(), 'kubectl'), args, { env });
  const current = await kubectl(['config', 'current-context']);
  assert.equal(current.stdout.trim(), 'work', current.stderr);
  const viaKubectl = await kubectl(['get', 'namespace', ns.name, '-o', 'name']);
  assert.equal(viaKubectl.code, 0, `kubectl reaches the cluster with the merged files: ${viaKubectl.stderr}`);

  const op = testOperator({ kubeconfig: undefined, namespaces: [ns.name], identity: 'merged-kubeconfig', env, args: ['--leader-election-namespace', ns.name] });
  t.after(() => op.dispose());
  await op.start();
  await op.ready(30_000);
  const starting = op.logs().split('\n').find((l) => l.includes('"starting"'));
  assert.ok(starting?.includes(real.server), `the operator uses ${real.server}: ${starting}`);
});

/** An exec plugin script that prints the token in `tokenFile` and counts its runs. */
function execPlugin(dir: string, name: string, tokenFile: string, extra = ''): { command: string; runs: () => number } {
  const runs = join(dir, `${name}.runs`);
  writeFileSync(runs, '');
  const command = join(dir, name);
  writeFileSync(
    command,
    `#!/bin/sh\necho run >> '${runs}'\n${extra}\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$(cat '${tokenFile}')"\n`,
  );
  chmodSync(command, 0o755);
  return { command, runs: () => readFileSync(runs, 'utf8').split('\n').filter(Boolean).length };
}

function execKubeconfig(dir: string, name: string, real: TestCluster, command: string): string {
  return kubeconfigFile(join(dir, `${name}.kubeconfig`), {
    'current-context': 'c',
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'exec' } }],
    clusters: [{ name: 'c', cluster: { server: real.server, 'certificate-authority-data': real.caData } }],
    users: [{ name: 'exec', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command, interactiveMode: 'Never' } } }],
  });
}

test('exec plugin: one run for concurrent requests; a revoked credential is replaced on 401 and the request retried', async (t) => {
  const real = await testCluster();
  const ns: TestNamespace = await uniqueNamespace('exec');
  const dir = mkdtempSync(join(tmpdir(), 'secondcron-exec-'));
  t.after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await ns.cleanup();
  });
  await kubectlOk(['create', 'serviceaccount', 'reader', '-n', ns.name]);
  await kubectlOk(['create', 'rolebinding', 'reader', '--clusterrole=view', `--serviceaccount=${ns.name}:reader`, '-n', ns.name]);
  const token = async (secret: string): Promise<string> => {
    await kubectlOk(['create', 'secret', 'generic', secret, '-n', ns.name]);
    return (await kubectlOk(['create', 'token', 'reader', '-n', ns.name, '--bound-object-kind', 'Secret', '--bound-object-name', secret])).trim();
  };
  const tokenFile = join(dir, 'current-token');
  writeFileSync(tokenFile, await token('first'));
  const plugin = execPlugin(dir, 'plugin', tokenFile, 'sleep 0.3');
  const rest = new KubeRest(await loadConnection(execKubeconfig(dir, 'exec', real, plugin.command), { env: testEnv() }));
  const path = `/api/v1/namespaces/${ns.name}/configmaps`;

  await Promise.all(Array.from({ length: 20 }, () => rest.request({ verb: 'list', path })));
  assert.equal(plugin.runs(), 1, 'twenty concurrent requests, one plugin run');

  const revokedToken = readFileSync(tokenFile, 'utf8');
  writeFileSync(tokenFile, await token('second'));
  await kubectlOk(['delete', 'secret', 'first', '-n', ns.name, '--wait=true']);
  // The API server caches successful token reviews for 10 s (--authentication-token-cache-ttl).
  await eventually('the revoked token is rejected', async () => ((await statusWithToken(real, revokedToken)) === 401 ? true : undefined), { timeoutMs: 20_000, intervalMs: 200 });
  await rest.request({ verb: 'list', path });
  assert.equal(plugin.runs(), 2, 'the 401 made the plugin run once more, and the request was retried with the new token');
  await rest.request({ verb: 'list', path });
  assert.equal(plugin.runs(), 2);
});

test('exec plugin that hangs: the request fails at its own timeout instead of hanging', async (t) => {
  const real = await testCluster();
  const dir = mkdtempSync(join(tmpdir(), 'secondcron-exec-hung-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'token'), real.token);
  const plugin = execPlugin(dir, 'hung', join(dir, 'token'), 'sleep 8');
  const rest = new KubeRest(await loadConnection(execKubeconfig(dir, 'hung', real, plugin.command), { env: testEnv() }));
  const started = Date.now();
  const outcome = await Promise.race([
    rest.request({ verb: 'get', path: '/api/v1/namespaces/default', timeoutMs: 1_000 }).then(
      () => 'answered',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve('still waiting after 10 s'), 10_000).unref()),
  ]);
  const waited = Date.now() - started;
  assert.match(outcome, /timed out/, `outcome: ${outcome}`);
  assert.ok(waited < 3_000, `failed after ${waited} ms (timeout 1 s)`);
});
