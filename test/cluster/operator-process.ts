// Runs the real operator (dist/main.js) as a child process: used by integration tests and the demo.
// Each instance gets free ports, its own log file, and is stopped by its owner (and, as a last
// resort, by the harness's exit handlers) so no process outlives a test.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { eventually } from '../integration/helpers/eventually.js';
import { freePorts } from './free-ports.js';
import { ManagedProcess } from './managed-process.js';
import { track } from './process-registry.js';

export const MAIN_JS = resolve(process.cwd(), 'dist/main.js');

export interface OperatorOptions {
  /** --kubeconfig; without it the operator finds its cluster itself (in-cluster, $KUBECONFIG). */
  kubeconfig?: string;
  /** A command prefix the operator runs under, e.g. unshare(1) to make node PID 1 as in the image. */
  launcher?: string[];
  /** Environment of the child (PATH, KUBECONFIG...). */
  env: NodeJS.ProcessEnv;
  /** Namespaces to watch: tests always scope their operators, so test files never disturb each other. */
  namespaces: string[];
  identity?: string;
  /**
   * true: /metrics as the binary serves it by default, over HTTPS to callers the API server
   * authorizes; otherwise the tests' plain HTTP (--metrics-secure=false), as for a local run.
   */
  metricsSecure?: boolean;
  /** Extra flags, e.g. ['--lease-duration', '4s']. */
  args?: string[];
  cwd?: string;
  logLevel?: string;
  mainJs?: string;
  /** Flags for node itself, before the script (e.g. the image's --optimize-for-size). */
  nodeArgs?: string[];
}

export class OperatorProcess {
  private proc: ManagedProcess | undefined;
  private untrack: (() => void) | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'secondcron-op-'));
  private starts = 0;
  metricsPort = 0;
  healthPort = 0;

  constructor(readonly opts: OperatorOptions) {}

  get identity(): string | undefined {
    return this.opts.identity;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return this.proc?.running ?? false;
  }

  get logPath(): string {
    return join(this.dir, `operator-${this.starts}.log`);
  }

  async start(): Promise<this> {
    [this.metricsPort, this.healthPort] = (await freePorts(2)) as [number, number];
    this.starts++;
    const args = [
      ...(this.opts.nodeArgs ?? []),
      this.opts.mainJs ?? MAIN_JS,
      ...(this.opts.kubeconfig ? ['--kubeconfig', this.opts.kubeconfig] : []),
      ...(this.opts.namespaces.length ? ['--namespaces', this.opts.namespaces.join(',')] : []),
      '--metrics-port', String(this.metricsPort),
      '--health-port', String(this.healthPort),
      '--log-level', this.opts.logLevel ?? 'debug',
      ...(this.opts.metricsSecure ? [] : ['--metrics-secure=false']),
      ...(this.opts.identity ? ['--identity', this.opts.identity] : []),
      ...(this.opts.args ?? []),
    ];
    const [command, ...prefix] = [...(this.opts.launcher ?? []), process.execPath];
    const proc = new ManagedProcess({
      name: `operator ${this.opts.identity ?? ''}`.trim(),
      command: command as string,
      args: [...prefix, ...args],
      logPath: this.logPath,
      env: this.opts.env,
      cwd: this.opts.cwd,
    });
    this.proc = proc;
    this.untrack = track({ name: proc.name, dispose: () => proc.stop(3_000), killNow: () => proc.killNow() });
    return this;
  }

  /** Waits until /readyz answers 200 (caches synced). */
  async ready(timeoutMs = 30_000): Promise<this> {
    await eventually(
      `operator ${this.opts.identity ?? ''} ready`,
      async () => {
        if (!this.running) throw new Error(`${this.proc?.describeExit()}\n${this.logs(20)}`);
        const res = await fetch(`http://127.0.0.1:${this.healthPort}/readyz`).catch(() => undefined);
        return res?.status === 200 ? true : undefined;
      },
      { timeoutMs },
    );
    return this;
  }

  /** /metrics over plain HTTP (not with metricsSecure). */
  async metrics(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`);
    return res.text();
  }

  /** The value of one sample line, e.g. metric('secondcron_leader'), or undefined if absent. */
  async metric(name: string, labels = ''): Promise<number | undefined> {
    const text = await this.metrics();
    const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}}` : `${name} `));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  logs(lines = 0): string {
    let text = '';
    for (let i = 1; i <= this.starts; i++) {
      try {
        text += readFileSync(join(this.dir, `operator-${i}.log`), 'utf8');
      } catch {
        // not started yet
      }
    }
    return lines ? text.split('\n').slice(-lines).join('\n') : text;
  }

  /** Graceful stop (SIGTERM: release the Lease and exit). */
  async stop(): Promise<void> {
    this.proc?.resume(); // a frozen process cannot handle SIGTERM
    await this.proc?.stop(10_000);
    this.untrack?.();
  }

  /** SIGSTOP: frozen, as a VM pause or a long GC would freeze it; resume() thaws it. */
  pause(): void {
    this.proc?.pause();
  }

  resume(): void {
    this.proc?.resume();
  }

  /** SIGKILL: the process vanishes without releasing anything. */
  async kill(): Promise<void> {
    this.proc?.killNow();
    await this.proc?.exited;
    this.untrack?.();
  }

  /** Stops (if running) and removes the log directory; for t.after(). */
  async dispose(): Promise<void> {
    await this.stop();
    // SECONDCRON_KEEP_LOGS=1 keeps the logs of every run for a post-mortem.
    if (process.env.SECONDCRON_KEEP_LOGS) process.stderr.write(`operator ${this.opts.identity ?? ''} logs kept in ${this.dir}\n`);
    else rmSync(this.dir, { recursive: true, force: true });
  }
}

