// A self-signed serving certificate for /metrics over HTTPS when none is mounted, as kubebuilder's
// scaffold does (controller-runtime generates one at start). Node 20's crypto makes keys and signs
// but has no X.509 writer, and the only packages that have one bring a whole ASN.1/crypto stack
// (node-forge); an ECDSA P-256 certificate is a few dozen DER fields, written here. node:crypto's
// X509Certificate parses the result back in the unit test.
import { type KeyObject, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIPv4 } from 'node:net';

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

export function selfSignedCertificate(opts: SelfSignedOptions): PemPair {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(opts.commonName, 'utf8')))));
  const notAfter = new Date(opts.notBefore.getTime() + opts.validDays * 86_400_000);
  const altNames = [
    ...opts.dnsNames.map((d) => tlv(0x82, Buffer.from(d, 'ascii'))),
    ...opts.ipAddresses.filter((ip) => isIPv4(ip)).map((ip) => tlv(0x87, Buffer.from(ip.split('.').map(Number)))),
  ];
  const extensions = seq(
    extension('2.5.29.15', true, tlv(0x03, Buffer.from([0x07, 0x80]))), // keyUsage: digitalSignature
    extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
    extension('2.5.29.19', true, seq()), // basicConstraints: not a CA
    extension('2.5.29.17', false, seq(...altNames)), // subjectAltName
  );
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))), // v3
    integer(randomBytes(16)),
    ecdsaWithSha256,
    name,
    seq(time(opts.notBefore), time(notAfter)),
    name,
    publicKeyInfo(privateKey),
    tlv(0xa3, extensions),
  );
  const signature = sign('sha256', tbs, privateKey); // DER-encoded ECDSA signature
  const cert = seq(tbs, ecdsaWithSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return { cert: pem('CERTIFICATE', cert), key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

function publicKeyInfo(privateKey: KeyObject): Buffer {
  return createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

function tlv(tag: number, content: Buffer): Buffer {
  const n = content.length;
  let len: Buffer;
  if (n < 0x80) len = Buffer.from([n]);
  else if (n < 0x100) len = Buffer.from([0x81, n]);
  else len = Buffer.from([0x82, n >> 8, n & 0xff]); // certificates stay far below 64 KiB
  return Buffer.concat([Buffer.from([tag]), len, content]);
}

function seq(...items: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function set(...items: Buffer[]): Buffer {
  return tlv(0x31, Buffer.concat(items));
}

/** A non-negative INTEGER from big-endian bytes (a leading 0 keeps the top bit from meaning "negative"). */
function integer(bytes: Buffer): Buffer {
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const base128 = [n & 0x7f];
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) base128.unshift((v & 0x7f) | 0x80);
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime before 2050, GeneralizedTime from then on (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii')) : tlv(0x18, Buffer.from(digits, 'ascii'));
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
