// The self-signed serving certificate: node:crypto, OpenSSL and a real TLS handshake accept it, with
// the names, validity and key usages a serving certificate needs — every time, not 511 times in 512.
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { type AddressInfo } from 'node:net';
import { createServer, request } from 'node:https';
import { test } from 'node:test';
import { createSecureContext } from 'node:tls';

import { selfSignedCertificate } from '../../../src/http/self-signed.js';
import { selfSignedCertificate as testCertificate } from '../../support/self-signed-cert.js';

const notBefore = new Date('2026-12-02T10:00:00Z');

test('parses as an X.509 v3 certificate with the names, validity and usages asked for', async () => {
  const { cert, key } = await selfSignedCertificate({ commonName: 'secondcron-metrics', dnsNames: ['localhost', 'sc.ns.svc'], ipAddresses: ['127.0.0.1'], notBefore, validDays: 365 });
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

test('GeneralizedTime from 2050 on, and a serial number that differs each time', async () => {
  const late = new X509Certificate((await selfSignedCertificate({ commonName: 'x', dnsNames: [], ipAddresses: [], notBefore: new Date('2049-12-31T00:00:00Z'), validDays: 2 })).cert);
  assert.equal(Date.parse(late.validTo), Date.parse('2050-01-02T00:00:00Z'));
  const a = new X509Certificate((await selfSignedCertificate({ commonName: 'x', dnsNames: [], ipAddresses: [], notBefore, validDays: 1 })).cert);
  const b = new X509Certificate((await selfSignedCertificate({ commonName: 'x', dnsNames: [], ipAddresses: [], notBefore, validDays: 1 })).cert);
  assert.notEqual(a.serialNumber, b.serialNumber);
});

test('a TLS client that trusts it completes a handshake for localhost', async () => {
  const { cert, key } = await selfSignedCertificate({ commonName: 'secondcron-metrics', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], notBefore: new Date(Date.now() - 60_000), validDays: 1 });
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

// A random serial whose first byte was 0 was once written with an illegal leading zero: OpenSSL
// refused 1 certificate in 512 (the operator exited at start) and the test helper's 1 in 512.
test('1,000 serving certificates and 250 test certificates: each parsed by OpenSSL and by X509Certificate', async () => {
  const refused: string[] = [];
  const check = (cert: string, key: string): void => {
    try {
      new X509Certificate(cert);
      createSecureContext({ cert, key }); // OpenSSL's own PEM/DER parser, as the HTTPS server uses it
    } catch (err) {
      refused.push(err instanceof Error ? err.message : String(err));
    }
  };
  for (let i = 0; i < 1_000; i++) {
    const { cert, key } = await selfSignedCertificate({ commonName: 'x', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], notBefore, validDays: 1 });
    check(cert, key);
  }
  for (let i = 0; i < 250; i++) {
    const { cert, key } = await testCertificate(`client-${i}`);
    check(cert, key);
  }
  assert.deepEqual(refused, []);
});
