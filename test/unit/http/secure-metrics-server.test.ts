// The secure /metrics server around the authorizer: every request is decided first (the request's
// verb and path, the Authorization header as sent), a refusal is a bare status text with nothing of
// what went wrong, 503 carries Retry-After, an allowed request reaches /metrics, and an authorizer
// that throws is a 500, not a crashed process.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { Registry } from 'prom-client';
import { Agent, request } from 'undici';

import { type RunningServer, serveMetrics } from '../../../src/http/servers.js';
import type { AuthDecision, AuthRequest } from '../../../src/http/metrics-auth.js';
import { MetricsExposition } from '../../../src/metrics/exposition.js';
import { selfSignedCertificate } from '../../support/self-signed-cert.js';

const seen: AuthRequest[] = [];
/** The decision by token: "ok", "nobody", "denied", "busy", "broken" (throws). */
function decide(req: AuthRequest): Promise<AuthDecision> {
  seen.push(req);
  switch (req.authorization) {
    case 'Bearer ok':
      return Promise.resolve({ status: 200 });
    case 'Bearer denied':
      return Promise.resolve({ status: 403 });
    case 'Bearer busy':
      return Promise.resolve({ status: 503, retryAfterSeconds: 1 });
    case 'Bearer broken':
      return Promise.reject(new Error('tokenreviews is forbidden: User "system:serviceaccount:secret:detail"'));
    default:
      return Promise.resolve({ status: 401 });
  }
}

let server: RunningServer;
const agent = new Agent({ connect: { rejectUnauthorized: false } });
before(async () => {
  const pair = await selfSignedCertificate('127.0.0.1');
  const registry = new Registry();
  server = await serveMetrics(0, new MetricsExposition(registry, undefined), {
    secure: { certificate: { current: () => pair, watch: () => () => {} }, authorize: decide },
  });
});
after(async () => {
  await agent.close();
  await server.close();
});

async function get(path: string, token?: string, method = 'GET'): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  const res = await request(`https://127.0.0.1:${server.port}${path}`, { method, dispatcher: agent, headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: res.statusCode, body: await res.body.text(), headers: res.headers };
}

test('refusals are bare status texts; 503 says when to come back', async () => {
  const cases: [string | undefined, number, string][] = [
    [undefined, 401, 'Unauthorized\n'],
    ['junk', 401, 'Unauthorized\n'],
    ['denied', 403, 'Forbidden\n'],
    ['busy', 503, 'Service Unavailable\n'],
    ['broken', 500, 'Internal Server Error\n'],
  ];
  for (const [token, status, body] of cases) {
    const res = await get('/metrics', token);
    assert.equal(res.status, status, `token ${token}`);
    assert.equal(res.body, body, `token ${token}`);
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(res.headers['retry-after'], status === 503 ? '1' : undefined, `token ${token}`);
  }
});

test('an allowed request reaches /metrics; the decision saw the verb, the path without the query and the header', async () => {
  seen.length = 0;
  const res = await get('/metrics?name[]=nodejs_heap_size_used_bytes', 'ok');
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  assert.equal((await get('/debug', 'ok', 'POST')).status, 404);
  assert.deepEqual(seen, [{ authorization: 'Bearer ok', verb: 'get', path: '/metrics' }], 'only GET /metrics is decided');
});
