import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import { after, before, test } from 'node:test';

import { Agent } from 'undici';

import { KubeRest } from '../../../src/kube/rest.js';
import { userAgent } from '../../../src/kube/user-agent.js';

const agents: string[] = [];
let server: Server;
let port = 0;
const dispatcher = new Agent();

before(async () => {
  server = createServer((req, res) => {
    agents.push(req.headers['user-agent'] ?? '(none)');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.url?.includes('watch=true') ? '' : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
after(async () => {
  await dispatcher.close();
  server.close();
});

test('User-Agent secondcron/<version> (<identity>) on requests and watches', async () => {
  const rest = new KubeRest({ server: `http://127.0.0.1:${port}`, source: 'test', credentials: async () => ({ headers: {}, dispatcher }) }, { userAgent: userAgent('1.2.3', 'pod-7f9c_ab12') });
  await rest.request({ verb: 'get', path: '/api/v1/namespaces/default' });
  await rest.watch('/api/v1/configmaps', {}, () => undefined, new AbortController().signal);
  assert.deepEqual(agents, ['secondcron/1.2.3 (pod-7f9c_ab12)', 'secondcron/1.2.3 (pod-7f9c_ab12)']);
});

test('an identity with characters a header cannot carry is made safe', () => {
  assert.equal(userAgent('0.1.0', 'hôst (a)'), 'secondcron/0.1.0 (h_st _a_)');
});
