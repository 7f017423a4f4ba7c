// Runs a short-lived command (kubectl, helm) to completion and captures its output.
import { spawn } from 'node:child_process';

import { diesWithParent } from './parent-death.js';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Kill the command after this long (default 120 s) so a stuck call cannot hang a test run. */
  timeoutMs?: number;
}

export function runCommand(command: string, args: string[], opts: RunOptions = {}): Promise<CommandResult> {
  return new Promise<CommandResult>((resolve, reject) => {
    const [cmd, argv] = diesWithParent(command, args);
    const child = spawn(cmd, argv, {
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8') + (signal ? `\n(killed by ${signal})` : ''),
      });
    });
    child.stdin.on('error', () => {
      // The command may exit without reading its input; the exit code tells what happened.
    });
    child.stdin.end(opts.input ?? '');
  });
}
