// $KUBECONFIG with several files merges the way kubectl merges it.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { loadKubeconfig } from '../../../src/kube/kubeconfig.js';

const dir = mkdtempSync(join(tmpdir(), 'secondcron-merge-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(path: string, doc: Record<string, unknown>): string {
  const full = join(dir, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, JSON.stringify({ apiVersion: 'v1', kind: 'Config', ...doc }));
  return full;
}

const first = file('a/config', {
  'current-context': 'dev',
  contexts: [{ name: 'dev', context: { cluster: 'shared', user: 'me', namespace: 'team' } }],
  clusters: [{ name: 'shared', cluster: { server: 'https://first:6443', 'certificate-authority': 'ca.crt' } }],
});
const second = file('b/config', {
  'current-context': 'prod',
  contexts: [
    { name: 'prod', context: { cluster: 'other', user: 'me' } },
    { name: 'dev', context: { cluster: 'other', user: 'nobody' } },
  ],
  clusters: [
    { name: 'shared', cluster: { server: 'https://second:6443' } },
    { name: 'other', cluster: { server: 'https://other:6443' } },
  ],
  users: [{ name: 'me', user: { tokenFile: 'token' } }],
});
const noCurrent = file('c/config', { clusters: [{ name: 'third', cluster: { server: 'https://third:6443' } }] });

test('first file wins: its current-context, and its definition of a name defined twice', () => {
  const kc = loadKubeconfig({ env: { KUBECONFIG: [first, second].join(':') } });
  assert.equal(kc.contextName, 'dev');
  assert.equal(kc.namespace, 'team');
  assert.equal(kc.cluster.name, 'shared');
  assert.equal(kc.cluster.server, 'https://first:6443');
  assert.equal(kc.user.name, 'me', 'a user defined only in the second file is found');
});

test('file references resolve against the file that holds them', () => {
  const kc = loadKubeconfig({ env: { KUBECONFIG: [first, second].join(':') } });
  assert.equal(kc.cluster.fields['certificate-authority'], join(dir, 'a', 'ca.crt'));
  assert.equal(kc.user.fields.tokenFile, join(dir, 'b', 'token'));
});

test('current-context from the first file that sets one; missing files and repeats skipped', () => {
  const kc = loadKubeconfig({ env: { KUBECONFIG: [noCurrent, join(dir, 'missing'), second, first, second].join(':') } });
  assert.equal(kc.contextName, 'prod');
  assert.equal(kc.cluster.server, 'https://other:6443');
  assert.equal(kc.merged.clusters.find((c) => c.name === 'shared')?.fields.server, 'https://second:6443');
});

test('--context and --kubeconfig: another context; one file alone', () => {
  assert.equal(loadKubeconfig({ context: 'prod', env: { KUBECONFIG: [first, second].join(':') } }).cluster.server, 'https://other:6443');
  assert.throws(() => loadKubeconfig({ kubeconfig: first, env: { KUBECONFIG: second } }), /context "dev" names user "me", which is not defined/);
  assert.throws(() => loadKubeconfig({ context: 'nope', env: { KUBECONFIG: first } }), /context "nope" not found/);
});

test('a name defined twice in one file is an error (as in kubectl); no file at all too', () => {
  const twice = file('d/config', { clusters: [{ name: 'x', cluster: { server: 'https://x' } }, { name: 'x', cluster: { server: 'https://y' } }] });
  assert.throws(() => loadKubeconfig({ env: { KUBECONFIG: twice } }), /"clusters" defines "x" twice/);
  assert.throws(() => loadKubeconfig({ env: { KUBECONFIG: [join(dir, 'none1'), join(dir, 'none2')].join(':') } }), /none of these files exists/);
});

test('kubectl\'s --cluster, --user, --server, --token, --insecure-skip-tls-verify over what the context names', () => {
  const env = { KUBECONFIG: [first, second].join(':') };
  const kc = loadKubeconfig({ env, cluster: 'other', user: 'me', server: 'https://override:443', token: 'tok', insecureSkipTlsVerify: true });
  assert.deepEqual([kc.contextName, kc.namespace, kc.cluster.name, kc.cluster.server], ['dev', 'team', 'other', 'https://override:443']);
  assert.equal(kc.cluster.fields['insecure-skip-tls-verify'], true);
  assert.deepEqual(kc.user.fields, { token: 'tok' }, 'the token replaces the token file');
  const insecure = loadKubeconfig({ env, insecureSkipTlsVerify: true });
  assert.equal(insecure.cluster.fields['certificate-authority'], undefined, 'no CA with --insecure-skip-tls-verify (TLS refuses both)');
  assert.throws(() => loadKubeconfig({ env, cluster: 'nope' }), /--cluster "nope", which is not defined/);
  assert.throws(() => loadKubeconfig({ env, user: 'nobody' }), /--user "nobody", which is not defined/);
  // --server and --token need no kubeconfig at all, as with kubectl.
  const bare = loadKubeconfig({ env: { KUBECONFIG: join(dir, 'none') }, server: 'https://bare:6443', token: 't' });
  assert.deepEqual([bare.cluster.server, bare.user.fields, bare.namespace], ['https://bare:6443', { token: 't' }, 'default']);
});
