// The metrics port's self-signed certificate (no certificate mounted), made at start and made again,
// with a new key, once two thirds of its lifetime have passed — cert-manager's default renewal point —
// so an operator that runs longer than the certificate's year never presents an expired one. Watchers
// get each new pair, as they get a renewed mounted one (cert-watcher.ts), and the server swaps it in
// with setSecureContext: new connections get the new certificate, open ones keep theirs.
import type { TimerHandle, Timers, WallClock } from '../clock/clock.js';
import type { ServingCertificate } from './cert-watcher.js';
import { type PemPair, selfSignedCertificate } from './self-signed.js';

export interface SelfRenewingOptions {
  commonName: string;
  /** Subject alternative names: the metrics Service's DNS names, the pod's name, localhost. */
  dnsNames: string[];
  ipAddresses: string[];
  validDays: number;
  wall: WallClock;
  timers: Timers;
  /** A new certificate is being served; `notAfter` is its expiry. */
  onRenewed: (notAfter: Date) => void;
  /** Making a new one failed; the current one is kept and it is tried again a minute later. */
  onError: (err: Error) => void;
}

const DAY_MS = 86_400_000;
/** notBefore this far back, for clocks behind ours. */
const BACKDATE_MS = 3_600_000;
/** The wall clock is looked at at least this often: it may be stepped (NTP, a resumed VM). */
const CHECK_MS = 3_600_000;
const RETRY_MS = 60_000;

interface Issued {
  pair: PemPair;
  notAfterMs: number;
  renewAtMs: number;
}

/** A self-signed ServingCertificate that renews itself while it is watched (i.e. while a server uses it). */
export async function selfRenewingCertificate(opts: SelfRenewingOptions): Promise<ServingCertificate> {
  const issue = async (): Promise<Issued> => {
    const notBeforeMs = opts.wall.nowMs() - BACKDATE_MS;
    const lifetimeMs = opts.validDays * DAY_MS;
    const pair = await selfSignedCertificate({ commonName: opts.commonName, dnsNames: opts.dnsNames, ipAddresses: opts.ipAddresses, notBefore: new Date(notBeforeMs), validDays: opts.validDays });
    return { pair, notAfterMs: notBeforeMs + lifetimeMs, renewAtMs: notBeforeMs + Math.round((2 * lifetimeMs) / 3) };
  };
  let current = await issue();
  const watchers = new Set<(pair: PemPair) => void>();
  let handle: TimerHandle | undefined;
  let renewing = false;

  const arm = (delayMs: number): void => {
    if (watchers.size > 0 && handle === undefined && !renewing) handle = opts.timers.set(delayMs, check);
  };
  function check(): void {
    handle = undefined;
    const untilDue = current.renewAtMs - opts.wall.nowMs();
    if (untilDue > 0) return arm(Math.min(untilDue, CHECK_MS));
    renewing = true;
    issue().then(
      (next) => {
        renewing = false;
        current = next;
        for (const onChange of watchers) onChange(next.pair);
        opts.onRenewed(new Date(next.notAfterMs));
        arm(Math.min(next.renewAtMs - opts.wall.nowMs(), CHECK_MS));
      },
      (err: unknown) => {
        renewing = false;
        opts.onError(err instanceof Error ? err : new Error(String(err)));
        arm(RETRY_MS);
      },
    );
  }

  return {
    current: () => current.pair,
    watch: (onChange) => {
      watchers.add(onChange);
      if (watchers.size === 1 && !renewing) check();
      return () => {
        watchers.delete(onChange);
        if (watchers.size === 0 && handle !== undefined) {
          opts.timers.clear(handle);
          handle = undefined;
        }
      };
    },
  };
}
