import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import { KubeLeaseStore } from '../../../src/election/kube-lease-store.js';
import { LeaseConflictError } from '../../../src/election/lease-store.js';

/**
 * Exercises the adapter through the real generated client and undici against a tiny HTTP
 * endpoint, to pin down what 2.0.1 puts on the wire (MicroTime format, resourceVersion,
 * preserved metadata), how it reports 404/409, and that an aborted signal tears the request down.
 * Semantics of a real API server are covered by the integration tests.
 */
interface Received {
  method: string;
  url: string;
  body: unknown;
}

type Handler = (req: IncomingMessage, body: unknown, res: ServerResponse) => void;

const PATH = '/apis/coordination.k8s.io/v1/namespaces/ops/leases';

describe('KubeLeaseStore (client-node 2.0.1 on the wire)', () => {
  let server: Server;
  let handler: Handler = (_req, _body, res) => res.end();
  const received: Received[] = [];
  const closedRequests: string[] = [];
  let onRequestClosed: (what: string) => void = () => undefined;
  let api: CoordinationV1Api;

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const body: unknown = text === '' ? undefined : JSON.parse(text);
        received.push({ method: req.method ?? '', url: req.url ?? '', body });
        res.on('close', () => {
          if (res.writableFinished) return;
          closedRequests.push(`${req.method} ${req.url}`);
          onRequestClosed(`${req.method} ${req.url}`);
        });
        handler(req, body, res);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'secret-token' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    api = kc.makeApiClient(CoordinationV1Api);
  });

  after(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const status = (code: number, reason: string) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
  const signal = (): AbortSignal => new AbortController().signal;

  it('maps 404 to null', async () => {
    handler = (_req, _body, res) => json(res, 404, status(404, 'NotFound'));
    const store = new KubeLeaseStore({ api, namespace: 'ops', name: 'secondcron-leader' });
    assert.equal(await store.get(signal()), null);
    assert.deepEqual(received.at(-1), { method: 'GET', url: `${PATH}/secondcron-leader`, body: undefined });
  });

  it('creates with MicroTime stamps (six fractional digits) and reads the answer back', async () => {
    handler = (_req, body, res) => {
      const lease = body as { metadata: Record<string, unknown> };
      json(res, 201, { ...lease, metadata: { ...lease.metadata, resourceVersion: '41' } });
    };
    const store = new KubeLeaseStore({ api, namespace: 'ops', name: 'secondcron-leader' });
    const acquire = Date.UTC(2026, 11, 2, 10, 0, 5, 123);
    const created = await store.create(
      { holderIdentity: 'pod-a_0badf00d', leaseDurationSeconds: 15, acquireTimeMs: acquire, renewTimeMs: acquire + 2_000, leaseTransitions: 0 },
      signal(),
    );
    const sent = received.at(-1);
    assert.equal(sent?.method, 'POST');
    assert.equal(sent?.url, PATH);
    assert.deepEqual(sent?.body, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'secondcron-leader', namespace: 'ops' },
      spec: {
        holderIdentity: 'pod-a_0badf00d',
        leaseDurationSeconds: 15,
        leaseTransitions: 0,
        acquireTime: '2026-12-02T10:00:05.123000Z',
        renewTime: '2026-12-02T10:00:07.123000Z',
      },
    });
    assert.deepEqual(created, {
      record: { holderIdentity: 'pod-a_0badf00d', leaseDurationSeconds: 15, acquireTimeMs: acquire, renewTimeMs: acquire + 2_000, leaseTransitions: 0 },
      resourceVersion: '41',
    });
  });

  it('maps 409 AlreadyExists on create and 409 Conflict on update to LeaseConflictError', async () => {
    const store = new KubeLeaseStore({ api, namespace: 'ops', name: 'l' });
    const record = { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTimeMs: 0, renewTimeMs: 0, leaseTransitions: 0 };
    handler = (_req, _body, res) => json(res, 409, status(409, 'AlreadyExists'));
    await assert.rejects(store.create(record, signal()), LeaseConflictError);
    handler = (_req, _body, res) => json(res, 409, status(409, 'Conflict'));
    await assert.rejects(store.update(record, '7', signal()), LeaseConflictError);
    handler = (_req, _body, res) => json(res, 500, status(500, 'InternalError'));
    await assert.rejects(store.get(signal()), (error: unknown) => !(error instanceof LeaseConflictError));
  });

  it('updates with PUT carrying the resourceVersion and keeps labels of the Lease it read', async () => {
    const wire = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l', namespace: 'ops', resourceVersion: '99', labels: { team: 'ops' }, uid: 'u-1' },
      spec: { holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 3, acquireTime: '2026-12-02T10:00:00.000001Z', renewTime: '2026-12-02T10:00:09.500000Z' },
    };
    handler = (req, body, res) => {
      if (req.method === 'GET') json(res, 200, wire);
      else json(res, 200, { ...(body as object), metadata: { ...(body as { metadata: object }).metadata, resourceVersion: '100' } });
    };
    const store = new KubeLeaseStore({ api, namespace: 'ops', name: 'l' });
    const read = await store.get(signal());
    assert.deepEqual(read, {
      record: {
        holderIdentity: 'b',
        leaseDurationSeconds: 15,
        leaseTransitions: 3,
        acquireTimeMs: Date.UTC(2026, 11, 2, 10, 0, 0, 0),
        renewTimeMs: Date.UTC(2026, 11, 2, 10, 0, 9, 500),
      },
      resourceVersion: '99',
    });
    const updated = await store.update(
      { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTimeMs: Date.UTC(2026, 11, 2, 10, 0, 30), renewTimeMs: Date.UTC(2026, 11, 2, 10, 0, 30), leaseTransitions: 4 },
      '99',
      signal(),
    );
    const sent = received.at(-1);
    assert.equal(sent?.method, 'PUT');
    assert.equal(sent?.url, `${PATH}/l`);
    const body = sent?.body as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
    assert.equal(body.metadata['resourceVersion'], '99');
    assert.deepEqual(body.metadata['labels'], { team: 'ops' });
    assert.equal(body.spec['renewTime'], '2026-12-02T10:00:30.000000Z');
    assert.equal(updated.resourceVersion, '100');
    assert.equal(updated.record.holderIdentity, 'a');
  });

  it('sends the kubeconfig credentials (per-call options append to, not replace, the client setup)', async () => {
    let auth: string | undefined;
    let agent: string | undefined;
    handler = (req, _body, res) => {
      auth = req.headers.authorization;
      agent = req.headers['user-agent'];
      json(res, 404, status(404, 'NotFound'));
    };
    await new KubeLeaseStore({ api, namespace: 'ops', name: 'l' }).get(signal());
    assert.equal(auth, 'Bearer secret-token');
    assert.equal(agent, 'kubernetes-client-javascript/2.0.1', 'the client middleware still ran');
  });

  // The timeout only guards against a hang if the request is NOT torn down (that is the failure).
  it('aborting the signal rejects at once and tears down the HTTP request', { timeout: 10_000 }, async () => {
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    handler = () => arrived(); // never answers
    const closed = new Promise<string>((resolve) => (onRequestClosed = resolve));
    const store = new KubeLeaseStore({ api, namespace: 'ops', name: 'hung' });
    const controller = new AbortController();
    const pending = store.get(controller.signal);
    await requestArrived;
    controller.abort(new Error('lease get timed out'));
    await assert.rejects(pending, /lease get timed out/);
    // The server sees the connection go away: the request was really cancelled, not left hanging.
    assert.equal(await closed, `GET ${PATH}/hung`);
    assert.deepEqual(closedRequests, [`GET ${PATH}/hung`]);
  });
});
