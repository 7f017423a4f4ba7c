// Client certificates change under a running operator: files rewritten by a rotation agent, or an
// exec plugin handing out short-lived certificates. A TLS server that asks for client certificates
// records which one each request came with.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';

import { readKubeconfig } from '../../../src/kube/connection.js';
import { KubeRest } from '../../../src/kube/rest.js';
import { type TestCertificate, selfSignedCertificate } from '../../support/self-signed-cert.js';

const dir = mkdtempSync(join(tmpdir(), 'secondcron-client-cert-'));
const seen: string[] = [];
const revoked = new Set<string>();
let server: Server;
let url = '';

before(async () => {
  const serving = await selfSignedCertificate('127.0.0.1');
  server = createServer({ cert: serving.cert, key: serving.key, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const fingerprint = (req.socket as TLSSocket).getPeerCertificate().fingerprint256 ?? 'none';
    seen.push(fingerprint);
    res.writeHead(revoked.has(fingerprint) ? 401 : 200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

function kubeconfig(name: string, user: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    clusters: [{ name: 'c', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user }],
  }));
  return path;
}

function rest(path: string): KubeRest {
  const connection = readKubeconfig(path);
  assert.ok(connection);
  return new KubeRest(connection);
}

async function lastSeenAfterGet(client: KubeRest): Promise<string | undefined> {
  await client.request({ verb: 'get', path: '/api/v1/namespaces/default' });
  return seen.at(-1);
}

test('client certificate files are reloaded when they change', async () => {
  const [a, b] = await Promise.all([selfSignedCertificate('a'), selfSignedCertificate('b')]);
  writeFileSync(join(dir, 'tls.crt'), a.cert);
  writeFileSync(join(dir, 'tls.key'), a.key);
  const client = rest(kubeconfig('files.yaml', { 'client-certificate': 'tls.crt', 'client-key': 'tls.key' }));
  assert.equal(await lastSeenAfterGet(client), a.fingerprint256);
  writeFileSync(join(dir, 'tls.crt'), b.cert);
  writeFileSync(join(dir, 'tls.key'), b.key);
  await sleep(1_100);
  assert.equal(await lastSeenAfterGet(client), b.fingerprint256, 'the rotated certificate is used');
});

test('an exec plugin returning new client certificates: the new ones are used (the old one is revoked: 401, rerun, retry)', async () => {
  const [a, b] = await Promise.all([selfSignedCertificate('exec-a'), selfSignedCertificate('exec-b')]);
  const output = join(dir, 'exec-output.json');
  const credential = (c: TestCertificate): string =>
    JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { clientCertificateData: c.cert, clientKeyData: c.key } });
  writeFileSync(output, credential(a));
  const command = join(dir, 'cert-plugin');
  writeFileSync(command, `#!/bin/sh\ncat '${output}'\n`);
  chmodSync(command, 0o755);
  const client = rest(kubeconfig('exec.yaml', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command, interactiveMode: 'Never' } }));
  assert.equal(await lastSeenAfterGet(client), a.fingerprint256);
  writeFileSync(output, credential(b));
  revoked.add(a.fingerprint256);
  assert.equal(await lastSeenAfterGet(client), b.fingerprint256, 'after the 401 the plugin ran again and its new certificate was used');
});
