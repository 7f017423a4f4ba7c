// SIGTERM/SIGINT handling, installed before anything else in main.
//
// In the image node is PID 1, and the kernel drops every signal PID 1 has no handler for: without
// one, the kubelet's SIGTERM does nothing and a pod deleted during start-up (say, while the API
// server is slow to list) lives on for its whole termination grace period, then gets SIGKILL.
// So the handler exists from the first line on. Until the program claims shutdown (once it holds
// something worth releasing: a Lease, Jobs being created), a signal exits at once. A second signal
// always exits at once (controller-runtime's SetupSignalHandler does the same).

import type { Logger } from './log.js';

export type ShutdownHandler = (signal: NodeJS.Signals) => Promise<void>;

export interface ShutdownSignals {
  /** Aborted by the first signal, for work that can be cancelled. */
  readonly aborted: AbortSignal;
  /** From now on the first signal runs this instead of exiting at once; the process exits when it settles. */
  onShutdown(handler: ShutdownHandler): void;
}

export interface SignalProcess {
  on(event: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  exit(code: number): never;
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

export function installShutdownSignals(log: Pick<Logger, 'info' | 'error'>, proc: SignalProcess = process): ShutdownSignals {
  const controller = new AbortController();
  let handler: ShutdownHandler | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      log.info('second signal; exiting now', { signal });
      return proc.exit(1);
    }
    controller.abort(signal);
    if (!handler) {
      log.info('signal during start-up; exiting now', { signal });
      return proc.exit(0);
    }
    handler(signal).then(
      () => proc.exit(0),
      (err: unknown) => {
        log.error('shutdown failed', { signal, err: err instanceof Error ? err : String(err) });
        proc.exit(1);
      },
    );
  };
  for (const signal of SIGNALS) proc.on(signal, onSignal);
  return {
    aborted: controller.signal,
    onShutdown: (h) => {
      handler = h;
    },
  };
}
