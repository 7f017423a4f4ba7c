// A long-running child (etcd, kube-apiserver, …) whose output goes to a log file, with a stop that
// escalates from SIGTERM to SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

import { diesWithParent } from './parent-death.js';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnSpec {
  name: string;
  command: string;
  args: string[];
  logPath: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export class ManagedProcess {
  readonly name: string;
  readonly logPath: string;
  private readonly child: ChildProcess;
  private exitInfo: ExitInfo | undefined;
  /** Resolves when the process has exited, however it ended. */
  readonly exited: Promise<ExitInfo>;

  constructor(spec: SpawnSpec) {
    this.name = spec.name;
    this.logPath = spec.logPath;
    const logFd = openSync(spec.logPath, 'a');
    const [command, args] = diesWithParent(spec.command, spec.args);
    try {
      this.child = spawn(command, args, {
        cwd: spec.cwd,
        env: spec.env ?? process.env,
        stdio: ['ignore', logFd, logFd],
        detached: false,
      });
    } finally {
      // The child has its own copy of the descriptor.
      closeSync(logFd);
    }
    this.exited = new Promise<ExitInfo>((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
      this.child.once('error', (err) => {
        this.exitInfo = { code: null, signal: null };
        process.stderr.write(`[test cluster] cannot start ${spec.name}: ${err.message}\n`);
        resolve(this.exitInfo);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitInfo === undefined && this.child.pid !== undefined;
  }

  /** A one-line reason when the process is gone, for error messages. */
  describeExit(): string {
    if (!this.exitInfo) return `${this.name} is running`;
    const { code, signal } = this.exitInfo;
    return `${this.name} exited (${signal ? `signal ${signal}` : `code ${code}`})`;
  }

  /** SIGTERM, then SIGKILL after graceMs. Resolves once the process is gone. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.running) return;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Synchronous kill for exit handlers. */
  killNow(): void {
    if (this.running) this.signal('SIGKILL');
  }

  /** SIGSTOP freezes the process (it keeps its sockets, answers nothing); SIGCONT resumes it. */
  pause(): void {
    if (this.running) this.signal('SIGSTOP');
  }

  resume(): void {
    if (this.running) this.signal('SIGCONT');
  }

  private signal(sig: NodeJS.Signals): void {
    try {
      this.child.kill(sig);
    } catch {
      // Already gone.
    }
  }

  /** The last lines of the log, for failure messages. */
  logTail(lines = 40): string {
    return tailOfFile(this.logPath, lines);
  }
}

export function tailOfFile(path: string, lines: number): string {
  try {
    const text = readFileSync(path, 'utf8');
    return text.split('\n').slice(-lines - 1).join('\n');
  } catch {
    return '(no log)';
  }
}
