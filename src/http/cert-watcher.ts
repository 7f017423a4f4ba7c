// A serving certificate mounted from a Secret (tls.crt, tls.key), followed as it is renewed, like
// controller-runtime's certwatcher: the files are read again every poll interval (the kubelet swaps a
// Secret volume's files at once by renaming its `..data` symlink, so a read sees old or new, and a
// renewal by cert-manager shows up within the kubelet's sync period plus one poll). A pair that does
// not load (new certificate, old key: caught half-way through a non-atomic copy) is skipped, the
// previous one is kept and the problem reported; the next poll tries again.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { TimerHandle, Timers } from '../clock/clock.js';
import type { PemPair } from './self-signed.js';

/** The certificate an HTTPS server presents; `watch` tells of each new one. */
export interface ServingCertificate {
  current(): PemPair;
  /** Called with every new pair from then on; returns a function that stops watching. */
  watch(onChange: (pair: PemPair) => void): () => void;
}

/** controller-runtime's certwatcher polls every 10 s besides its fsnotify events. */
export const CERT_POLL_MS = 10_000;

export interface CertDirOptions {
  timers: Timers;
  pollMs?: number;
  /** A changed pair that cannot be used (kept the previous one). */
  onError: (err: Error) => void;
  /** A new pair is being served. */
  onReload?: (fingerprint256: string) => void;
}

/** tls.crt and tls.key from `dir`; throws at once if they do not form a usable pair. */
export function certificateFromDir(dir: string, opts: CertDirOptions): ServingCertificate {
  const read = (): PemPair => {
    const pair = { cert: readFileSync(join(dir, 'tls.crt'), 'utf8'), key: readFileSync(join(dir, 'tls.key'), 'utf8') };
    if (!new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key))) {
      throw new Error(`${join(dir, 'tls.crt')} does not match ${join(dir, 'tls.key')}`);
    }
    return pair;
  };
  let pair = read();
  return {
    current: () => pair,
    watch: (onChange) => {
      let handle: TimerHandle | undefined;
      let stopped = false;
      let lastError = '';
      const poll = (): void => {
        try {
          const next = read();
          if (next.cert !== pair.cert || next.key !== pair.key) {
            pair = next;
            onChange(next);
            opts.onReload?.(new X509Certificate(next.cert).fingerprint256);
          }
          lastError = '';
        } catch (err) {
          const error = err instanceof Error ? err : new Error(String(err));
          // Told once per distinct problem, not every poll while it lasts.
          if (error.message !== lastError) opts.onError(error);
          lastError = error.message;
        }
        if (!stopped) handle = opts.timers.set(opts.pollMs ?? CERT_POLL_MS, poll);
      };
      handle = opts.timers.set(opts.pollMs ?? CERT_POLL_MS, poll);
      return () => {
        stopped = true;
        if (handle) opts.timers.clear(handle);
        handle = undefined;
      };
    },
  };
}
