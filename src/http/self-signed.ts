// A self-signed serving certificate for /metrics over HTTPS when none is mounted, as kubebuilder's
// scaffold does (controller-runtime generates one at start). Written by @peculiar/x509 on Node's
// WebCrypto: a hand-written DER writer here once produced an illegal INTEGER padding in 1 start of 512.
import { webcrypto } from 'node:crypto';

// @peculiar/x509 2.x resolves its providers through tsyringe, which needs this polyfill loaded first.
import 'reflect-metadata';

import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  PemConverter,
  SubjectAlternativeNameExtension,
  X509CertificateGenerator,
} from '@peculiar/x509';

export interface SelfSignedOptions {
  commonName: string;
  dnsNames: string[];
  ipAddresses: string[];
  notBefore: Date;
  validDays: number;
}

export interface PemPair {
  cert: string;
  key: string;
}

const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/** An ECDSA P-256 certificate for serverAuth with the given names, not a CA. */
export async function selfSignedCertificate(opts: SelfSignedOptions): Promise<PemPair> {
  const keys = await webcrypto.subtle.generateKey(ECDSA_P256, true, ['sign', 'verify']);
  const cert = await X509CertificateGenerator.createSelfSigned(
    {
      name: [{ CN: [opts.commonName] }],
      notBefore: opts.notBefore,
      notAfter: new Date(opts.notBefore.getTime() + opts.validDays * 86_400_000),
      signingAlgorithm: ECDSA_P256,
      keys,
      extensions: [
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth]),
        new BasicConstraintsExtension(false, undefined, true),
        new SubjectAlternativeNameExtension([
          ...opts.dnsNames.map((value) => ({ type: 'dns' as const, value })),
          ...opts.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
        ]),
      ],
    },
    webcrypto as unknown as Parameters<typeof X509CertificateGenerator.createSelfSigned>[1],
  );
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { cert: cert.toString('pem') + '\n', key: PemConverter.encode(pkcs8, 'PRIVATE KEY') + '\n' };
}
