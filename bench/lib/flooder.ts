// The flood scenario's attacker, in a process of its own: 500 TLS requests a second from the
// bench's own event loop delayed the JobWatcher that stamps each Job's arrival, so part of the
// "flood latency" was the bench's, not the operator's (bench/README.md, issue 21). The parent sends
// one message per flood window, junk tokens or connections (bench/lib/connection-flood.ts); the
// child answers with what the operator did. The child exits when the parent does (its IPC channel
// closes).
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';

import { Agent, request } from 'undici';

import { type ConnectionOutcome, type ConnectionWindow, floodConnections } from './connection-flood.js';
import { sleepUntil } from './progress.js';

/** Junk bearer tokens on `url`, over keep-alive connections. */
export interface JunkWindow {
  url: string;
  /** Epoch ms the window opens; requests are spread evenly over `windowMs`. */
  fromMs: number;
  windowMs: number;
  requests: number;
  connections: number;
}

export interface FloodAnswers {
  /** HTTP status → count (0: the request failed without an answer). */
  answers: Record<string, number>;
  /** How long sending the window's requests took, from the window's start. */
  ms: number;
  /** CPU the flooding process spent on the window (user + system). */
  cpuMs: number;
}

type FloodMessage = { junk: JunkWindow } | { connections: ConnectionWindow };

/** The parent's handle on the flooding process. */
export class Flooder {
  private constructor(private readonly child: ChildProcess) {}

  /** `nice`: the process's niceness (0 to 19; 19 is the weight a BestEffort pod gets beside a pod's CPU request). */
  static start(nice: number): Flooder {
    const child = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    if (nice !== 0 && child.pid !== undefined) setPriority(child.pid, nice);
    return new Flooder(child);
  }

  junk(window: JunkWindow): Promise<FloodAnswers> {
    return this.run<FloodAnswers>({ junk: window });
  }

  connections(window: ConnectionWindow): Promise<ConnectionOutcome> {
    return this.run<ConnectionOutcome>({ connections: window });
  }

  private run<T>(message: FloodMessage): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`junk flood process exited (${code}) during a window`));
      this.child.once('exit', onExit);
      this.child.once('message', (m) => {
        this.child.off('exit', onExit);
        resolve(m as T);
      });
      this.child.send(message);
    });
  }

  stop(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.disconnect();
    });
  }
}

/** One window: `connections` keep-alive connections, each sending its share of distinct junk tokens, paced. */
async function floodJunk(w: JunkWindow, agent: Agent): Promise<FloodAnswers> {
  const answers: Record<string, number> = {};
  const perConnection = Math.ceil(w.requests / w.connections);
  await sleepUntil(w.fromMs);
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: w.connections }, async (_, c) => {
      for (let i = 0; i < perConnection && c * perConnection + i < w.requests; i++) {
        await sleepUntil(w.fromMs + (i * w.windowMs) / perConnection);
        const res = await request(w.url, {
          headers: { authorization: `Bearer junk-${c}-${i}-${randomBytes(8).toString('hex')}` },
          dispatcher: agent,
        }).catch(() => undefined);
        await res?.body.dump();
        const status = String(res?.statusCode ?? 0);
        answers[status] = (answers[status] ?? 0) + 1;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { answers, ms: Date.now() - t0, cpuMs: Math.round((cpu.user + cpu.system) / 1000) };
}

if (process.argv[2] === '--child') {
  let agent: Agent | undefined;
  process.on('message', (m: FloodMessage) => {
    if ('connections' in m) {
      void floodConnections(m.connections).then((o) => process.send?.(o));
      return;
    }
    agent ??= new Agent({ connect: { rejectUnauthorized: false }, connections: m.junk.connections, pipelining: 1 });
    void floodJunk(m.junk, agent).then((a) => process.send?.(a));
  });
  process.on('disconnect', () => {
    void agent?.close();
    process.exit(0);
  });
}
