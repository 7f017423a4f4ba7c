// One place that knows every live resource of the test harness (control-plane processes, the test
// runner's child, temp dirs) so nothing outlives this Node process: disposed gracefully on
// SIGINT/SIGTERM, killed synchronously on 'exit'. Handlers are installed once, on first use.

export interface TrackedResource {
  readonly name: string;
  /** Graceful shutdown; called on SIGINT/SIGTERM. */
  dispose(): Promise<void>;
  /** Last resort, must be synchronous: runs inside process.on('exit'). */
  killNow(): void;
}

const live = new Set<TrackedResource>();
let installed = false;
let shuttingDown = false;

// Graceful shutdown of everything must not hang a Ctrl-C forever.
const SIGNAL_SHUTDOWN_LIMIT_MS = 15_000;

function killAllNow(): void {
  for (const r of [...live].reverse()) {
    try {
      r.killNow();
    } catch {
      // Best effort: the process is exiting anyway.
    }
  }
  live.clear();
}

async function disposeAll(): Promise<void> {
  // Newest first: a cluster registered after the runner's child is stopped before it, and the
  // control plane components are stopped before their apiserver.
  const items = [...live].reverse();
  await Promise.allSettled(items.map((r) => r.dispose()));
}

function onSignal(signal: NodeJS.Signals): void {
  const code = 128 + (signal === 'SIGINT' ? 2 : 15);
  if (shuttingDown) {
    // A second Ctrl-C: stop waiting.
    killAllNow();
    process.exit(code);
  }
  shuttingDown = true;
  process.stderr.write(`\n[test cluster] ${signal}: stopping ${live.size} resource(s)…\n`);
  const limit = setTimeout(() => {
    killAllNow();
    process.exit(code);
  }, SIGNAL_SHUTDOWN_LIMIT_MS);
  limit.unref();
  void disposeAll().finally(() => {
    killAllNow();
    process.exit(code);
  });
}

function installHandlers(): void {
  if (installed) return;
  installed = true;
  process.on('exit', killAllNow);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** True once SIGINT/SIGTERM started the shutdown: the registry will exit the process itself. */
export function shutdownInProgress(): boolean {
  return shuttingDown;
}

/** Tracks a resource until the returned function is called. */
export function track(resource: TrackedResource): () => void {
  installHandlers();
  live.add(resource);
  return () => {
    live.delete(resource);
  };
}
