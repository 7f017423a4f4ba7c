// Self-signed X.509 certificates for tests that need several distinct client certificates.
// node:crypto makes keys and signatures but not certificates, and we assume no openssl CLI: this is
// the few DER structures a v1 certificate needs (RFC 5280 §4.1), signed with ECDSA P-256 / SHA-256.
import { X509Certificate, generateKeyPairSync, randomBytes, sign } from 'node:crypto';

export interface TestCertificate {
  /** PEM certificate. */
  cert: string;
  /** PEM PKCS#8 private key. */
  key: string;
  /** SHA-256 fingerprint as node's TLS peer certificate reports it. */
  fingerprint256: string;
}

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
}

const sequence = (...content: Buffer[]): Buffer => der(0x30, ...content);
const set = (...content: Buffer[]): Buffer => der(0x31, ...content);
const utf8 = (text: string): Buffer => der(0x0c, Buffer.from(text, 'utf8'));
const utcTime = (date: Date): Buffer => der(0x17, Buffer.from(date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z'));

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const value of rest) {
    const chunk = [value & 0x7f];
    for (let v = value >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const COMMON_NAME = '2.5.4.3';

/** A certificate for `commonName`, valid from an hour ago for a day. */
export function selfSignedCertificate(commonName: string): TestCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const name = sequence(set(sequence(oid(COMMON_NAME), utf8(commonName))));
  const serial = randomBytes(8);
  serial[0] = (serial[0] as number) & 0x7f; // positive INTEGER
  const now = Date.now();
  const tbs = sequence(
    der(0x02, serial),
    ECDSA_WITH_SHA256,
    name,
    sequence(utcTime(new Date(now - 3_600_000)), utcTime(new Date(now + 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = sign('sha256', tbs, privateKey); // DER ECDSA-Sig-Value
  const certificate = sequence(tbs, ECDSA_WITH_SHA256, der(0x03, Buffer.from([0]), signature));
  const cert = `-----BEGIN CERTIFICATE-----\n${certificate.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`.replace('\n\n', '\n');
  return {
    cert,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    fingerprint256: new X509Certificate(cert).fingerprint256,
  };
}
