// The linux/arm64 image, built here under emulation (test/image/build.sh with IMAGE_ARCH=arm64: the
// Debian arm64 base and the arm64 Node.js 24 build, the Dockerfile's RUN steps under
// qemu-user-static), and started: its node and the operator's --version run under qemu-aarch64
// from the image's own files; so does the plugin's linux/arm64 single executable, on the image's
// C library.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, openSync, readFileSync, readSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { buildImage } from '../cluster/image.js';
import { repoRoot } from '../cluster/repo-root.js';
import { runCommand } from '../cluster/run-command.js';
import { openOciArchive, unpackLayers } from './helpers/oci-archive.js';

const ROOT = repoRoot();
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const COMMIT = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
const QEMU = '/usr/bin/qemu-aarch64-static';

/** ELF e_machine of a file: 0xb7 is aarch64, 0x3e x86-64. */
function elfMachine(path: string): number {
  const head = Buffer.alloc(20);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  assert.deepEqual([...head.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46], `${path} is an ELF file`);
  return head.readUInt16LE(18);
}

describe('the linux/arm64 image, built and started under emulation', () => {
  let work: string;
  let rootfs: string;
  /** An arm64 program from the image, run by qemu-aarch64 with the image as its library root. */
  const arm64 = (argv: string[]) => runCommand(QEMU, ['-L', rootfs, ...argv], { env: { PATH: '/usr/bin:/bin', HOME: work }, timeoutMs: 300_000 });

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'secondcron-image-arm64-'));
    chmodSync(work, 0o755);
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('build.sh IMAGE_ARCH=arm64: an arm64 image config with arm64 executables', { timeout: 3_600_000 }, async (t) => {
    const t0 = performance.now();
    const built = await buildImage({ clusterDir: join(work, 'no-cluster'), arch: 'arm64', timeoutMs: 3_600_000 });
    t.diagnostic(`arm64 image built in ${Math.round((performance.now() - t0) / 1000)} s: ${built.ref}`);
    const image = await openOciArchive(built.archive, join(work, 'layout'));
    const config = image.config as unknown as { architecture: string; os: string; config: { Entrypoint?: string[] } };
    assert.equal(config.architecture, 'arm64');
    assert.equal(config.os, 'linux');
    assert.deepEqual(config.config.Entrypoint, ['node', '--optimize-for-size', 'dist/main.js']);
    rootfs = join(work, 'rootfs');
    await unpackLayers(image.layers, rootfs);
    assert.equal(elfMachine(join(rootfs, 'usr', 'local', 'bin', 'node')), 0xb7, 'node is an aarch64 executable');
  });

  test("the image's node and the operator's --version run (under qemu-aarch64)", async () => {
    assert.ok(rootfs, 'the build test ran first');
    const node = await arm64([join(rootfs, 'usr', 'local', 'bin', 'node'), '--version']);
    assert.equal(node.code, 0, node.stderr);
    assert.equal(node.stdout.trim(), process.version, 'the arm64 image runs the Node.js 24 build the tests run on');
    const arch = await arm64([join(rootfs, 'usr', 'local', 'bin', 'node'), '-p', 'process.arch']);
    assert.equal(arch.stdout.trim(), 'arm64');
    const operator = await arm64([join(rootfs, 'usr', 'local', 'bin', 'node'), '--optimize-for-size', join(rootfs, 'app', 'dist', 'main.js'), '--version']);
    assert.equal(operator.code, 0, operator.stderr);
    assert.equal(operator.stdout.trim(), `secondcron ${VERSION} (commit ${COMMIT})`);
  });

  test("the plugin's linux/arm64 single executable runs (under qemu-aarch64, on the image's C library)", async () => {
    assert.ok(rootfs, 'the build test ran first');
    const release = join(work, 'release');
    const built = await runCommand(process.execPath, [join(ROOT, 'build', 'release', 'plugin-executable.js')], {
      env: { ...process.env, RELEASE_DIR: release, PLUGIN_PLATFORMS: 'linux/arm64' },
      timeoutMs: 300_000,
    });
    assert.equal(built.code, 0, built.stderr);
    execFileSync('tar', ['-xzf', join(release, 'kubectl-secondcron-linux-arm64.tar.gz'), '-C', release]);
    const exe = join(release, 'kubectl-secondcron');
    assert.equal(elfMachine(exe), 0xb7, 'an aarch64 executable');
    const version = await runCommand(QEMU, ['-L', rootfs, exe, '--version'], { env: { PATH: '/usr/bin:/bin', HOME: work, NODE_OPTIONS: `--require ${join(work, 'no-such-hook.js')}` }, timeoutMs: 300_000 });
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), `kubectl-secondcron ${VERSION} (commit ${COMMIT})`);
    assert.equal(version.stderr, '', 'no warnings');
  });
});
