// The operator image as `make image` builds it (test/image/build.sh: buildah, the project's Dockerfile):
// tests get its reference and OCI archive from the script's own output, never by guessing paths.
import { join } from 'node:path';

import { repoRoot } from './repo-root.js';
import { runCommand } from './run-command.js';

export interface BuiltImage {
  /** What a pod spec names, e.g. localhost/secondcron:0.1.0-8d6dcf89d752. */
  ref: string;
  /** The OCI archive (`ctr images import` takes it). */
  archive: string;
}

/**
 * Runs test/image/build.sh (cold: a Debian base and two `npm ci`, minutes; warm: the layer cache,
 * seconds). `clusterDir` is where it looks for real-node.json to import into; a directory without
 * one builds the archive only. `arch: 'arm64'` builds the linux/arm64 image under emulation.
 */
export async function buildImage(opts: { clusterDir: string; timeoutMs?: number; arch?: 'amd64' | 'arm64' }): Promise<BuiltImage> {
  const script = join(repoRoot(), 'test', 'image', 'build.sh');
  const res = await runCommand(script, [], {
    env: { ...process.env, CLUSTER_DIR: opts.clusterDir, ...(opts.arch ? { IMAGE_ARCH: opts.arch } : {}) },
    timeoutMs: opts.timeoutMs ?? 1_800_000,
  });
  if (res.code !== 0) throw new Error(`test/image/build.sh exited ${res.code}:\n${res.stderr.split('\n').slice(-40).join('\n')}`);
  const lines = res.stdout.trim().split('\n');
  const ref = lines.at(-1) ?? '';
  const archive = lines.find((l) => l.startsWith('archive: '))?.slice('archive: '.length);
  if (!archive || !ref) throw new Error(`test/image/build.sh printed no archive and reference:\n${res.stdout}`);
  return { ref, archive };
}
