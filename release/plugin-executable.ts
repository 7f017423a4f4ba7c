// `make plugin-executable`: the kubectl plugin as one file that runs without Node.js, packed for krew.
//
//   1. esbuild bundles src/bin/kubectl-secondcron.ts and its dependencies into one CommonJS script
//      (Node 20's single executable applications run one CommonJS script), with the version and
//      commit baked in (src/build-info.ts reads SECONDCRON_BUILD_INFO there);
//   2. `node --experimental-sea-config` turns it into a blob; postject injects the blob into a copy
//      of the Node binary running this (an official build: it carries the SEA fuse);
//   3. the executable and LICENSE go into kubectl-secondcron-<os>-<arch>.tar.gz, and the krew manifest
//      (release/krew-manifest.ts) gets the archive's sha256.
//
// Output in $RELEASE_DIR (default dist/release/): the archive and secondcron.yaml (the krew manifest).
// The download URL in the manifest is $PLUGIN_URL_BASE/<archive> (default: the GitHub release of
// this version). Stdout: the two paths.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { build } from 'esbuild';

import { repoRoot } from '../test/cluster/repo-root.js';
import { type PluginArchive, krewManifest } from './krew-manifest.js';

/** The fuse Node's single executable applications look for (Node's documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const BIN = 'kubectl-secondcron';
const HOMEPAGE = 'https://github.com/secondcron/secondcron';

const PLATFORMS: Record<string, { os: PluginArchive['os']; arch: PluginArchive['arch'] }> = {
  'linux-x64': { os: 'linux', arch: 'amd64' },
  'linux-arm64': { os: 'linux', arch: 'arm64' },
  'darwin-arm64': { os: 'darwin', arch: 'arm64' },
};

async function main(): Promise<void> {
  const root = repoRoot();
  const platform = PLATFORMS[`${process.platform}-${process.arch}`];
  if (!platform) throw new Error(`no single executable for ${process.platform}/${process.arch}: build it on linux/amd64`);
  const node = readFileSync(process.execPath);
  if (!node.includes(SEA_FUSE)) {
    throw new Error(`${process.execPath} has no single-executable fuse (a distribution build with a shared libnode?): use an official Node.js 20 binary`);
  }
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
      target: 'node20',
      format: 'cjs',
      define: { SECONDCRON_BUILD_INFO: JSON.stringify({ version, commit }) },
      // build-info's file lookup (import.meta.url) is never reached when the define is set.
      logOverride: { 'empty-import-meta': 'silent' },
      logLevel: 'warning',
    });
    const blob = join(work, 'plugin.blob');
    writeFileSync(join(work, 'sea-config.json'), JSON.stringify({ main: script, output: blob, disableExperimentalSEAWarning: true }));
    quiet(process.execPath, ['--experimental-sea-config', join(work, 'sea-config.json')]);

    const stage = join(work, 'stage');
    mkdirSync(stage);
    const exe = join(stage, BIN);
    copyFileSync(process.execPath, exe);
    chmodSync(exe, 0o755);
    const postject = join(root, 'node_modules', 'postject', 'dist', 'cli.js');
    // postject warns about every ELF note section it cannot name; its output matters only on failure.
    quiet(process.execPath, [postject, exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE]);
    copyFileSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));

    const name = `${BIN}-${platform.os}-${platform.arch}.tar.gz`;
    const archive = join(out, name);
    // Reproducible: fixed order, owner and time.
    execFileSync('tar', ['-czf', archive, '--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '-C', stage, BIN, 'LICENSE']);
    const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
    const urlBase = process.env.PLUGIN_URL_BASE ?? `${HOMEPAGE}/releases/download/v${version}`;
    const manifest = krewManifest({ version, homepage: HOMEPAGE, archives: [{ ...platform, uri: `${urlBase}/${name}`, sha256, bin: BIN }] });
    writeFileSync(join(out, 'secondcron.yaml'), manifest);
    process.stdout.write(`${archive}\n${join(out, 'secondcron.yaml')}\n`);
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
