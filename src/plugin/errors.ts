// Errors the plugin reports to its user: a message (kubectl's "error: …" style) and an exit code.
import { ApiError } from '../kube/api-error.js';

export class PluginError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'PluginError';
  }
}

/** "Error from server (NotFound): secondcronjobs.secondcron.io "x" not found", as kubectl words it. */
export function describeApiError(err: ApiError, server: string): string {
  if (err.status === 0) return `cannot reach the API server at ${server}: ${err.message}`;
  return `Error from server (${err.reason}): ${err.serverMessage ?? err.message}`;
}
