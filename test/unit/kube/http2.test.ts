// The API server connection speaks HTTP/2 when the server offers it, as client-go does: many requests
// in flight share one TLS connection. Over HTTP/1.1 each request in flight needed a connection of its
// own, so a burst of 500 due Jobs opened ~150 new TLS connections at the slot (bench/README.md, issue 36).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type Http2SecureServer, createSecureServer } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TLSSocket } from 'node:tls';

import { readKubeconfig } from '../../../src/kube/connection.js';
import { KubeRest } from '../../../src/kube/rest.js';
import { connect } from '../../../src/plugin/target.js';
import { selfSignedCertificate } from '../../support/self-signed-cert.js';

const dir = mkdtempSync(join(tmpdir(), 'secondcron-h2-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('a server that offers HTTP/2 and HTTP/1.1', () => {
  let server: Http2SecureServer;
  let base: string;
  let ca: string;
  let connections = 0;
  const sockets = new Set<TLSSocket>();
  before(async () => {
    const serving = await selfSignedCertificate('127.0.0.1');
    ca = Buffer.from(serving.cert).toString('base64');
    server = createSecureServer({ cert: serving.cert, key: serving.key, allowHTTP1: true }, (req, res) => {
      const groups: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        if ((req.rawHeaders[i] as string).toLowerCase() === 'impersonate-group') groups.push(req.rawHeaders[i + 1] as string);
      }
      // Answered a little later, so that the requests of one test are in flight together.
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ version: req.httpVersion, groups })), 50);
    });
    server.on('secureConnection', (socket: TLSSocket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });

  function kubeconfig(name: string, user: Record<string, unknown>): string {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'c',
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      clusters: [{ name: 'c', cluster: { server: base, 'certificate-authority-data': ca } }],
      users: [{ name: 'u', user }],
    }));
    return path;
  }

  function rest(name: string, user: Record<string, unknown>): KubeRest {
    const conn = readKubeconfig(kubeconfig(name, user));
    assert.ok(conn, 'handled here, not by client-node');
    return new KubeRest(conn);
  }

  type Echo = { version: string; groups: string[] };

  test('HTTP/2: 300 requests in flight at once share one TLS connection', async () => {
    const client = rest('token.yaml', { token: 't' });
    const before = connections;
    const answers = await Promise.all(Array.from({ length: 300 }, () => client.request<Echo>({ verb: 'get', path: '/api' })));
    assert.deepEqual(new Set(answers.map((a) => a.version)), new Set(['2.0']));
    assert.equal(connections - before, 1);
  });

  test('HTTP/1.1 when a header is sent as a list: over HTTP/2 undici joins the values into one', async () => {
    // --as-group a --as-group b over HTTP/2 would impersonate one group "devs, ops".
    const client = rest('groups.yaml', { token: 't', as: 'jane', 'as-groups': ['devs', 'ops'] });
    const answers = await Promise.all(Array.from({ length: 3 }, () => client.request<Echo>({ verb: 'get', path: '/api' })));
    assert.deepEqual(answers, Array.from({ length: 3 }, () => ({ version: '1.1', groups: ['devs', 'ops'] })));
  });

  test('HTTP/1.1 for the plugin\'s --as-group, added to each request rather than to the kubeconfig', async () => {
    const path = kubeconfig('plugin.yaml', { token: 't' });
    const several = await connect({ kubeconfig: path, as: 'jane', asGroups: ['devs', 'ops'] }, 'test');
    assert.deepEqual(await several.rest.request<Echo>({ verb: 'get', path: '/api' }), { version: '1.1', groups: ['devs', 'ops'] });
    const one = await connect({ kubeconfig: path, as: 'jane', asGroups: ['devs'] }, 'test');
    assert.deepEqual(await one.rest.request<Echo>({ verb: 'get', path: '/api' }), { version: '2.0', groups: ['devs'] });
  });

  test('HTTP/2 with one impersonated group: a single value is sent as it is', async () => {
    const client = rest('group.yaml', { token: 't', as: 'jane', 'as-groups': ['devs'] });
    assert.deepEqual(await client.request<Echo>({ verb: 'get', path: '/api' }), { version: '2.0', groups: ['devs'] });
  });
});
