// The metrics port's TLS: by default TLS 1.2 or 1.3 and, of TLS 1.2, only ECDHE with AES-GCM or
// ChaCha20 — a client that offers only CBC with SHA-1, or only TLS 1.1, gets no handshake — and the
// policy stays after the certificate is renewed. --metrics-tls-min-version VersionTLS13 refuses TLS 1.2.
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { after, before, describe, test } from 'node:test';

import { Registry } from 'prom-client';

import type { PemPair } from '../../../src/http/self-signed.js';
import { type RunningServer, serveMetrics } from '../../../src/http/servers.js';
import { type TlsPolicy, parseCipherSuites } from '../../../src/http/tls-policy.js';
import { MetricsExposition } from '../../../src/metrics/exposition.js';
import { selfSignedCertificate } from '../../support/self-signed-cert.js';

const exposition = new MetricsExposition(new Registry(), undefined);

/** The negotiated protocol and cipher, or the handshake's error code. */
function handshake(port: number, opts: { ciphers?: string; minVersion?: 'TLSv1' | 'TLSv1.2'; maxVersion?: 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3' }): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', rejectUnauthorized: false, ...opts }, () => {
      resolve(`${socket.getProtocol() ?? ''} ${socket.getCipher().name}`);
      socket.destroy();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code ?? err.message}`));
  });
}

async function start(tls?: TlsPolicy): Promise<{ server: RunningServer; renew: (pair: PemPair) => void }> {
  let onChange: (pair: PemPair) => void = () => {};
  const pair = await selfSignedCertificate('127.0.0.1');
  const server = await serveMetrics(0, exposition, {
    secure: {
      certificate: { current: () => pair, watch: (cb) => ((onChange = cb), () => {}) },
      authorize: () => Promise.resolve({ status: 200 }),
      ...(tls ? { tls } : {}),
    },
  });
  return { server, renew: (p) => onChange(p) };
}

describe('default policy', () => {
  let s: Awaited<ReturnType<typeof start>>;
  before(async () => (s = await start()));
  after(() => s.server.close());

  test('TLS 1.3 and TLS 1.2 with ECDHE + AES-GCM are accepted', async () => {
    assert.match(await handshake(s.server.port, {}), /^TLSv1\.3 TLS_/);
    assert.equal(await handshake(s.server.port, { maxVersion: 'TLSv1.2' }), 'TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256');
    assert.equal(await handshake(s.server.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-CHACHA20-POLY1305' }), 'TLSv1.2 ECDHE-ECDSA-CHACHA20-POLY1305');
  });

  test('CBC with SHA-1 (or SHA-256) and TLS 1.1 are refused', async () => {
    for (const ciphers of ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES256-SHA', 'ECDHE-ECDSA-AES128-SHA256']) {
      assert.match(await handshake(s.server.port, { maxVersion: 'TLSv1.2', ciphers }), /^error /, ciphers);
    }
    assert.match(await handshake(s.server.port, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' }), /^error /);
  });

  test('the policy stays after the certificate is renewed', async () => {
    s.renew(await selfSignedCertificate('127.0.0.1'));
    assert.match(await handshake(s.server.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA' }), /^error /);
    assert.equal(await handshake(s.server.port, { maxVersion: 'TLSv1.2' }), 'TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256');
  });
});

test('VersionTLS13 refuses TLS 1.2; a chosen suite list is the only one offered', async () => {
  const v13 = await start({ minVersion: 'VersionTLS13', cipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'] });
  const chosen = await start({ minVersion: 'VersionTLS12', cipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'] });
  try {
    assert.match(await handshake(v13.server.port, { maxVersion: 'TLSv1.2' }), /^error /);
    assert.match(await handshake(v13.server.port, {}), /^TLSv1\.3 /);
    assert.equal(await handshake(chosen.server.port, { maxVersion: 'TLSv1.2' }), 'TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384');
    assert.match(await handshake(chosen.server.port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' }), /^error /);
  } finally {
    await Promise.all([v13.server.close(), chosen.server.close()]);
  }
});

test('cipher suite names: IANA names of the allowed suites only', () => {
  assert.deepEqual(parseCipherSuites('TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256'), [
    'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
    'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
  ]);
  assert.equal(parseCipherSuites('TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA'), undefined);
  assert.equal(parseCipherSuites('ECDHE-ECDSA-AES128-GCM-SHA256'), undefined);
  assert.equal(parseCipherSuites(''), undefined);
});
