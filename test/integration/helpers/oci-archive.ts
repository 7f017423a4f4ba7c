// Reads an OCI image archive (the tar `buildah push oci-archive:` writes) the way a runtime does:
// index → manifest → config, and the layers applied in order with their whiteouts.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

import { runCommand } from '../../cluster/run-command.js';

export interface ImageConfig {
  User?: string;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  WorkingDir?: string;
  ExposedPorts?: Record<string, object>;
  Labels?: Record<string, string>;
}

export interface OciImage {
  /** org.opencontainers.image.ref.name of the index entry. */
  refName: string | undefined;
  config: { config: ImageConfig; history?: Array<{ created_by?: string; empty_layer?: boolean }> };
  /** Paths of the layer blobs (tar+gzip), base first. */
  layers: string[];
}

interface Descriptor {
  mediaType: string;
  digest: string;
  annotations?: Record<string, string>;
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

async function tar(args: string[]): Promise<string> {
  const res = await runCommand('tar', args, { timeoutMs: 300_000 });
  if (res.code !== 0) throw new Error(`tar ${args.join(' ')}: ${res.stderr}`);
  return res.stdout;
}

/** Unpacks the archive's OCI layout into `dir` and reads its single image. */
export async function openOciArchive(archive: string, dir: string): Promise<OciImage> {
  mkdirSync(dir, { recursive: true });
  await tar(['-xf', archive, '-C', dir]);
  const blob = (digest: string): string => join(dir, 'blobs', ...digest.split(':'));
  const index = readJson<{ manifests: Descriptor[] }>(join(dir, 'index.json'));
  if (index.manifests.length !== 1) throw new Error(`${archive}: ${index.manifests.length} manifests in index.json, expected 1`);
  const entry = index.manifests[0] as Descriptor;
  const manifest = readJson<{ config: Descriptor; layers: Descriptor[] }>(blob(entry.digest));
  for (const l of manifest.layers) {
    if (!l.mediaType.endsWith('.tar+gzip')) throw new Error(`${archive}: layer ${l.digest} is ${l.mediaType}, not tar+gzip`);
  }
  return {
    refName: entry.annotations?.['org.opencontainers.image.ref.name'],
    config: readJson(blob(manifest.config.digest)),
    layers: manifest.layers.map((l) => blob(l.digest)),
  };
}

const WHITEOUT = '.wh.';
const OPAQUE = '.wh..wh..opq';

/** Applies the layers onto `root` (as root: owners and modes as in the image). */
export async function unpackLayers(layers: string[], root: string): Promise<void> {
  mkdirSync(root, { recursive: true });
  for (const layer of layers) {
    // Whiteouts delete what lower layers put there, before this layer's own files land.
    for (const entry of (await tar(['-tzf', layer])).split('\n')) {
      const name = posix.normalize(entry.replace(/\/$/, ''));
      const base = posix.basename(name);
      if (base === OPAQUE) {
        const target = join(root, dirname(name));
        if (!existsSync(target)) continue;
        for (const child of readdirSync(target, { withFileTypes: true })) rmSync(join(target, child.name), { recursive: true, force: true });
      } else if (base.startsWith(WHITEOUT)) {
        rmSync(join(root, dirname(name), base.slice(WHITEOUT.length)), { recursive: true, force: true });
      }
    }
    await tar(['-xzf', layer, '-C', root, '--numeric-owner', `--exclude=${WHITEOUT}*`]);
  }
}
