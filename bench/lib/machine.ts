// Where and on what the numbers were measured: they mean little without it.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { basename } from 'node:path';

import { controlPlaneGoGC } from '../config.js';
import { operatorNodeArgs } from './operator.js';

export interface MachineInfo {
  cpu_model: string;
  cores: number;
  memory_gib: number;
  node_version: string;
  k8s_version: string;
  /** Name of the pinned binary set (k8s, etcd, kwok, helm versions). */
  binaries: string;
  /** The node flags the operator (and the floor client) ran with: the image's ENTRYPOINT, or BENCH_NODE_ARGS. */
  operator_node_args: string[];
  /** GOGC of the test control plane's Go processes (BENCH_CONTROL_PLANE_GOGC; 100 is Go's default). */
  control_plane_gogc: number;
  load_start: number[];
  load_end: number[];
  /** Uncommitted changes in the tree when the run started (other people's or ours). */
  tree_dirty: boolean;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

export function commit(): string {
  return git(['rev-parse', 'HEAD']) || 'unknown';
}

export function load(): number[] {
  return loadavg().map((l) => Math.round(l * 100) / 100);
}

export function machineInfo(): MachineInfo {
  return {
    cpu_model: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node_version: process.version,
    k8s_version: 'unknown',
    binaries: process.env.SECONDCRON_BIN_DIR ? basename(process.env.SECONDCRON_BIN_DIR) : 'unknown',
    operator_node_args: operatorNodeArgs(),
    control_plane_gogc: controlPlaneGoGC(process.env),
    load_start: load(),
    load_end: [],
    tree_dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '',
  };
}
