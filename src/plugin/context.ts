// What a subcommand may touch: output streams, the clock, randomness, stdin and the cluster (connected
// on first use, so commands that need no cluster never read a kubeconfig).
import type { Target } from './target.js';

export interface PluginContext {
  /** A block of output for stdout (a newline is added). */
  out(text: string): void;
  /** Output exactly as given (a JSONPath template decides its own newlines, as kubectl's). */
  raw(text: string): void;
  /** A "Warning: …" line on stderr. */
  warn(text: string): void;
  nowMs(): number;
  random(): number;
  readStdin(): string;
  target(): Promise<Target>;
}
