// Kubeconfig edge cases decided as client-go decides them: a CA together with
// insecure-skip-tls-verify is refused (transport.TLSConfigFor); a malformed file's error names the
// line, never its content (tokens); HTTPS_PROXY / NO_PROXY are honoured when the cluster names no
// proxy-url (http.ProxyFromEnvironment); as-groups, as-uid and as-user-extra are sent on both paths
// (ImpersonatingRoundTripper), also where client-node authenticates.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type IncomingHttpHeaders, createServer as createHttpServer } from 'node:http';
import { type Server, createServer } from 'node:https';
import { type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { connectionForSelection, loadConnection, readKubeconfig } from '../../../src/kube/connection.js';
import { proxyFromEnvironment } from '../../../src/kube/env-proxy.js';
import { KubeconfigError } from '../../../src/kube/kubeconfig.js';
import { KubeRest } from '../../../src/kube/rest.js';
import { selfSignedCertificate } from '../../support/self-signed-cert.js';

const dir = mkdtempSync(join(tmpdir(), 'secondcron-edge-'));
after(() => rmSync(dir, { recursive: true, force: true }));

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

describe('a CA together with insecure-skip-tls-verify', () => {
  const ca = Buffer.from('-----BEGIN CERTIFICATE-----\n').toString('base64');
  const refused = /cluster "c": specifying a root certificates file with the insecure flag is not allowed/;

  test('is refused, not run insecurely', () => {
    assert.throws(() => readKubeconfig(kubeconfig('ca-insecure.yaml', { token: 't' }, { 'certificate-authority-data': ca, 'insecure-skip-tls-verify': true })), refused);
    writeFileSync(join(dir, 'ca.crt'), 'x');
    assert.throws(() => readKubeconfig(kubeconfig('ca-file-insecure.yaml', { token: 't' }, { 'certificate-authority': 'ca.crt', 'insecure-skip-tls-verify': true })), refused);
  });

  test('is refused on the client-node path too (an auth provider)', async () => {
    const path = kubeconfig('provider-insecure.yaml', { 'auth-provider': { name: 'oidc', config: {} } }, { 'certificate-authority-data': ca, 'insecure-skip-tls-verify': true });
    await assert.rejects(loadConnection(path, { env: {} }), refused);
  });

  test('--insecure-skip-tls-verify drops the CA first, as kubectl does', async () => {
    const path = kubeconfig('ca-override.yaml', { token: 't' }, { 'certificate-authority-data': ca });
    const { connection } = await connectionForSelection({ kubeconfig: path, insecureSkipTlsVerify: true }, { env: {} });
    assert.equal(connection.server, 'https://127.0.0.1:6443');
  });
});

test('a malformed kubeconfig: the error names the line and column, and quotes none of its content', () => {
  const path = join(dir, 'malformed.yaml');
  const secret = 'sha256~SECRET-TOKEN-VALUE';
  writeFileSync(path, `apiVersion: v1\nusers:\n- name: u\n  user:\n    token: ${secret}\n   password: [\n`);
  assert.throws(
    () => readKubeconfig(path),
    (err: unknown) => {
      assert.ok(err instanceof KubeconfigError);
      assert.doesNotMatch(err.message, /SECRET|token|password/);
      assert.match(err.message, new RegExp(`^kubeconfig ${path}: not valid YAML: bad indentation of a mapping entry at line 6, column 4$`));
      return true;
    },
  );
});

describe('HTTPS_PROXY and NO_PROXY (no proxy-url in the kubeconfig)', () => {
  test('which proxy, decided as Go\'s http.ProxyFromEnvironment', () => {
    const P = 'http://proxy:3128';
    const cases: Array<[string, NodeJS.ProcessEnv, string | undefined]> = [
      ['https://api.example.test:6443', {}, undefined],
      ['https://api.example.test:6443', { HTTPS_PROXY: P }, P],
      ['https://api.example.test:6443', { https_proxy: P }, P],
      ['https://api.example.test:6443', { HTTPS_PROXY: P, https_proxy: 'http://lower:1' }, P],
      ['https://api.example.test:6443', { HTTP_PROXY: P }, undefined],
      ['http://api.example.test:8080', { HTTP_PROXY: P }, P],
      ['https://api.example.test:6443', { HTTPS_PROXY: 'proxy:3128' }, 'http://proxy:3128'],
      ['https://localhost:6443', { HTTPS_PROXY: P }, undefined],
      ['https://127.0.0.1:6443', { HTTPS_PROXY: P }, undefined],
      ['https://[::1]:6443', { HTTPS_PROXY: P }, undefined],
      ['https://api.example.test:6443', { HTTPS_PROXY: P, NO_PROXY: '*' }, undefined],
      ['https://api.example.test:6443', { HTTPS_PROXY: P, NO_PROXY: 'example.test' }, undefined],
      ['https://example.test:6443', { HTTPS_PROXY: P, NO_PROXY: 'example.test' }, undefined],
      ['https://example.test:6443', { HTTPS_PROXY: P, NO_PROXY: '.example.test' }, P],
      ['https://api.example.test:6443', { HTTPS_PROXY: P, NO_PROXY: '*.example.test' }, undefined],
      ['https://myexample.test:6443', { HTTPS_PROXY: P, NO_PROXY: 'example.test' }, P],
      ['https://api.example.test:6443', { HTTPS_PROXY: P, NO_PROXY: 'other.test, API.EXAMPLE.TEST' }, undefined],
      ['https://api.example.test:6443', { HTTPS_PROXY: P, NO_PROXY: 'api.example.test:443' }, P],
      ['https://api.example.test:6443', { HTTPS_PROXY: P, NO_PROXY: 'api.example.test:6443' }, undefined],
      ['https://api.example.test', { HTTPS_PROXY: P, NO_PROXY: 'api.example.test:443' }, undefined],
      ['https://10.96.0.1:443', { HTTPS_PROXY: P, NO_PROXY: '10.96.0.0/12' }, undefined],
      ['https://10.112.0.1:443', { HTTPS_PROXY: P, NO_PROXY: '10.96.0.0/12' }, P],
      ['https://10.96.0.1:443', { HTTPS_PROXY: P, NO_PROXY: '10.96.0.1' }, undefined],
      ['https://[fd00::1]:443', { HTTPS_PROXY: P, NO_PROXY: 'fd00::/8' }, undefined],
      ['https://[fd00::1]:443', { HTTPS_PROXY: P, NO_PROXY: '[fd00::1]:443' }, undefined],
      ['https://api.example.test:6443', { HTTPS_PROXY: P, no_proxy: 'example.test' }, undefined],
    ];
    for (const [server, env, want] of cases) assert.equal(proxyFromEnvironment(server, env), want, `${server} ${JSON.stringify(env)}`);
    assert.throws(() => proxyFromEnvironment('https://api.example.test', { HTTPS_PROXY: 'socks5://proxy:1080' }), /HTTPS_PROXY socks5:\/\/ proxies are not supported/);
  });

  let apiServer: Server;
  let proxy: ReturnType<typeof createHttpServer>;
  let ca: string;
  const tunnels: string[] = [];
  before(async () => {
    const serving = await selfSignedCertificate('api.example.test');
    ca = Buffer.from(serving.cert).toString('base64');
    apiServer = createServer({ cert: serving.cert, key: serving.key }, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    await new Promise<void>((r) => apiServer.listen(0, '127.0.0.1', r));
    // A tunnelling proxy that knows where api.example.test is (the test machine's DNS does not).
    const sockets = new Set<Socket>();
    proxy = createHttpServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req, client: Socket) => {
      tunnels.push(req.url ?? '');
      const port = Number((req.url ?? '').split(':')[1]);
      const upstream = connect(port, '127.0.0.1', () => {
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
    for (const s of [apiServer, proxy]) {
      s.closeAllConnections();
      s.close();
    }
  });

  test('requests tunnel through HTTPS_PROXY (or https_proxy) to a server NO_PROXY does not list', async () => {
    const apiPort = (apiServer.address() as { port: number }).port;
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const path = kubeconfig('env-proxy.yaml', { token: 't' }, { server: `https://api.example.test:${apiPort}`, 'certificate-authority-data': ca });
    for (const env of [{ HTTPS_PROXY: proxyUrl, NO_PROXY: 'localhost,10.0.0.0/8' }, { https_proxy: proxyUrl }]) {
      tunnels.length = 0;
      const conn = readKubeconfig(path, { env });
      assert.ok(conn);
      assert.deepEqual(await new KubeRest(conn).request({ verb: 'get', path: '/api' }), {});
      assert.deepEqual(tunnels, [`api.example.test:${apiPort}`], JSON.stringify(env));
    }
  });
});

describe('impersonation: as, as-groups, as-uid and as-user-extra', () => {
  let echo: Server;
  let base: string;
  let ca: string;
  before(async () => {
    const serving = await selfSignedCertificate('127.0.0.1');
    ca = Buffer.from(serving.cert).toString('base64');
    echo = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
      const sent: Array<[string, string]> = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = (req.rawHeaders[i] as string).toLowerCase();
        if (name.startsWith('impersonate-')) sent.push([name, req.rawHeaders[i + 1] as string]);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(sent));
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    base = `https://127.0.0.1:${(echo.address() as { port: number }).port}`;
  });
  after(() => {
    echo.closeAllConnections();
    echo.close();
  });

  const IMPERSONATING = { as: 'jane', 'as-groups': ['devs', 'ops'], 'as-uid': '42', 'as-user-extra': { 'scopes.example/x y': ['a', 'b'] } };
  // Header names as the server reads them (case-insensitive; the escaped key arrives as %2F, compared lower-cased).
  const EXPECTED = [
    ['impersonate-user', 'jane'],
    ['impersonate-group', 'devs'],
    ['impersonate-group', 'ops'],
    ['impersonate-uid', '42'],
    ['impersonate-extra-scopes.example%2fx%20y', 'a'],
    ['impersonate-extra-scopes.example%2fx%20y', 'b'],
  ];

  test('sent on every request, each group and extra value as its own header', async () => {
    const conn = readKubeconfig(kubeconfig('as.yaml', { token: 't', ...IMPERSONATING }, { server: base, 'certificate-authority-data': ca }));
    assert.ok(conn, 'handled here, not by client-node');
    assert.deepEqual(await new KubeRest(conn).request({ verb: 'get', path: '/api' }), EXPECTED);
  });

  test('kept where client-node authenticates (it would send "as" alone)', async () => {
    // The username/password of a basic-auth user plus an auth provider: client-node's path.
    const path = kubeconfig('as-provider.yaml', { 'auth-provider': { name: 'unknown-provider', config: {} }, ...IMPERSONATING }, { server: base, 'certificate-authority-data': ca });
    const conn = await loadConnection(path, { env: {} });
    assert.match(conn.source, /client-node/);
    const headers: IncomingHttpHeaders = (await conn.credentials()).headers;
    assert.deepEqual(
      Object.entries(headers).filter(([k]) => k.toLowerCase().startsWith('impersonate-')).flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => [k.toLowerCase(), x])),
      EXPECTED,
    );
  });

  test('as-groups without "as" is refused', () => {
    assert.throws(() => readKubeconfig(kubeconfig('groups-only.yaml', { token: 't', 'as-groups': ['devs'] })), /user u: as-groups, as-uid and as-user-extra need "as"/);
  });
});
