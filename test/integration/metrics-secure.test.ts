// The binary's default (--metrics-secure, no flag given) on the real control plane: /metrics over
// HTTPS (a self-signed certificate made at start), authenticated by a TokenReview and authorized by a SubjectAccessReview for
// `get /metrics`. No token: 401; a ServiceAccount without the role: 403; one bound to a ClusterRole
// like the chart's `<release>-metrics-reader`: the data, and a real Prometheus scrapes it with that token.
// With --metrics-cert-dir (the chart's certSecret / cert-manager Certificate), a real Prometheus
// verifies the certificate against its CA for the Service's name, as the chart's ServiceMonitor does,
// and refuses it for any other name.
import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, test } from 'node:test';

import { installCrd } from '../cluster/crd.js';
import { type TestNamespace, kubectl, kubectlOk, uniqueNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { type OperatorProcess, startOperator } from './helpers/operator.js';
import { PrometheusServer } from './helpers/prometheus-server.js';
import { selfSignedCertificate } from '../support/self-signed-cert.js';

interface Answer {
  status: number;
  body: string;
  certificate: X509Certificate;
}

/** GET https://127.0.0.1:port/metrics, trusting nothing but reporting the certificate it was shown. */
function getMetrics(port: number, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/metrics', agent: false, rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (res) => {
        const raw = (res.socket as TLSSocket).getPeerX509Certificate();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (!raw) return reject(new Error('no peer certificate'));
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), certificate: raw });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A metrics Service's name, as the chart passes it. */
const SERVICE_NAME = 'sc-secondcron-metrics.ops.svc';

describe('metrics served securely (--metrics-secure)', { timeout: 180_000 }, () => {
  let ns: TestNamespace | undefined;
  let operator: OperatorProcess | undefined;
  let prom: PrometheusServer | undefined;
  const reader = `secondcron-metrics-reader-${randomBytes(3).toString('hex')}`;

  const port = (): number => {
    assert.ok(operator, 'operator started');
    return operator.metricsPort;
  };
  const token = async (sa: string): Promise<string> => {
    assert.ok(ns);
    return (await kubectlOk(['create', 'token', sa, '-n', ns.name, '--duration=10m'])).trim();
  };

  before(async () => {
    await installCrd(kubectl);
    ns = await uniqueNamespace('metrics-secure');
    for (const sa of ['prometheus', 'nobody']) await kubectlOk(['create', 'serviceaccount', sa, '-n', ns.name]);
    // What the chart creates as <release>-metrics-reader, bound to Prometheus' ServiceAccount.
    await kubectlOk(['create', 'clusterrole', reader, '--verb=get', '--non-resource-url=/metrics']);
    await kubectlOk(['create', 'clusterrolebinding', reader, `--clusterrole=${reader}`, `--serviceaccount=${ns.name}:prometheus`]);
    operator = await startOperator({ namespaces: [ns.name], identity: 'secure-0', metricsSecure: true, args: ['--leader-elect=false', `--metrics-cert-dns-names=${SERVICE_NAME}`] });
  });

  after(async () => {
    await prom?.stop();
    await operator?.dispose();
    await kubectl(['delete', 'clusterrolebinding', reader, '--ignore-not-found']);
    await kubectl(['delete', 'clusterrole', reader, '--ignore-not-found']);
    await ns?.cleanup();
  });

  test('plain HTTP is not served on the metrics port', async () => {
    const res = await fetch(`http://127.0.0.1:${port()}/metrics`).catch((err: unknown) => err);
    assert.ok(!(res instanceof Response && res.status === 200), 'no metrics over plain HTTP');
  });

  test('HTTPS with a self-signed certificate for the Service name (--metrics-cert-dns-names), localhost and 127.0.0.1', async () => {
    const { certificate } = await getMetrics(port());
    assert.ok(certificate.verify(certificate.publicKey), 'self-signed');
    assert.equal(certificate.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(certificate.checkHost('localhost'), 'localhost');
    assert.equal(certificate.checkHost(SERVICE_NAME), SERVICE_NAME);
    assert.equal(certificate.checkHost('other-metrics.ops.svc'), undefined);
    assert.ok(Date.parse(certificate.validTo) > Date.now() + 300 * 86_400_000, 'valid for about a year');
  });

  test('no token: 401; a garbage token: 401', async () => {
    const none = await getMetrics(port());
    assert.equal(none.status, 401, none.body);
    const garbage = await getMetrics(port(), 'not-a-token');
    assert.equal(garbage.status, 401, garbage.body);
    assert.equal(garbage.body, 'Unauthorized\n', 'nothing about the review to an unauthenticated caller');
  });

  test('a ServiceAccount without the role: 403; who was refused is in the log, not in the answer', async () => {
    const res = await getMetrics(port(), await token('nobody'));
    assert.equal(res.status, 403, res.body);
    assert.equal(res.body, 'Forbidden\n');
    assert.ok(operator);
    assert.match(operator.logs(), /"msg":"metrics request refused","user":"system:serviceaccount:[^:"]+:nobody","verb":"get","path":"\/metrics"/);
  });

  test('the ServiceAccount bound to the metrics-reader role gets the metrics', async () => {
    const res = await getMetrics(port(), await token('prometheus'));
    assert.equal(res.status, 200, res.body);
    assert.match(res.body, /^secondcron_leader 1$/m);
  });

  test('a real Prometheus scrapes it with that token', async () => {
    prom = await PrometheusServer.start({
      scrapeInterval: '1s',
      jobs: [{ name: 'secondcron', targets: [`127.0.0.1:${port()}`], httpsBearerToken: await token('prometheus') }],
    });
    const running = prom;
    await eventually(
      'secondcron_leader scraped over HTTPS',
      async () => {
        const [up] = await running.vector('up{job="secondcron"}');
        const [leader] = await running.vector('secondcron_leader{job="secondcron"}');
        return Number(up?.value[1]) === 1 && Number(leader?.value[1]) === 1 ? true : undefined;
      },
      { timeoutMs: 30_000 },
    ).catch(async (err: unknown) => assert.fail(`${String(err)}: ${JSON.stringify(await running.targets())}`));
  });
});

describe('metrics served with a mounted certificate: a real Prometheus verifies it (the chart\'s ServiceMonitor with certSecret or cert-manager)', { timeout: 180_000 }, () => {
  // The name the chart's ServiceMonitor verifies: <fullname>-metrics.<namespace>.svc.
  const SERVICE_NAME = 'sc-secondcron-metrics.secondcron-system.svc';
  let ns: TestNamespace | undefined;
  let operator: OperatorProcess | undefined;
  const proms: PrometheusServer[] = [];
  let dir = '';
  const reader = `secondcron-metrics-reader-${randomBytes(3).toString('hex')}`;

  before(async () => {
    await installCrd(kubectl);
    ns = await uniqueNamespace('metrics-verified');
    await kubectlOk(['create', 'serviceaccount', 'prometheus', '-n', ns.name]);
    await kubectlOk(['create', 'clusterrole', reader, '--verb=get', '--non-resource-url=/metrics']);
    await kubectlOk(['create', 'clusterrolebinding', reader, `--clusterrole=${reader}`, `--serviceaccount=${ns.name}:prometheus`]);
    // What cert-manager writes into the Secret: tls.crt, tls.key, ca.crt (here the certificate is its own CA).
    const cert = await selfSignedCertificate(SERVICE_NAME);
    dir = mkdtempSync(join(tmpdir(), 'secondcron-metrics-cert-'));
    writeFileSync(join(dir, 'tls.crt'), cert.cert);
    writeFileSync(join(dir, 'tls.key'), cert.key);
    writeFileSync(join(dir, 'ca.crt'), cert.cert);
    operator = await startOperator({ namespaces: [ns.name], identity: 'verified-0', metricsSecure: true, args: ['--leader-elect=false', '--metrics-cert-dir', dir] });
  });

  after(async () => {
    for (const p of proms) await p.stop();
    await operator?.dispose();
    await kubectl(['delete', 'clusterrolebinding', reader, '--ignore-not-found']);
    await kubectl(['delete', 'clusterrole', reader, '--ignore-not-found']);
    await ns?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('verified for the Service name: up; for another name: down with a certificate error', async () => {
    assert.ok(operator && ns);
    const token = (await kubectlOk(['create', 'token', 'prometheus', '-n', ns.name, '--duration=10m'])).trim();
    const target = `127.0.0.1:${operator.metricsPort}`;
    const caFile = join(dir, 'ca.crt');
    const prom = await PrometheusServer.start({
      scrapeInterval: '1s',
      jobs: [
        { name: 'verified', targets: [target], httpsBearerToken: token, verify: { caFile, serverName: SERVICE_NAME } },
        { name: 'wrong-name', targets: [target], httpsBearerToken: token, verify: { caFile, serverName: 'someone-else.secondcron-system.svc' } },
      ],
    });
    proms.push(prom);
    await eventually(
      'the verified job is up with data, the other down for its certificate',
      async () => {
        const targets = await prom.targets();
        const verified = targets.find((t) => t.labels.job === 'verified');
        const wrong = targets.find((t) => t.labels.job === 'wrong-name');
        const [leader] = await prom.vector('secondcron_leader{job="verified"}');
        return verified?.health === 'up' && Number(leader?.value[1]) === 1 && wrong?.health === 'down' && /x509|certificate/.test(wrong.lastError) ? true : undefined;
      },
      { timeoutMs: 30_000 },
    ).catch(async (err: unknown) => assert.fail(`${String(err)}: ${JSON.stringify(await prom.targets())}`));
  });
});
