// Finds the real test node's binaries: $SECONDCRON_NODE_BIN_DIR is what the Makefile sets from
// test/cluster/build-node-binaries.sh (kubelet, kube-proxy, containerd, its shim, ctr, runc, the
// pause image archive, and the CNI plugins in cni/).
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

export const NODE_BINARY_NAMES = ['kubelet', 'kube-proxy', 'containerd', 'containerd-shim-runc-v2', 'ctr', 'runc'] as const;
export const CNI_PLUGIN_NAMES = ['bridge', 'host-local', 'loopback', 'portmap'] as const;

export type NodeBinaryName = (typeof NODE_BINARY_NAMES)[number];

export interface NodeBinaries {
  dir: string;
  bin: Record<NodeBinaryName, string>;
  cniDir: string;
  /** OCI archive of the sandbox ("pause") image. */
  pauseArchive: string;
}

const HINT =
  'Build them with test/cluster/build-node-binaries.sh (it prints their directory) and set ' +
  'SECONDCRON_NODE_BIN_DIR to it, or run through `make cluster-up REAL_NODE=1` / `make e2e`.';

export function resolveNodeBinaries(env: NodeJS.ProcessEnv = process.env): NodeBinaries {
  const dir = env.SECONDCRON_NODE_BIN_DIR;
  if (!dir) throw new Error(`real test node: SECONDCRON_NODE_BIN_DIR is not set. ${HINT}`);
  const bin = Object.fromEntries(NODE_BINARY_NAMES.map((n) => [n, join(dir, n)])) as Record<NodeBinaryName, string>;
  const cniDir = join(dir, 'cni');
  const pauseArchive = join(dir, 'pause.tar');
  const required = [...Object.values(bin), ...CNI_PLUGIN_NAMES.map((n) => join(cniDir, n))];
  const missing = required.filter((path) => {
    try {
      accessSync(path, constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
  try {
    accessSync(pauseArchive, constants.R_OK);
  } catch {
    missing.push(pauseArchive);
  }
  if (missing.length > 0) throw new Error(`real test node: missing ${missing.join(', ')}. ${HINT}`);
  return { dir, bin, cniDir, pauseArchive };
}
