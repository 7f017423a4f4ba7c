// What the real test node's runtime says about a container, read on the host (the harness runs as
// root beside the kubelet): the container's init process from containerd, then /proc of that
// process. Also the kubelet's projected volumes, to swap a token file the way the kubelet does.
import { existsSync, readdirSync, readFileSync, readlinkSync, renameSync, symlinkSync, writeFileSync, mkdirSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';

import type { RealNodeInfo } from '../../cluster/real-node/real-node.js';
import { runCommand } from '../../cluster/run-command.js';

export function readRealNodeInfo(clusterDir: string): RealNodeInfo {
  return JSON.parse(readFileSync(join(clusterDir, 'real-node.json'), 'utf8')) as RealNodeInfo;
}

/** PID on the host of a container's init process ("containerd://<id>" as in the pod status). */
export async function containerPid(node: RealNodeInfo, containerId: string): Promise<number> {
  const id = containerId.replace(/^containerd:\/\//, '');
  const res = await runCommand(node.ctr, ['--address', node.containerdSocket, '-n', node.namespace, 'tasks', 'ls'], { timeoutMs: 30_000 });
  if (res.code !== 0) throw new Error(`ctr tasks ls: ${res.stderr}`);
  const line = res.stdout.split('\n').find((l) => l.startsWith(`${id} `));
  if (!line) throw new Error(`containerd has no task ${id}:\n${res.stdout}`);
  return Number(line.trim().split(/\s+/)[1]);
}

export interface ProcessView {
  uid: number;
  gid: number;
  /** argv of the process. */
  cmdline: string[];
  /** Mount options of the process' root file system, e.g. ["ro", "relatime"]. */
  rootMountOptions: string[];
}

export function processView(pid: number): ProcessView {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const ids = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  // mountinfo seen from inside the process' mount namespace: field 5 is the mount point, 6 the options.
  const root = readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n').map((l) => l.split(' ')).filter((f) => f[4] === '/').pop();
  return {
    uid: ids('Uid'),
    gid: ids('Gid'),
    cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean),
    rootMountOptions: (root?.[5] ?? '').split(','),
  };
}

/** The directory of a pod's service-account projected volume (kube-api-access-*) in the kubelet's root dir. */
export function projectedTokenDir(clusterDir: string, podUid: string): string {
  const base = join(clusterDir, 'node', 'kubelet', 'root', 'pods', podUid, 'volumes', 'kubernetes.io~projected');
  const found = readdirSync(base).map((d) => join(base, d)).find((d) => existsSync(join(d, '..data', 'token')));
  if (!found) throw new Error(`no projected service-account token under ${base}`);
  return found;
}

/**
 * Replaces the token in a projected volume as the kubelet's AtomicWriter does: the files go into a
 * new hidden directory, then a new `..data` symlink is renamed over the old one in one step. The
 * other files (ca.crt, namespace) are carried over. Returns a function that swaps the old data back.
 */
export function swapProjectedToken(dir: string, token: string): () => void {
  const oldTarget = readlinkSync(join(dir, '..data'));
  const fresh = `..e2e_${Date.now()}`;
  mkdirSync(join(dir, fresh), { mode: 0o755 });
  for (const f of readdirSync(join(dir, oldTarget))) {
    if (f !== 'token') copyFileSync(join(dir, oldTarget, f), join(dir, fresh, f));
  }
  writeFileSync(join(dir, fresh, 'token'), token, { mode: 0o644 });
  const pointTo = (target: string): void => {
    symlinkSync(target, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  };
  pointTo(fresh);
  return () => pointTo(oldTarget);
}
