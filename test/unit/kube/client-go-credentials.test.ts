// Which credentials a kubeconfig user sends, decided as client-go decides (clientcmd's
// validateAuthInfo, transport.HTTPWrappersForConfig, exec.Authenticator.UpdateTransportConfig,
// rest.ConfigToExecCluster), and how lasting credential trouble is reported.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type Server, createServer } from 'node:https';
import { type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { readKubeconfig } from '../../../src/kube/connection.js';
import { ExecCredentialPlugin } from '../../../src/kube/exec-credential.js';
import { KubeRest } from '../../../src/kube/rest.js';
import { REMINDER_MS, RepeatedWarnings } from '../../../src/kube/repeated-warnings.js';
import { TokenFile } from '../../../src/kube/token-file.js';
import { selfSignedCertificate } from '../../support/self-signed-cert.js';

const dir = mkdtempSync(join(tmpdir(), 'secondcron-client-go-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const V1 = 'client.authentication.k8s.io/v1';

function kubeconfig(name: string, user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }],
    users: [{ name: 'u', user }],
  }));
  return path;
}

/** An exec plugin that records each run and the ExecCredential it was given, then prints a token. */
function plugin(name: string, token = 'from-exec'): { command: string; runs: () => unknown[] } {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const command = join(dir, name);
  writeFileSync(command, `#!/bin/sh\nprintf '%s\\n' "$KUBERNETES_EXEC_INFO" >> '${log}'\necho '{"apiVersion":"${V1}","kind":"ExecCredential","status":{"token":"${token}"}}'\n`);
  chmodSync(command, 0o755);
  return { command, runs: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown) };
}

test('token and tokenFile: the file wins and is re-read (client-go NewBearerAuthWithRefreshRoundTripper); the static token only while the file cannot be read', async () => {
  const file = join(dir, 'token-both');
  writeFileSync(file, 'from-file\n');
  const conn = readKubeconfig(kubeconfig('both.yaml', { token: 'static', tokenFile: file }));
  assert.ok(conn);
  assert.deepEqual((await conn.credentials()).headers, { authorization: 'Bearer from-file' });
  unlinkSync(file);
  const unread = readKubeconfig(kubeconfig('both-missing.yaml', { token: 'static', tokenFile: file }));
  assert.deepEqual((await unread?.credentials())?.headers, { authorization: 'Bearer static' });
});

test('a token and basic auth together are rejected as ambiguous (clientcmd validateAuthInfo)', () => {
  assert.throws(() => readKubeconfig(kubeconfig('ambiguous.yaml', { token: 't', username: 'admin', password: 'pw' })), /more than one authentication method found for u; found \[token basicAuth\], only one is allowed/);
  assert.throws(() => readKubeconfig(kubeconfig('ambiguous-pw.yaml', { token: 't', password: 'pw' })), /more than one authentication method/);
});

test('an exec plugin is not run when token, basic or certificate auth is set (exec UpdateTransportConfig)', async () => {
  const cert = await selfSignedCertificate('client');
  const cases: [string, Record<string, unknown>, Record<string, string>][] = [
    ['token', { token: 'static' }, { authorization: 'Bearer static' }],
    ['basic', { username: 'admin', password: 'pw' }, { authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` }],
    ['cert', { 'client-certificate-data': Buffer.from(cert.cert).toString('base64'), 'client-key-data': Buffer.from(cert.key).toString('base64') }, {}],
  ];
  for (const [name, user, headers] of cases) {
    const p = plugin(`unused-${name}`);
    const conn = readKubeconfig(kubeconfig(`exec-${name}.yaml`, { ...user, exec: { apiVersion: V1, command: p.command, interactiveMode: 'Never' } }));
    assert.ok(conn);
    assert.deepEqual((await conn.credentials()).headers, headers, name);
    assert.equal(p.runs().length, 0, `${name}: the plugin did not run`);
  }
  const p = plugin('alone');
  const conn = readKubeconfig(kubeconfig('exec-alone.yaml', { exec: { apiVersion: V1, command: p.command, interactiveMode: 'Never' } }));
  assert.deepEqual((await conn?.credentials())?.headers, { authorization: 'Bearer from-exec' });
});

test('interactiveMode: required for v1, IfAvailable by default for v1beta1, validated, Always needs a terminal', async () => {
  const p = plugin('modes');
  assert.throws(() => readKubeconfig(kubeconfig('no-mode.yaml', { exec: { apiVersion: V1, command: p.command } })), /interactiveMode must be specified for u to use exec authentication plugin/);
  assert.throws(() => readKubeconfig(kubeconfig('bad-mode.yaml', { exec: { apiVersion: V1, command: p.command, interactiveMode: 'Sometimes' } })), /invalid interactiveMode for u: "Sometimes"/);
  assert.ok(readKubeconfig(kubeconfig('beta.yaml', { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: p.command } })));
  const spec = async (mode: string, terminal: boolean): Promise<unknown> => {
    const before = p.runs().length;
    await new ExecCredentialPlugin({ exec: { apiVersion: V1, command: p.command, interactiveMode: mode }, cluster: {}, user: 'u', stdinIsTerminal: () => terminal }).current();
    return (p.runs()[before] as { spec: { interactive: boolean } }).spec.interactive;
  };
  assert.equal(await spec('Never', true), false);
  assert.equal(await spec('IfAvailable', false), false);
  assert.equal(await spec('IfAvailable', true), true);
  assert.equal(await spec('Always', true), true);
  await assert.rejects(
    new ExecCredentialPlugin({ exec: { apiVersion: V1, command: p.command, interactiveMode: 'Always' }, cluster: {}, user: 'u', stdinIsTerminal: () => false }).current(),
    /exec plugin cannot support interactive mode: standard input is not a terminal/,
  );
});

test('provideClusterInfo: server, the CA file content, TLS name, proxy URL and the exec extension as config (rest.ConfigToExecCluster)', async () => {
  const caFile = join(dir, 'ca.crt');
  writeFileSync(caFile, 'PEM BYTES\n');
  const p = plugin('cluster-info');
  const conn = readKubeconfig(kubeconfig(
    'cluster-info.yaml',
    { exec: { apiVersion: V1, command: p.command, interactiveMode: 'Never', provideClusterInfo: true } },
    {
      'certificate-authority': caFile,
      'tls-server-name': 'api.internal',
      'proxy-url': 'http://127.0.0.1:3128',
      extensions: [{ name: 'other', extension: { x: 1 } }, { name: 'client.authentication.k8s.io/exec', extension: { audience: 'kube', region: 'eu' } }],
    },
  ));
  assert.ok(conn);
  await conn.credentials();
  assert.deepEqual(p.runs(), [{
    apiVersion: V1,
    kind: 'ExecCredential',
    spec: {
      interactive: false,
      cluster: {
        server: 'https://127.0.0.1:6443',
        'tls-server-name': 'api.internal',
        'certificate-authority-data': Buffer.from('PEM BYTES\n').toString('base64'),
        'proxy-url': 'http://127.0.0.1:3128',
        config: { audience: 'kube', region: 'eu' },
      },
    },
  }]);
});

let apiServer: Server;
let proxy: ReturnType<typeof createHttpServer>;
const tunnels: string[] = [];
before(async () => {
  const serving = await selfSignedCertificate('127.0.0.1');
  apiServer = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ authorization: req.headers.authorization ?? '' }));
  });
  await new Promise<void>((r) => apiServer.listen(0, '127.0.0.1', r));
  // A forward proxy that only tunnels (CONNECT), like squid in front of an API server.
  const sockets = new Set<Socket>();
  proxy = createHttpServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, client: Socket) => {
    tunnels.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => s.destroy());
      s.on('close', () => sockets.delete(s));
    }
  });
  proxy.on('close', () => sockets.forEach((s) => s.destroy()));
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
});
after(() => {
  apiServer.closeAllConnections();
  apiServer.close();
  proxy.closeAllConnections();
  proxy.close();
});

test('proxy-url: requests tunnel through the proxy (handled here, so an exec plugin gets it in its cluster info)', async () => {
  const apiPort = (apiServer.address() as { port: number }).port;
  const conn = readKubeconfig(kubeconfig(
    'proxied.yaml',
    { token: 'through-proxy' },
    { server: `https://127.0.0.1:${apiPort}`, 'insecure-skip-tls-verify': true, 'proxy-url': `http://127.0.0.1:${(proxy.address() as { port: number }).port}` },
  ));
  assert.ok(conn);
  const answer = await new KubeRest(conn).request<{ authorization: string }>({ verb: 'get', path: '/api' });
  assert.equal(answer.authorization, 'Bearer through-proxy');
  assert.deepEqual(tunnels, [`127.0.0.1:${apiPort}`]);
  assert.equal(readKubeconfig(kubeconfig('socks.yaml', { token: 't' }, { 'proxy-url': 'socks5://127.0.0.1:1080' })), null, 'SOCKS: left to client-node');
});

test('an unreadable token file is told once, then reminded of every few minutes, not on every retry', async () => {
  const path = join(dir, 'flaky-token');
  writeFileSync(path, 'good\n');
  let now = 0;
  const told: string[] = [];
  const warnings = new RepeatedWarnings((message) => told.push(message), () => now);
  const token = new TokenFile(path, { now: () => now, onReadError: (err) => warnings.warn('cannot read token file; keeping the last token', err) });
  assert.equal(await token.current(), 'good');
  unlinkSync(path);
  // Ten minutes of requests, one a second: the file is tried again every second while it is missing.
  for (let s = 61; s <= 61 + 600; s++) {
    now = s * 1_000;
    assert.equal(await token.current(), 'good');
  }
  assert.equal(told.length, 1 + Math.floor(600_000 / REMINDER_MS), told.join('\n'));
  assert.equal(told[0], 'cannot read token file; keeping the last token');
  assert.match(told[1] ?? '', /still failing: 300 more times in the last 5 min/);
  warnings.warn('another problem', new Error('x'));
  assert.equal(told.at(-1), 'another problem', 'a different failure is told at once');
});

test('a kubeconfig token file that goes missing: one warning, not one per retry', async () => {
  const path = join(dir, 'vanishing-token');
  writeFileSync(path, 'good\n');
  const warned: string[] = [];
  const conn = readKubeconfig(kubeconfig('vanishing.yaml', { tokenFile: path }), { warn: (message) => warned.push(message) });
  assert.ok(conn);
  const first = await conn.credentials();
  unlinkSync(path);
  first.invalidate?.(); // the server said 401: read the file again now
  for (let i = 0; i < 3; i++) {
    assert.deepEqual((await conn.credentials()).headers, { authorization: 'Bearer good' }, 'the last good token is kept');
    await sleep(1_050); // a failed read is retried after a second
  }
  assert.deepEqual(warned, [`cannot read token file ${path}; keeping the last token`]);
});
