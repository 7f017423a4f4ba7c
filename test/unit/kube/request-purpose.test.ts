import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import { after, before, test } from 'node:test';

import { Agent } from 'undici';

import { KubeRest } from '../../../src/kube/rest.js';

let server: Server;
let port = 0;
const accepts: string[] = [];
const dispatcher = new Agent();

before(async () => {
  server = createServer((req, res) => {
    accepts.push(req.headers.accept ?? '');
    res.writeHead(req.url?.startsWith('/missing') ? 404 : 200, { 'content-type': 'application/json' });
    res.end(req.url?.includes('watch=true') ? '' : req.url?.startsWith('/object') ? '{"metadata":{"name":"x"}}' : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
after(async () => {
  await dispatcher.close();
  server.close();
});

test('every request is observed with its verb, status code and purpose (the verb when none is given)', async () => {
  const seen: string[] = [];
  const rest = new KubeRest(
    { server: `http://127.0.0.1:${port}`, source: 'test', credentials: async () => ({ headers: {}, dispatcher }) },
    { observer: { onResponse: (verb, code, purpose) => seen.push(`${verb} ${code} ${purpose}`) } },
  );
  await rest.request({ verb: 'create', path: '/apis/batch/v1/namespaces/a/jobs', body: {}, purpose: 'job_create' });
  await rest.request({ verb: 'get', path: '/api/v1/namespaces/a' });
  await assert.rejects(rest.request({ verb: 'patch', path: '/missing', body: {}, purpose: 'status' }));
  await rest.watch('/api/v1/configmaps', {}, () => undefined, new AbortController().signal);
  const unreachable = new KubeRest({ server: 'http://127.0.0.1:1', source: 'test', credentials: async () => ({ headers: {}, dispatcher }) }, {
    observer: { onResponse: (verb, code, purpose) => seen.push(`${verb} ${code} ${purpose}`) },
  });
  await assert.rejects(unreachable.request({ verb: 'delete', path: '/x', purpose: 'job_delete' }));
  assert.deepEqual(seen, ['create 200 job_create', 'get 200 get', 'patch 404 status', 'watch 200 watch', 'delete error job_delete']);
});

test('discardResponse: asks for metadata only and leaves the answer unparsed', async () => {
  const rest = new KubeRest({ server: `http://127.0.0.1:${port}`, source: 'test', credentials: async () => ({ headers: {}, dispatcher }) });
  accepts.length = 0;
  assert.deepEqual(await rest.request({ verb: 'get', path: '/object' }), { metadata: { name: 'x' } });
  assert.deepEqual(await rest.request({ verb: 'delete', path: '/object', discardResponse: true }), {});
  await assert.rejects(rest.request({ verb: 'delete', path: '/missing', discardResponse: true }), /404/, 'an error answer is still read');
  assert.deepEqual(accepts, ['application/json', 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json', 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json']);
});
