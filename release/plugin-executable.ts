// `make plugin-executable`: the kubectl plugin as one file that runs without Node.js, packed for krew.
//
//   1. esbuild bundles src/bin/kubectl-secondcron.ts and its dependencies into one CommonJS script
//      (single executable applications run one CommonJS script), with the version and
//      commit baked in (src/build-info.ts reads SECONDCRON_BUILD_INFO there);
//   2. `node --experimental-sea-config` turns it into a blob (no code cache, no snapshot: the blob is
//      the same for every architecture); postject injects it into a copy of the official Node.js 24
//      build of each target platform — the one running this for linux/amd64, the linux/arm64 build
//      of the same version from test/cluster/install-node.sh (both carry the SEA fuse);
//   3. each executable and LICENSE go into kubectl-secondcron-<os>-<arch>.tar.gz, and the krew
//      manifest (release/krew-manifest.ts) gets one platform per archive with its sha256.
// PLUGIN_PLATFORMS (default "linux/amd64 linux/arm64") picks the platforms. darwin is not shipped:
// a macOS executable must be re-signed after injection (codesign), and no maintained signing tool
// for Mach-O is installable on these machines.
//
// Output in $RELEASE_DIR (default dist/release/): the archive and secondcron.yaml (the krew manifest).
// The download URL in the manifest is $PLUGIN_URL_BASE/<archive> (default: the GitHub release of
// this version). Stdout: the archives' paths, then the manifest's.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

import { build } from 'esbuild';

import { repoRoot } from '../test/cluster/repo-root.js';
import { type PluginArchive, krewManifest } from './krew-manifest.js';

/** The fuse Node's single executable applications look for (Node's documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const BIN = 'kubectl-secondcron';
const HOMEPAGE = 'https://github.com/secondcron/secondcron';

/** Platforms the executable is built for, as krew names them, with the Node.js build for each. */
const PLATFORMS: Record<string, { os: PluginArchive['os']; arch: PluginArchive['arch']; nodeArch: string }> = {
  'linux/amd64': { os: 'linux', arch: 'amd64', nodeArch: 'x64' },
  'linux/arm64': { os: 'linux', arch: 'arm64', nodeArch: 'arm64' },
};

/** The official node binary for a platform, of the very version running this (the blob's format is per version). */
function nodeBinary(root: string, target: { os: string; nodeArch: string }): string {
  if (target.os === process.platform && target.nodeArch === process.arch) return process.execPath;
  const dir = execFileSync(join(root, 'test', 'cluster', 'install-node.sh'), [target.nodeArch], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    .trim()
    .split('\n')
    .at(-1);
  if (!dir || !basename(dir).startsWith(`node-${process.version}-`)) {
    throw new Error(`test/cluster/install-node.sh ${target.nodeArch} installed ${dir ?? 'nothing'}, not node ${process.version}: build with the Makefile's node`);
  }
  return join(dir, 'bin', 'node');
}

async function main(): Promise<void> {
  const root = repoRoot();
  const wanted = (process.env.PLUGIN_PLATFORMS ?? 'linux/amd64 linux/arm64').split(/\s+/).filter(Boolean);
  const targets = wanted.map((name) => {
    const target = PLATFORMS[name];
    if (!target) throw new Error(`PLUGIN_PLATFORMS: no single executable for ${name} (${Object.keys(PLATFORMS).join(', ')})`);
    return target;
  });
  if (targets.length === 0) throw new Error('PLUGIN_PLATFORMS names no platform');
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  const out = process.env.RELEASE_DIR ?? join(root, 'dist', 'release');
  mkdirSync(out, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'secondcron-sea-'));
  try {
    const script = join(work, 'plugin.cjs');
    await build({
      entryPoints: [join(root, 'src', 'bin', `${BIN}.ts`)],
      outfile: script,
      bundle: true,
      platform: 'node',
      target: 'node24',
      format: 'cjs',
      define: { SECONDCRON_BUILD_INFO: JSON.stringify({ version, commit }) },
      // build-info's file lookup (import.meta.url) is never reached when the define is set.
      logOverride: { 'empty-import-meta': 'silent' },
      logLevel: 'warning',
    });
    const blob = join(work, 'plugin.blob');
    writeFileSync(join(work, 'sea-config.json'), JSON.stringify({
      main: script,
      output: blob,
      disableExperimentalSEAWarning: true,
      // A plugin is not a Node.js program to its users: their NODE_OPTIONS (set for something else,
      // `--require ./hook.js`) must not change or crash it. Node 24's SEA ignores it with "none".
      execArgvExtension: 'none',
    }));
    quiet(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')]);

    const urlBase = process.env.PLUGIN_URL_BASE ?? `${HOMEPAGE}/releases/download/v${version}`;
    const archives: PluginArchive[] = [];
    for (const target of targets) {
      const node = nodeBinary(root, target);
      if (!readFileSync(node).includes(SEA_FUSE)) {
        throw new Error(`${node} has no single-executable fuse (a distribution build with a shared libnode?): use the official Node.js 24 build (test/cluster/install-node.sh)`);
      }
      const stage = join(work, `stage-${target.os}-${target.arch}`);
      mkdirSync(stage);
      const exe = join(stage, BIN);
      copyFileSync(node, exe);
      chmodSync(exe, 0o755);
      const postject = join(root, 'node_modules', 'postject', 'dist', 'cli.js');
      // postject warns about every ELF note section it cannot name; its output matters only on failure.
      quiet(process.execPath, [postject, exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE]);
      copyFileSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));

      const name = `${BIN}-${target.os}-${target.arch}.tar.gz`;
      const archive = join(out, name);
      // Reproducible: fixed order, owner and time.
      execFileSync('tar', ['-czf', archive, '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', stage, BIN, 'LICENSE']);
      const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
      archives.push({ os: target.os, arch: target.arch, uri: `${urlBase}/${name}`, sha256, bin: BIN });
      process.stdout.write(`${archive}\n`);
    }
    writeFileSync(join(out, 'secondcron.yaml'), krewManifest({ version, homepage: HOMEPAGE, archives }));
    process.stdout.write(`${join(out, 'secondcron.yaml')}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function quiet(file: string, args: string[]): void {
  const res = spawnSync(file, args, { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`${[file, ...args].join(' ')} failed (${res.status ?? res.signal}):\n${res.stdout}${res.stderr}`);
}

main().catch((err: unknown) => {
  process.stderr.write(`plugin-executable: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
