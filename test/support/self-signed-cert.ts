// Self-signed X.509 certificates for tests that need several distinct certificates (client
// certificates, a test server's own): ECDSA P-256 / SHA-256 by @peculiar/x509 on Node's WebCrypto.
import { X509Certificate, webcrypto } from 'node:crypto';

// @peculiar/x509 2.x resolves its providers through tsyringe, which needs this polyfill loaded first.
import 'reflect-metadata';

import { PemConverter, SubjectAlternativeNameExtension, X509CertificateGenerator } from '@peculiar/x509';

export interface TestCertificate {
  /** PEM certificate. */
  cert: string;
  /** PEM PKCS#8 private key. */
  key: string;
  /** SHA-256 fingerprint as node's TLS peer certificate reports it. */
  fingerprint256: string;
}

const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/** A certificate for `commonName` (also its DNS or IP subject alternative name), valid from an hour ago for a day. */
export async function selfSignedCertificate(commonName: string): Promise<TestCertificate> {
  const keys = await webcrypto.subtle.generateKey(ECDSA_P256, true, ['sign', 'verify']);
  const now = Date.now();
  const certificate = await X509CertificateGenerator.createSelfSigned(
    {
      name: [{ CN: [commonName] }],
      notBefore: new Date(now - 3_600_000),
      notAfter: new Date(now + 86_400_000),
      signingAlgorithm: ECDSA_P256,
      keys,
      extensions: [new SubjectAlternativeNameExtension([{ type: /^[\d.]+$/.test(commonName) ? 'ip' : 'dns', value: commonName }])],
    },
    webcrypto as unknown as Parameters<typeof X509CertificateGenerator.createSelfSigned>[1],
  );
  const cert = certificate.toString('pem') + '\n';
  return {
    cert,
    key: PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY') + '\n',
    fingerprint256: new X509Certificate(cert).fingerprint256,
  };
}
