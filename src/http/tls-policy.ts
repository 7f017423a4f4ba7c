// Which TLS the metrics port speaks: TLS 1.2 or newer, and of TLS 1.2 only ECDHE with an AEAD cipher
// (AES-GCM, ChaCha20-Poly1305), the suites Kubernetes components and Mozilla's "intermediate" profile
// keep. Node's default list would also agree to CBC with SHA-1 (ECDHE-ECDSA-AES128-SHA). Both are
// flags, named as Kubernetes components name them (--tls-min-version VersionTLS12,
// --tls-cipher-suites with IANA names); TLS 1.3's suites are all AEAD and always on.

/** IANA name → OpenSSL name, for the suites that may be chosen. */
export const TLS12_CIPHER_SUITES: Readonly<Record<string, string>> = {
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
};
const TLS13_SUITES = 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256';

export type TlsMinVersion = 'VersionTLS12' | 'VersionTLS13';
export const TLS_MIN_VERSIONS: readonly TlsMinVersion[] = ['VersionTLS12', 'VersionTLS13'];

export interface TlsPolicy {
  minVersion: TlsMinVersion;
  /** IANA names of the TLS 1.2 suites, all keys of TLS12_CIPHER_SUITES. */
  cipherSuites: readonly string[];
}

export const DEFAULT_TLS_POLICY: TlsPolicy = { minVersion: 'VersionTLS12', cipherSuites: Object.keys(TLS12_CIPHER_SUITES) };

/** A comma list of IANA names, each one we allow; undefined if any is not. */
export function parseCipherSuites(list: string): string[] | undefined {
  const names = list.split(',').map((s) => s.trim()).filter((s) => s !== '');
  return names.length > 0 && names.every((n) => n in TLS12_CIPHER_SUITES) ? names : undefined;
}

/** The options of tls.createServer / https.createServer for a policy. */
export function tlsServerOptions(policy: TlsPolicy): { minVersion: 'TLSv1.2' | 'TLSv1.3'; ciphers: string; honorCipherOrder: boolean } {
  return {
    minVersion: policy.minVersion === 'VersionTLS13' ? 'TLSv1.3' : 'TLSv1.2',
    ciphers: [TLS13_SUITES, ...policy.cipherSuites.map((n) => TLS12_CIPHER_SUITES[n] as string)].join(':'),
    honorCipherOrder: true,
  };
}
