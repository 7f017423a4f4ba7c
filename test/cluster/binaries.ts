// Finds the control-plane binaries. The lookup order matches controller-runtime's envtest
// (TEST_ASSET_<NAME>, then $KUBEBUILDER_ASSETS) so a developer can point at binaries they already
// have; $SECONDCRON_BIN_DIR is what the Makefile sets from test/cluster/build-binaries.sh.
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

export const BINARY_NAMES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'kwok',
  'helm',
] as const;

export type BinaryName = (typeof BINARY_NAMES)[number];

export type BinaryPaths = Record<BinaryName, string>;

/** `kube-apiserver` → `TEST_ASSET_KUBE_APISERVER`. */
export function assetEnvName(name: BinaryName): string {
  return `TEST_ASSET_${name.toUpperCase().replace(/-/g, '_')}`;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The candidate paths for one binary, in lookup order, with where each came from. */
function candidates(name: BinaryName, env: NodeJS.ProcessEnv): Array<{ source: string; path: string }> {
  const out: Array<{ source: string; path: string }> = [];
  const direct = env[assetEnvName(name)];
  if (direct) out.push({ source: assetEnvName(name), path: direct });
  if (env.KUBEBUILDER_ASSETS) out.push({ source: 'KUBEBUILDER_ASSETS', path: join(env.KUBEBUILDER_ASSETS, name) });
  if (env.SECONDCRON_BIN_DIR) out.push({ source: 'SECONDCRON_BIN_DIR', path: join(env.SECONDCRON_BIN_DIR, name) });
  return out;
}

const HINT =
  'Build them with `make binaries` (test/cluster/build-binaries.sh prints their directory) and set ' +
  'SECONDCRON_BIN_DIR to it, or run through `make test-integration` / `make cluster-up`.';

/** The path of `name`, or a description of where it was looked for in vain. */
function lookup(name: BinaryName, env: NodeJS.ProcessEnv): { path?: string; tried: string } {
  const tried = candidates(name, env);
  const found = tried.find((c) => isExecutable(c.path));
  if (found) return { path: found.path, tried: '' };
  return {
    tried: tried.length === 0
      ? `none of ${assetEnvName(name)}, KUBEBUILDER_ASSETS, SECONDCRON_BIN_DIR is set`
      : `no executable at ${tried.map((c) => `${c.path} (${c.source})`).join(', ')}`,
  };
}

export function resolveBinary(name: BinaryName, env: NodeJS.ProcessEnv = process.env): string {
  const { path, tried } = lookup(name, env);
  if (path) return path;
  throw new Error(`test control plane: cannot find "${name}": ${tried}. ${HINT}`);
}

/** Resolves every binary at once so a missing one fails before any process is started. */
export function resolveBinaries(env: NodeJS.ProcessEnv = process.env): BinaryPaths {
  const paths: Partial<BinaryPaths> = {};
  const missing: string[] = [];
  for (const name of BINARY_NAMES) {
    const { path, tried } = lookup(name, env);
    if (path) paths[name] = path;
    else missing.push(`  ${name}: ${tried}`);
  }
  if (missing.length > 0) {
    throw new Error(`test control plane: missing binaries:\n${missing.join('\n')}\n${HINT}`);
  }
  return paths as BinaryPaths;
}
