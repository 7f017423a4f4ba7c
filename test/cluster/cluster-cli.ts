// `make cluster-up` / `make cluster-down`: a control plane that outlives the command that started it.
//
//   node build/test/cluster/cluster-cli.js up <dir>     start it in the background, print how to use it
//                                                       (REAL_NODE=1: with a real kubelet node, see real-node/)
//   node build/test/cluster/cluster-cli.js down <dir>   stop it and remove <dir> (and a real node's host state)
//   node build/test/cluster/cluster-cli.js status <dir>
//
// `up` starts a detached supervisor (this file with `serve`) that owns the control-plane processes:
// stopping the supervisor stops them (SIGTERM → graceful, and the kernel kills them if it dies hard).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { startCluster } from './cluster.js';
import { NODE_NAME, REAL_NODE_LABEL, REAL_NODE_TAINT } from './real-node/addresses.js';
import { cleanupHost, readHostRecord } from './real-node/host.js';

interface ReadyInfo {
  pid: number;
  server: string;
  kubeconfig: string;
  binDir: string;
  startupMs: number;
  nodes: Array<{ name: string; zone: string }>;
  realNode: boolean;
}

const files = (dir: string) => ({
  pid: join(dir, 'supervisor.pid'),
  ready: join(dir, 'ready.json'),
  failed: join(dir, 'failed.txt'),
  log: join(dir, 'supervisor.log'),
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The supervisor of <dir> if it is running; a pid reused by another program does not count. */
function runningSupervisor(dir: string): number | undefined {
  const pidFile = files(dir).pid;
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (!cmdline.includes('cluster-cli') || !cmdline.includes('serve')) return undefined;
  } catch {
    // No /proc: trust the pid file.
  }
  return pid;
}

function usage(dir: string, info: ReadyInfo): string {
  return [
    `Local control plane is up (started in ${(info.startupMs / 1000).toFixed(1)} s, supervisor pid ${info.pid}).`,
    `  API server:  ${info.server}`,
    `  nodes:       ${info.nodes.map((n) => `${n.name} (zone ${n.zone})`).join(', ')}`,
    ...(info.realNode
      ? [
        `  real node:   ${NODE_NAME}, for pods with nodeSelector ${REAL_NODE_LABEL}: "true" and a toleration`,
        `               of the taint ${REAL_NODE_TAINT}=true:NoSchedule; containerd: ${join(dir, 'real-node.json')}`,
      ]
      : []),
    `  logs:        ${join(dir, 'logs')}/`,
    'Use it:',
    `  export KUBECONFIG=${info.kubeconfig}`,
    `  export PATH=${info.binDir}:$PATH   # kubectl, helm, kwok of the pinned versions`,
    '  kubectl get nodes',
    'Stop it: make cluster-down',
  ].join('\n');
}

async function up(dir: string): Promise<number> {
  const f = files(dir);
  const existing = runningSupervisor(dir);
  if (existing !== undefined && existsSync(f.ready)) {
    process.stdout.write(`Already running.\n${usage(dir, JSON.parse(readFileSync(f.ready, 'utf8')) as ReadyInfo)}\n`);
    return 0;
  }
  if (existing !== undefined) {
    process.stderr.write(`A supervisor (pid ${existing}) is still starting or stuck in ${dir}; run "down" first.\n`);
    return 1;
  }
  // Leftovers of a supervisor that died: start clean.
  await cleanupDeadRealNode();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const logFd = openSync(f.log, 'a');
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'serve', dir], {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: process.env,
  });
  child.unref();
  process.stdout.write(`Starting a local control plane in ${dir} (supervisor pid ${child.pid ?? '?'})…\n`);

  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if (existsSync(f.ready)) {
      process.stdout.write(`${usage(dir, JSON.parse(readFileSync(f.ready, 'utf8')) as ReadyInfo)}\n`);
      return 0;
    }
    if (existsSync(f.failed) || (child.pid !== undefined && !isAlive(child.pid))) {
      await sleep(200);
      const reason = existsSync(f.failed) ? readFileSync(f.failed, 'utf8') : readFileSync(f.log, 'utf8');
      process.stderr.write(`The control plane did not start:\n${reason}\n`);
      rmSync(dir, { recursive: true, force: true });
      return 1;
    }
    await sleep(200);
  }
  process.stderr.write(`Timed out waiting for the control plane; see ${f.log}. Stopping it.\n`);
  await down(dir);
  return 1;
}

async function serve(dir: string): Promise<number> {
  const f = files(dir);
  writeFileSync(f.pid, `${process.pid}\n`);
  try {
    const cluster = await startCluster({
      dir,
      realNode: process.env.REAL_NODE === '1',
      // `down` removes the directory after the supervisor has exited.
      removeDirOnStop: false,
      log: (m) => process.stdout.write(`${new Date().toISOString()} ${m}\n`),
    });
    const info: ReadyInfo = {
      pid: process.pid,
      server: cluster.server,
      kubeconfig: cluster.kubeconfigPath,
      binDir: cluster.binDir,
      startupMs: cluster.startupMs,
      nodes: [...cluster.nodes],
      realNode: cluster.realNode !== undefined,
    };
    writeFileSync(f.ready, `${JSON.stringify(info, null, 2)}\n`);
    process.stdout.write(`ready in ${cluster.startupMs} ms ${JSON.stringify(cluster.timings)}\n`);
  } catch (err) {
    writeFileSync(f.failed, `${(err as Error).message}\n`);
    return 1;
  }
  // Stay up until SIGTERM/SIGINT; the process registry then stops the cluster and exits.
  setInterval(() => undefined, 1 << 30);
  return new Promise<number>(() => undefined);
}

async function down(dir: string): Promise<number> {
  const pid = runningSupervisor(dir);
  if (pid !== undefined) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while (isAlive(pid) && Date.now() < deadline) await sleep(100);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    // Its children die with it (parent-death signal) but may take a moment.
    await sleep(200);
    process.stdout.write(`Stopped the control plane (supervisor pid ${pid}).\n`);
  } else {
    process.stdout.write(`No control plane running in ${dir}.\n`);
  }
  await cleanupDeadRealNode();
  rmSync(dir, { recursive: true, force: true });
  return 0;
}

/**
 * An owner that died hard (a SIGKILLed supervisor or test run) leaves its real node's host state
 * behind, whichever its cluster directory: remove it.
 */
async function cleanupDeadRealNode(): Promise<void> {
  const host = readHostRecord();
  if (host === undefined || isAlive(host.ownerPid)) return;
  await cleanupHost(host);
  process.stdout.write('Removed the real node\'s leftovers (processes, mounts, network, rules, cgroups).\n');
}

function status(dir: string): number {
  const pid = runningSupervisor(dir);
  const ready = files(dir).ready;
  if (pid !== undefined && existsSync(ready)) {
    process.stdout.write(`${usage(dir, JSON.parse(readFileSync(ready, 'utf8')) as ReadyInfo)}\n`);
    return 0;
  }
  process.stdout.write(pid !== undefined ? `Starting (supervisor pid ${pid}).\n` : `Not running (${dir}).\n`);
  return pid !== undefined ? 0 : 3;
}

async function main(argv: string[]): Promise<number> {
  const [command, dirArg] = argv;
  if (!command || !dirArg || !['up', 'down', 'status', 'serve'].includes(command)) {
    process.stderr.write('usage: cluster-cli.js up|down|status <dir>\n');
    return 2;
  }
  const dir = resolve(dirArg);
  switch (command) {
    case 'up':
      return up(dir);
    case 'down':
      return down(dir);
    case 'status':
      return status(dir);
    default:
      return serve(dir);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  },
);
