// The self-signed serving certificate: node:crypto and a real TLS handshake accept it, with the
// names, validity and key usages a serving certificate needs.
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { type AddressInfo } from 'node:net';
import { createServer, request } from 'node:https';
import { test } from 'node:test';

import { selfSignedCertificate } from '../../../src/http/self-signed.js';

const notBefore = new Date('2026-12-02T10:00:00Z');

test('parses as an X.509 v3 certificate with the names, validity and usages asked for', () => {
  const { cert, key } = selfSignedCertificate({ commonName: 'secondcron-metrics', dnsNames: ['localhost', 'sc.ns.svc'], ipAddresses: ['127.0.0.1'], notBefore, validDays: 365 });
  const x = new X509Certificate(cert);
  assert.equal(x.subject, 'CN=secondcron-metrics');
  assert.equal(x.issuer, x.subject, 'self-issued');
  assert.ok(x.verify(x.publicKey), 'self-signed');
  assert.ok(x.checkPrivateKey(createPrivateKey(key)), 'the key belongs to it');
  assert.equal(x.subjectAltName, 'DNS:localhost, DNS:sc.ns.svc, IP Address:127.0.0.1');
  assert.equal(Date.parse(x.validFrom), notBefore.getTime());
  assert.equal(Date.parse(x.validTo), notBefore.getTime() + 365 * 86_400_000);
  assert.equal(x.ca, false);
  assert.deepEqual(x.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'serverAuth');
});

test('GeneralizedTime from 2050 on, and a serial number that differs each time', () => {
  const late = new X509Certificate(selfSignedCertificate({ commonName: 'x', dnsNames: [], ipAddresses: [], notBefore: new Date('2049-12-31T00:00:00Z'), validDays: 2 }).cert);
  assert.equal(Date.parse(late.validTo), Date.parse('2050-01-02T00:00:00Z'));
  const a = new X509Certificate(selfSignedCertificate({ commonName: 'x', dnsNames: [], ipAddresses: [], notBefore, validDays: 1 }).cert);
  const b = new X509Certificate(selfSignedCertificate({ commonName: 'x', dnsNames: [], ipAddresses: [], notBefore, validDays: 1 }).cert);
  assert.notEqual(a.serialNumber, b.serialNumber);
});

test('a TLS client that trusts it completes a handshake for localhost', async () => {
  const { cert, key } = selfSignedCertificate({ commonName: 'secondcron-metrics', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], notBefore: new Date(Date.now() - 60_000), validDays: 1 });
  const server = createServer({ cert, key }, (_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const body = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', servername: 'localhost', port: (server.address() as AddressInfo).port, ca: cert, path: '/' }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(body, 'ok');
  } finally {
    server.close();
  }
});
