// The self-signed metrics certificate carries the metrics Service's DNS names and renews itself at two
// thirds of its lifetime (a fake clock moves the year), through the same watch → setSecureContext path
// as a renewed mounted certificate: a running HTTPS server presents the new certificate to new
// connections, with a new key, the same names and a new validity.
import 'reflect-metadata';

import assert from 'node:assert/strict';
import { X509Certificate as NodeX509 } from 'node:crypto';
import { test } from 'node:test';

import { SubjectAlternativeNameExtension, X509Certificate } from '@peculiar/x509';
import { Registry } from 'prom-client';

import { FakeClock } from '../../../src/clock/fake-clock.js';
import { selfRenewingCertificate } from '../../../src/http/self-renewing.js';
import { serveMetrics } from '../../../src/http/servers.js';
import { MetricsExposition } from '../../../src/metrics/exposition.js';
import { presentedCertificate } from '../../support/tls-peer.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 11, 5, 8, 0, 0);
const SERVICE_NAMES = ['sc-secondcron-metrics.ops.svc', 'sc-secondcron-metrics.ops.svc.cluster.local'];

function names(pem: string): string[] {
  const san = new X509Certificate(pem).getExtension(SubjectAlternativeNameExtension);
  assert.ok(san, 'a subjectAltName extension');
  return san.names.items.map((n) => `${n.type}:${n.value}`);
}

test('the Service DNS names in the certificate; renewed at two thirds of its lifetime and served to new connections', { timeout: 60_000 }, async () => {
  const clock = new FakeClock({ wallStartMs: START });
  const renewed: Date[] = [];
  let onRenewed = (): void => {};
  const certificate = await selfRenewingCertificate({
    commonName: 'secondcron-metrics',
    dnsNames: [...SERVICE_NAMES, 'localhost', 'sc-secondcron-abc-xyz'],
    ipAddresses: ['127.0.0.1'],
    validDays: 365,
    wall: clock.wall,
    timers: clock.timers,
    onRenewed: (notAfter) => {
      renewed.push(notAfter);
      onRenewed();
    },
    onError: (err) => assert.fail(err),
  });
  const first = certificate.current();
  const x1 = new X509Certificate(first.cert);
  assert.deepEqual(names(first.cert), [...SERVICE_NAMES, 'localhost', 'sc-secondcron-abc-xyz'].map((n) => `dns:${n}`).concat('ip:127.0.0.1'));
  assert.equal(x1.notBefore.getTime(), START - HOUR, 'an hour back for clock skew');
  assert.equal(x1.notAfter.getTime(), START - HOUR + 365 * DAY);
  assert.equal(clock.armedCount, 0, 'nothing runs until a server watches it');

  const server = await serveMetrics(0, new MetricsExposition(new Registry(), undefined), { secure: { certificate, authorize: () => Promise.resolve({ status: 200 }) } });
  try {
    assert.equal((await presentedCertificate(server.port)).fingerprint256, new NodeX509(first.cert).fingerprint256);

    // Two thirds of the lifetime (from notBefore) less a second: not yet.
    const renewAt = START - HOUR + Math.round((2 * 365 * DAY) / 3);
    clock.advanceTo(renewAt - START - 1_000);
    assert.equal(renewed.length, 0);
    assert.equal(certificate.current(), first);
    const pending = clock.pendingTimers();
    assert.ok(pending.length === 1 && (pending[0]?.delayMs ?? 0) <= HOUR, 'the wall clock is looked at at least hourly');

    const done = new Promise<void>((resolve) => (onRenewed = resolve));
    clock.advance(2_000);
    await done;
    assert.equal(renewed.length, 1);
    const second = certificate.current();
    assert.notEqual(second.cert, first.cert);
    assert.notEqual(second.key, first.key, 'a new key');
    const x2 = new X509Certificate(second.cert);
    assert.deepEqual(names(second.cert), names(first.cert), 'the same names');
    // Made when it came due (the clock is looked at hourly, and then at the instant), not later.
    assert.ok(x2.notBefore.getTime() >= renewAt - HOUR && x2.notBefore.getTime() <= renewAt - HOUR + 1_000, x2.notBefore.toISOString());
    assert.equal(x2.notAfter.getTime() - x2.notBefore.getTime(), 365 * DAY);
    assert.equal(renewed[0]?.getTime(), x2.notAfter.getTime());
    assert.ok(x2.notAfter.getTime() > x1.notAfter.getTime());

    // The running server swapped it in (setSecureContext): a new connection gets the new certificate.
    assert.equal((await presentedCertificate(server.port)).fingerprint256, new NodeX509(second.cert).fingerprint256);
    assert.equal(clock.pendingTimers().length, 1, 'the next renewal is waited for');
  } finally {
    await server.close();
  }
  assert.equal(clock.armedCount, 0, 'the closed server stopped the renewals');
});
