// A bearer token read from a file the kubelet (or a kubeconfig's tokenFile) keeps fresh, the way
// client-go's cached file token source does it: re-read once a minute, re-read at once when the
// server answers 401, and keep the last good token when a read fails (the kubelet swaps the
// file by renaming a symlink; a read error is rare and passes — a dropped request would not).
import { readFile } from 'node:fs/promises';

import { CredentialsUnavailable } from './api-error.js';

/** client-go's NewCachedFileTokenSource period. */
export const TOKEN_FILE_REFRESH_MS = 60_000;
const READ_RETRY_MS = 1_000;

export interface TokenFileOptions {
  now?: () => number;
  /** A kubeconfig's static `token` beside its `tokenFile`: used while the file has never been read. */
  fallback?: string;
  onReadError?: (err: Error) => void;
}

export class TokenFile {
  private token: string | undefined;
  private readAtMs = Number.NEGATIVE_INFINITY;
  private reading: Promise<string> | undefined;
  private readonly now: () => number;

  constructor(
    readonly path: string,
    private readonly opts: TokenFileOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** The current token; concurrent callers share one read. */
  async current(): Promise<string> {
    if (this.token !== undefined && this.now() - this.readAtMs < TOKEN_FILE_REFRESH_MS) return this.token;
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** The server rejected `token`: read the file again on the next call (unless it was re-read since). */
  rejected(token: string): void {
    if (token === this.token) this.readAtMs = Number.NEGATIVE_INFINITY;
  }

  private async read(): Promise<string> {
    try {
      const token = (await readFile(this.path, 'utf8')).trim();
      if (token === '') throw new Error('file is empty');
      this.token = token;
      this.readAtMs = this.now();
      return token;
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      this.opts.onReadError?.(error);
      const last = this.token ?? this.opts.fallback;
      if (last !== undefined) {
        // Keep the last good token and try the file again in a second, not on every request.
        this.readAtMs = this.now() - TOKEN_FILE_REFRESH_MS + READ_RETRY_MS;
        return last;
      }
      throw new CredentialsUnavailable(`token file ${this.path}: ${error.message}`);
    }
  }
}
