// The /metrics authorizer against a fake API server: what it asks (TokenReview, then a
// SubjectAccessReview with the request's verb and path), how long it trusts each answer, how it
// shares and caps reviews, and that junk tokens cannot push a real scraper out of its caches.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import { ApiError } from '../../../src/kube/api-error.js';
import { REMINDER_MS } from '../../../src/kube/repeated-warnings.js';
import type { RequestOptions } from '../../../src/kube/rest.js';
import { createLogger } from '../../../src/log.js';
import { type AuthDecision, type AuthOutcome, MetricsAuthorizer } from '../../../src/http/metrics-auth.js';
import { FakeRest } from '../fakes/fake-rest.js';

const TR = '/apis/authentication.k8s.io/v1/tokenreviews';
const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const PROMETHEUS = 'prometheus-token';

interface Setup {
  rest: FakeRest;
  clock: FakeClock;
  authz: MetricsAuthorizer;
  outcomes: AuthOutcome[];
  logs: string[];
  /** Tokens the fake API server accepts, and who may do what. */
  users: Map<string, string>;
  allowed: Set<string>;
}

function setup(opts: { maxConcurrentReviews?: number } = {}): Setup {
  const rest = new FakeRest();
  const clock = new FakeClock();
  const outcomes: AuthOutcome[] = [];
  const logs: string[] = [];
  const users = new Map([[PROMETHEUS, 'system:serviceaccount:monitoring:prometheus']]);
  const allowed = new Set(['system:serviceaccount:monitoring:prometheus get /metrics']);
  rest.on('create', TR, (req) => {
    const token = (req.body as { spec: { token: string } }).spec.token;
    const username = users.get(token);
    return username ? { status: { authenticated: true, user: { username, groups: ['system:serviceaccounts'] } } } : { status: { authenticated: false, error: `[invalid bearer token, ${token} not found]` } };
  });
  rest.on('create', SAR, (req) => {
    const spec = (req.body as { spec: { user: string; nonResourceAttributes: { verb: string; path: string } } }).spec;
    return { status: { allowed: allowed.has(`${spec.user} ${spec.nonResourceAttributes.verb} ${spec.nonResourceAttributes.path}`), reason: 'no RBAC rule' } };
  });
  const log = createLogger({ level: 'debug', write: (line) => logs.push(line) });
  const authz = new MetricsAuthorizer({ rest, mono: clock.mono, log, ...opts, onDecision: (o) => outcomes.push(o) });
  return { rest, clock, authz, outcomes, logs, users, allowed };
}

const scrape = (authz: MetricsAuthorizer, token: string | undefined, verb = 'get', path = '/metrics'): Promise<AuthDecision> =>
  authz.check({ authorization: token === undefined ? undefined : `Bearer ${token}`, verb, path });

test('no bearer token: 401 without asking the API server', async () => {
  const s = setup();
  assert.deepEqual(await s.authz.check({ authorization: undefined, verb: 'get', path: '/metrics' }), { status: 401 });
  assert.deepEqual(await s.authz.check({ authorization: 'Basic dTpw', verb: 'get', path: '/metrics' }), { status: 401 });
  assert.equal(s.rest.requests.length, 0);
  assert.deepEqual(s.outcomes, ['unauthenticated', 'unauthenticated']);
});

test('allowed: a TokenReview, then a SubjectAccessReview with the user, its groups and the request verb and path', async () => {
  const s = setup();
  assert.deepEqual(await scrape(s.authz, PROMETHEUS), { status: 200 });
  assert.equal(s.rest.sent('create', TR).length, 1);
  const sar = s.rest.sent('create', SAR);
  assert.equal(sar.length, 1);
  assert.deepEqual((sar[0]?.body as { spec: unknown }).spec, {
    user: 'system:serviceaccount:monitoring:prometheus',
    uid: undefined,
    groups: ['system:serviceaccounts'],
    extra: undefined,
    nonResourceAttributes: { path: '/metrics', verb: 'get' },
  });
  assert.ok(s.rest.requests.every((r) => r.purpose === 'auth'));
});

test('the review asks for the verb and path of the request, not always get /metrics', async () => {
  const s = setup();
  assert.deepEqual(await scrape(s.authz, PROMETHEUS, 'post', '/metrics'), { status: 403 });
  assert.deepEqual(await scrape(s.authz, PROMETHEUS, 'get', '/debug'), { status: 403 });
  const asked = s.rest.sent('create', SAR).map((r) => (r.body as { spec: { nonResourceAttributes: unknown } }).spec.nonResourceAttributes);
  assert.deepEqual(asked, [{ path: '/metrics', verb: 'post' }, { path: '/debug', verb: 'get' }]);
  assert.equal(s.rest.sent('create', TR).length, 1, 'the token was reviewed once for both');
});

test('cache TTLs as controller-runtime: authentication 1 min, allow 5 min', async () => {
  const s = setup();
  await scrape(s.authz, PROMETHEUS);
  s.clock.advance(59_999);
  await scrape(s.authz, PROMETHEUS);
  assert.equal(s.rest.requests.length, 2, 'within a minute: from the cache');
  s.clock.advance(1);
  await scrape(s.authz, PROMETHEUS);
  assert.equal(s.rest.sent('create', TR).length, 2, 'after a minute the token is reviewed again');
  assert.equal(s.rest.sent('create', SAR).length, 1, 'the allow decision is still fresh');
  s.clock.advance(4 * 60_000);
  await scrape(s.authz, PROMETHEUS);
  assert.equal(s.rest.sent('create', TR).length, 3);
  assert.equal(s.rest.sent('create', SAR).length, 2, 'after 5 minutes the access is reviewed again');
});

test('deny is cached for 30 s; a refused token for 1 min', async () => {
  const s = setup();
  s.users.set('reader', 'alice');
  assert.deepEqual(await scrape(s.authz, 'reader'), { status: 403 });
  assert.deepEqual(await scrape(s.authz, 'junk'), { status: 401 });
  s.clock.advance(29_999);
  assert.deepEqual(await scrape(s.authz, 'reader'), { status: 403 });
  assert.deepEqual(await scrape(s.authz, 'junk'), { status: 401 });
  assert.equal(s.rest.requests.length, 3, 'TR reader, SAR reader, TR junk');
  s.allowed.add('alice get /metrics');
  s.clock.advance(1);
  assert.deepEqual(await scrape(s.authz, 'reader'), { status: 200 }, 'the deny expired and the new RBAC rule is seen');
  s.clock.advance(30_000);
  assert.deepEqual(await scrape(s.authz, 'junk'), { status: 401 });
  assert.equal(s.rest.sent('create', TR).filter((r) => (r.body as { spec: { token: string } }).spec.token === 'junk').length, 2);
});

test('bodies carry nothing internal; the detail is logged', async () => {
  const s = setup();
  s.rest.on('create', TR, () => {
    throw new ApiError(403, 'Forbidden', 'create /apis/authentication.k8s.io/v1/tokenreviews: 403 tokenreviews.authentication.k8s.io is forbidden: User "system:serviceaccount:sc:secondcron" cannot create resource');
  });
  const decision = await scrape(s.authz, PROMETHEUS);
  assert.deepEqual(decision, { status: 500 });
  assert.equal(Object.keys(decision).length, 1, 'no message to hand back');
  assert.ok(s.logs.some((l) => l.includes('tokenreviews.authentication.k8s.io is forbidden') && l.includes('"level":"warn"')), s.logs.join('\n'));
  assert.deepEqual(s.outcomes, ['error']);
  await scrape(s.authz, PROMETHEUS);
  assert.equal(s.rest.sent('create', TR).length, 2, 'a failed review is not cached');
});

test('concurrent requests with one token share one review', async () => {
  const s = setup();
  let release = (): void => undefined;
  const gate = new Promise<void>((r) => (release = r));
  s.rest.on('create', TR, async () => {
    await gate;
    return { status: { authenticated: true, user: { username: 'system:serviceaccount:monitoring:prometheus' } } };
  });
  const pending = Array.from({ length: 10 }, () => scrape(s.authz, PROMETHEUS));
  release();
  assert.deepEqual(await Promise.all(pending), Array.from({ length: 10 }, () => ({ status: 200 })));
  assert.equal(s.rest.sent('create', TR).length, 1);
  assert.equal(s.rest.sent('create', SAR).length, 1);
});

test('at most the cap of reviews at once: excess is 503 with Retry-After and counted; a known scraper keeps a lane', async () => {
  const s = setup({ maxConcurrentReviews: 4 });
  await scrape(s.authz, PROMETHEUS); // Prometheus has been seen
  s.clock.advance(60_000); // … and its authentication entry has expired
  const gates: (() => void)[] = [];
  let open = 0;
  let peak = 0;
  const hold = async <T>(answer: T): Promise<T> => {
    peak = Math.max(peak, ++open);
    await new Promise<void>((r) => gates.push(r));
    open--;
    return answer;
  };
  s.rest.on('create', TR, (req: RequestOptions) => {
    const token = (req.body as { spec: { token: string } }).spec.token;
    return hold(token === PROMETHEUS ? { status: { authenticated: true, user: { username: 'system:serviceaccount:monitoring:prometheus' } } } : { status: { authenticated: false } });
  });
  const junk = Array.from({ length: 100 }, (_, i) => scrape(s.authz, `junk-${i}`));
  const prometheus = scrape(s.authz, PROMETHEUS);
  await new Promise((r) => setImmediate(r));
  assert.equal(open, 4, '3 junk reviews and the known scraper');
  while (gates.length) gates.shift()?.();
  const results = await Promise.all(junk);
  assert.deepEqual(await prometheus, { status: 200 });
  assert.equal(peak, 4);
  assert.equal(results.filter((d) => d.status === 401).length, 3);
  const throttled = results.filter((d) => d.status === 503);
  assert.equal(throttled.length, 97);
  assert.ok(throttled.every((d) => d.status === 503 && d.retryAfterSeconds === 1));
  assert.equal(s.outcomes.filter((o) => o === 'throttled').length, 97);
  assert.equal(s.rest.sent('create', TR).length, 1 + 3 + 1);
});

test('thousands of junk tokens do not push the real scraper out of the caches', async () => {
  const s = setup();
  await scrape(s.authz, PROMETHEUS);
  for (let i = 0; i < 30_000; i++) await scrape(s.authz, `junk-${i}`);
  const before = s.rest.requests.length;
  assert.deepEqual(await scrape(s.authz, PROMETHEUS), { status: 200 });
  assert.equal(s.rest.requests.length, before, 'answered from the cache');
});

test('a failing review is logged once per distinct error, then reminded of every few minutes, not once per request', async () => {
  const s = setup();
  s.rest.on('create', TR, () => {
    throw new ApiError(0, 'NetworkError', 'create /apis/authentication.k8s.io/v1/tokenreviews: connect ECONNREFUSED');
  });
  const warnings = (): string[] => s.logs.filter((l) => l.includes('"level":"warn"'));
  for (let i = 0; i < 50; i++) assert.deepEqual(await scrape(s.authz, `junk-${i}`), { status: 500 });
  assert.equal(warnings().length, 1, warnings().join('\n'));
  s.clock.advance(REMINDER_MS);
  assert.deepEqual(await scrape(s.authz, 'junk-again'), { status: 500 });
  assert.equal(warnings().length, 2);
  assert.match(warnings()[1] ?? '', /still failing: 50 more times/);
});
