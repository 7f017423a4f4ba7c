import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { readKubeconfig } from '../../../src/kube/connection.js';

const dir = mkdtempSync(join(tmpdir(), 'secondcron-kubeconfig-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(name: string, user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'ctx',
      contexts: [{ name: 'other', context: { cluster: 'nope', user: 'nope' } }, { name: 'ctx', context: { cluster: 'c', user: 'u' } }],
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443/', 'certificate-authority-data': Buffer.from('not a real CA').toString('base64'), ...cluster } }],
      users: [{ name: 'u', user }],
    }),
  );
  return path;
}

test('kubeconfig with a token: server of the current context, bearer header', async () => {
  const conn = readKubeconfig(kubeconfig('token.yaml', { token: 'abc' }));
  assert.ok(conn);
  assert.equal(conn.server, 'https://127.0.0.1:6443');
  assert.deepEqual((await conn.credentials()).headers, { authorization: 'Bearer abc' });
});

test('kubeconfig with a token file, relative to the kubeconfig: cached, re-read once the server rejects it', async () => {
  writeFileSync(join(dir, 'token'), 'first\n');
  const conn = readKubeconfig(kubeconfig('token-file.yaml', { tokenFile: 'token' }));
  assert.ok(conn);
  const first = await conn.credentials();
  assert.deepEqual(first.headers, { authorization: 'Bearer first' });
  writeFileSync(join(dir, 'token'), 'second\n');
  assert.deepEqual((await conn.credentials()).headers, { authorization: 'Bearer first' }, 'cached for a minute, as client-go does');
  assert.ok(first.invalidate, 'token-file credentials can be refreshed');
  first.invalidate();
  assert.deepEqual((await conn.credentials()).headers, { authorization: 'Bearer second' });
});

test('kubeconfig with basic auth', async () => {
  const conn = readKubeconfig(kubeconfig('basic.yaml', { username: 'admin', password: 'pw' }));
  assert.deepEqual((await conn?.credentials())?.headers, { authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` });
});

test('auth providers and SOCKS proxies are left to client-node; exec plugins and HTTP proxies are ours', () => {
  assert.equal(readKubeconfig(kubeconfig('provider.yaml', { 'auth-provider': { name: 'oidc' } })), null);
  assert.equal(readKubeconfig(kubeconfig('proxy.yaml', { token: 'abc' }, { 'proxy-url': 'socks5://proxy:1080' })), null);
  assert.ok(readKubeconfig(kubeconfig('http-proxy.yaml', { token: 'abc' }, { 'proxy-url': 'http://proxy:3128' })));
  assert.ok(readKubeconfig(kubeconfig('exec.yaml', { exec: { command: 'aws', apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never' } })));
});

test('a kubeconfig without a usable current context is a clear error', () => {
  const path = join(dir, 'empty.yaml');
  writeFileSync(path, 'apiVersion: v1\nkind: Config\n');
  assert.throws(() => readKubeconfig(path), /no current-context set/);
  assert.throws(() => readKubeconfig(join(dir, 'missing.yaml')), /file not found/);
});
