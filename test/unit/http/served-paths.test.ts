// Only what is served is reviewed: on the secure metrics port exactly `GET /metrics` reaches the
// authorizer; any other path (other case, a trailing slash, anything else) is 404 and any other
// method 405, with no TokenReview or SubjectAccessReview and no log line, even with a valid token.
// The plain metrics port and the health port match their paths exactly too (express alone would
// serve /METRICS and /metrics/).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Registry } from 'prom-client';
import { Agent, request } from 'undici';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import { MetricsAuthorizer } from '../../../src/http/metrics-auth.js';
import { type RunningServer, serveHealth, serveMetrics } from '../../../src/http/servers.js';
import { createLogger } from '../../../src/log.js';
import { MetricsExposition } from '../../../src/metrics/exposition.js';
import { selfSignedCertificate } from '../../support/self-signed-cert.js';
import { FakeRest } from '../fakes/fake-rest.js';

const TOKEN = 'prometheus-token';
const NOT_SERVED = ['/METRICS', '/Metrics', '/metrics/', '//metrics', '/metrics%2F', '/metrics/x', '/random', '/', '/healthz'];
const exposition = new MetricsExposition(new Registry(), undefined);
const agent = new Agent({ connect: { rejectUnauthorized: false } });
after(() => agent.close());

async function call(base: string, path: string, method = 'GET'): Promise<{ status: number; allow: unknown; body: string }> {
  const res = await request(`${base}${path}`, { method, dispatcher: agent, headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.statusCode, allow: res.headers.allow, body: await res.body.text() };
}

describe('secure metrics port: only GET /metrics is reviewed', () => {
  const rest = new FakeRest();
  const logs: string[] = [];
  let server: RunningServer;
  let base: string;
  before(async () => {
    rest.on('create', '/apis/authentication.k8s.io/v1/tokenreviews', () => ({ status: { authenticated: true, user: { username: 'prometheus' } } }));
    rest.on('create', '/apis/authorization.k8s.io/v1/subjectaccessreviews', () => ({ status: { allowed: true } }));
    const authorizer = new MetricsAuthorizer({ rest, mono: new FakeClock().mono, log: createLogger({ level: 'debug', write: (line) => logs.push(line) }) });
    const pair = await selfSignedCertificate('127.0.0.1');
    server = await serveMetrics(0, exposition, {
      secure: { certificate: { current: () => pair, watch: () => () => {} }, authorize: (req) => authorizer.check(req) },
    });
    base = `https://127.0.0.1:${server.port}`;
  });
  after(() => server.close());

  test('other paths: 404 with no review and no log line', async () => {
    for (const path of NOT_SERVED) {
      const res = await call(base, path);
      assert.equal(res.status, 404, path);
      assert.equal(res.body, 'Not Found\n', path);
    }
    assert.deepEqual(rest.requests, []);
    assert.deepEqual(logs, []);
  });

  test('other methods on /metrics: 405 Allow GET with no review', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS']) {
      const res = await call(base, '/metrics', method);
      assert.equal(res.status, 405, method);
      assert.equal(res.allow, 'GET', method);
    }
    assert.deepEqual(rest.requests, []);
  });

  test('GET /metrics (with a query) is reviewed as get /metrics and served', async () => {
    const res = await call(base, '/metrics?name[]=nodejs_heap_size_used_bytes');
    assert.equal(res.status, 200);
    const sar = rest.sent('create', '/apis/authorization.k8s.io/v1/subjectaccessreviews');
    assert.equal(sar.length, 1);
    assert.deepEqual((sar[0]?.body as { spec: { nonResourceAttributes: unknown } }).spec.nonResourceAttributes, { path: '/metrics', verb: 'get' });
  });
});

describe('plain metrics and health ports match paths exactly', () => {
  let metrics: RunningServer;
  let health: RunningServer;
  before(async () => {
    metrics = await serveMetrics(0, exposition);
    health = await serveHealth(0, { healthz: [], readyz: [] });
  });
  after(() => Promise.all([metrics.close(), health.close()]));

  test('metrics: only GET /metrics', async () => {
    const base = `http://127.0.0.1:${metrics.port}`;
    assert.equal((await call(base, '/metrics')).status, 200);
    for (const path of NOT_SERVED) assert.equal((await call(base, path)).status, 404, path);
    assert.equal((await call(base, '/metrics', 'POST')).status, 405);
  });

  test('health: /healthz and /readyz, exactly', async () => {
    const base = `http://127.0.0.1:${health.port}`;
    for (const path of ['/healthz', '/readyz', '/healthz?verbose']) assert.equal((await call(base, path)).status, 200, path);
    for (const path of ['/HEALTHZ', '/healthz/', '/readyz/', '/Readyz', '/metrics']) assert.equal((await call(base, path)).status, 404, path);
  });
});
