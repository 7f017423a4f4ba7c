// The operator image as users get it: `make image` (test/image/build.sh) builds the project's Dockerfile
// with buildah; this test reads the OCI archive it wrote like a runtime does (config, layers with
// whiteouts), checks what the image holds, and runs it like a container — its own PID and mount
// namespaces, read-only root, the image's User, WorkingDir, Env and Entrypoint — against the shared
// test cluster: ready, a Job created, SIGTERM to PID 1 ends it cleanly. (The e2e tests run the same
// image as pods on the real node.)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { envName, FLAGS } from '../../src/config.js';
import { buildImage, type BuiltImage } from '../cluster/image.js';
import { ManagedProcess } from '../cluster/managed-process.js';
import { track } from '../cluster/process-registry.js';
import { runCommand } from '../cluster/run-command.js';
import { kubectl, kubectlOk, operatorKubeconfig, uniqueNamespace, type TestNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { REPO_ROOT } from './helpers/helm.js';
import { openOciArchive, unpackLayers, type OciImage } from './helpers/oci-archive.js';
import { containerInitPid, procStatus, sandboxCommand } from './helpers/rootfs-sandbox.js';
import { scjManifest } from './helpers/scj.js';
import { installCrd } from '../cluster/crd.js';

const IMAGE_UID = 65532;
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

/** The runtime (last) stage's instructions, continuation lines joined, comments dropped. */
function runtimeStageInstructions(dockerfile: string): string[] {
  const logical = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const from = logical.findLastIndex((l) => /^FROM\s/i.test(l));
  return logical.slice(from + 1);
}

/** A history entry as the instruction it records: "RUN npm ci …", "COPY … in ./dist" → "COPY ./dist". */
function historyInstruction(createdBy: string): string {
  const nop = /^\/bin\/sh -c #\(nop\) (.*)$/s.exec(createdBy);
  if (!nop) return `RUN ${createdBy.replace(/^\/bin\/sh -c /, '')}`.trim();
  const text = (nop[1] as string).trim();
  const copy = /^(COPY|ADD) \S+ in (\S+)$/.exec(text);
  return copy ? `${copy[1] as string} ${copy[2] as string}` : text;
}

/** The same shape for a Dockerfile line: COPY keeps only its destination. */
function dockerfileInstruction(line: string): string {
  const words = line.split(/\s+/);
  return /^(COPY|ADD)$/i.test(words[0] as string) ? `${(words[0] as string).toUpperCase()} ${words.at(-1) as string}` : line;
}

describe('the image built by make image', () => {
  let work: string;
  let built: BuiltImage;
  let image: OciImage;
  let rootfs: string;
  let ns: TestNamespace | undefined;

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'secondcron-image-'));
    chmodSync(work, 0o755);
  });

  after(async () => {
    await ns?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('test/image/build.sh builds the Dockerfile and prints the archive and, last, the reference', { timeout: 1_800_000 }, async (t) => {
    const t0 = performance.now();
    // A cluster directory without real-node.json: build the archive only, import nowhere.
    built = await buildImage({ clusterDir: join(work, 'no-cluster') });
    t.diagnostic(`make image took ${Math.round((performance.now() - t0) / 1000)} s; ${built.ref}, ${built.archive}`);
    assert.match(built.ref, new RegExp(`^localhost/secondcron:${pkg.version.replace(/\./g, '\\.')}-[0-9a-f]{12}$`));
    // The archive lives outside the clone.
    assert.ok(!built.archive.startsWith(REPO_ROOT), built.archive);
    image = await openOciArchive(built.archive, join(work, 'layout'));
    // containerd's import names the image after this annotation.
    assert.equal(image.refName, built.ref);
  });

  test('config: the Dockerfile runtime stage, instruction by instruction', () => {
    assert.ok(image, 'the build test ran first');
    const c = image.config.config;
    assert.equal(c.User, `${IMAGE_UID}:${IMAGE_UID}`);
    assert.deepEqual(c.Entrypoint, ['node', '--optimize-for-size', 'dist/main.js']);
    assert.equal(c.Cmd, undefined);
    assert.equal(c.WorkingDir, '/app');
    assert.ok(c.Env?.includes('NODE_ENV=production'), `Env: ${JSON.stringify(c.Env)}`);
    assert.ok(c.Env?.includes('MALLOC_MMAP_THRESHOLD_=65536'), `Env: ${JSON.stringify(c.Env)}`);
    assert.deepEqual(Object.keys(c.ExposedPorts ?? {}).sort(), ['8080/tcp', '8081/tcp']);
    // OCI labels: where it comes from, which version and which commit (test/image/build.sh).
    const revision = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    assert.equal(c.Labels?.['org.opencontainers.image.source'], 'https://github.com/secondcron/secondcron');
    assert.equal(c.Labels?.['org.opencontainers.image.version'], pkg.version);
    assert.equal(c.Labels?.['org.opencontainers.image.revision'], revision);
    // The history ends with exactly the runtime stage's instructions: built by a builder from the
    // Dockerfile as written, not assembled some other way.
    const expected = runtimeStageInstructions(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8')).map(dockerfileInstruction);
    const all = (image.config.history ?? []).map((h) => historyInstruction(h.created_by ?? ''));
    // build.sh's --label flags come last, one LABEL entry each: the OCI labels and nothing else.
    const labels = all.filter((h) => h.startsWith('LABEL '));
    assert.deepEqual(all.slice(-labels.length), labels, 'the labels are the last entries');
    assert.deepEqual(labels.map((l) => /^LABEL "([^"]+)"=/.exec(l)?.[1]).sort(), Object.keys(c.Labels ?? {}).filter((k) => k.startsWith('org.opencontainers.image.')).sort());
    const history = all.slice(0, all.length - labels.length);
    assert.deepEqual(history.slice(-expected.length), expected);
  });

  test('filesystem: compiled operator, production dependencies only, owned by root', async () => {
    assert.ok(image, 'the build test ran first');
    rootfs = join(work, 'rootfs');
    await unpackLayers(image.layers, rootfs);
    const app = join(rootfs, 'app');
    // What the Dockerfile copies and nothing else from the context (.dockerignore, no sources).
    assert.deepEqual(readdirSync(app).sort(), ['dist', 'node_modules', 'package-lock.json', 'package.json']);
    assert.ok(existsSync(join(app, 'dist', 'main.js')));
    assert.ok(!readdirSync(join(app, 'dist'), { recursive: true }).some((f) => String(f).endsWith('.ts') && !String(f).endsWith('.d.ts')), 'no TypeScript sources in dist');
    // Judged by the lockfile npm installed from: every production package is there, no dev one.
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; optional?: boolean }> };
    const entries = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));
    assert.ok(entries.some(([path, meta]) => path === 'node_modules/typescript' && meta.dev), 'typescript is a dev dependency in the lockfile');
    const misplaced = entries
      .filter(([path, meta]) => !meta.optional && existsSync(join(app, path, 'package.json')) === Boolean(meta.dev))
      .map(([path, meta]) => `${path} (${meta.dev ? 'dev, installed' : 'production, missing'})`);
    assert.deepEqual(misplaced, []);
    // The image user can read its code but not change it.
    for (const p of [app, join(app, 'dist', 'main.js'), join(app, 'node_modules')]) assert.equal(statSync(p).uid, 0, p);
  });

  /** Runs a short command in the image sandbox and returns its stdout. */
  async function runInImage(opts: Parameters<typeof sandboxCommand>[2]): Promise<string> {
    assert.ok(rootfs, 'the filesystem test ran first');
    const c = sandboxCommand(rootfs, image.config.config, opts);
    const res = await runCommand(c.command, c.args, { env: c.env, timeoutMs: 60_000 });
    assert.equal(res.code, 0, `${c.args.slice(-4).join(' ')}:\n${res.stdout}${res.stderr}`);
    return res.stdout;
  }

  test('node is the 24 LTS the Makefile runs (package.json engines >=24); the entrypoint answers --help with every flag', async () => {
    const version = (await runInImage({ argv: ['node', '--version'] })).trim();
    assert.match(version, /^v24\.\d+\.\d+$/, `node --version: ${version}`);
    // The same build as the host's (test/cluster/install-node.sh), not some other 24.
    assert.equal(version, process.version, 'the image runs the node the tests run on');
    const help = await runInImage({ extraArgs: ['--help'] });
    for (const f of FLAGS) {
      assert.ok(help.includes(`--${f.flag}`), `--${f.flag} in --help`);
      assert.ok(help.includes(envName(f.flag)), `${envName(f.flag)} in --help`);
    }
  });

  test('npm ci in the image fails (not exit 0) when the registry is unreachable', async () => {
    assert.ok(built, 'the build test ran first');
    // npm 10.8.2 exited 0 here ("Exit handler never called!"): buildah went on and its layer cache
    // kept the step's broken result for every later build. Run with buildah on the built image.
    const buildah = join(REPO_ROOT, 'test', 'image', 'buildah.sh');
    const from = await runCommand(buildah, ['from', '--pull=never', '--quiet', built.ref]);
    assert.equal(from.code, 0, from.stderr);
    const container = from.stdout.trim();
    try {
      const res = await runCommand(buildah, [
        'run', '--isolation', 'chroot', '--network', 'host', '--user', '0:0', container, '--',
        'npm', 'ci', '--registry=http://127.0.0.1:9/', '--fetch-retries=0', '--no-audit', '--no-fund', '--ignore-scripts',
      ], { timeoutMs: 300_000 });
      assert.notEqual(res.code, 0, `npm ci against a closed port exited 0:\n${res.stdout}${res.stderr}`);
    } finally {
      await runCommand(buildah, ['rm', container]);
    }
  });

  test('as a container: PID 1, uid/gid 65532 with no extra groups, read-only root, WorkingDir /app', async () => {
    const probe = `const fs = require('node:fs');
      const write = (p) => { try { fs.writeFileSync(p, 'x'); return 'written'; } catch (e) { return e.code; } };
      console.log(JSON.stringify({ pid: process.pid, uid: process.getuid(), gid: process.getgid(), cwd: process.cwd(),
        groups: /^Groups:(.*)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1].trim(),
        app: write('/app/probe'), tmp: write('/tmp/probe'), env: process.env.NODE_ENV }));`;
    const seen = JSON.parse(await runInImage({ argv: ['node', '-e', probe] })) as Record<string, unknown>;
    assert.deepEqual(seen, { pid: 1, uid: IMAGE_UID, gid: IMAGE_UID, cwd: '/app', groups: '', app: 'EROFS', tmp: 'EROFS', env: 'production' });
  });

  test('the operator runs from the image against the test cluster, creates a Job, and stops on SIGTERM to PID 1', async (t) => {
    assert.ok(rootfs, 'the filesystem test ran first');
    await installCrd(kubectl);
    ns = await uniqueNamespace('image');

    // A read-only volume, readable by the image user only (in a pod: the service-account token).
    const secrets = join(work, 'secrets');
    mkdirSync(secrets);
    copyFileSync(operatorKubeconfig(), join(secrets, 'kubeconfig'));
    chmodSync(join(secrets, 'kubeconfig'), 0o600);
    chownSync(join(secrets, 'kubeconfig'), IMAGE_UID, IMAGE_UID);

    const c = sandboxCommand(rootfs, image.config.config, {
      extraArgs: ['--kubeconfig', '/run/secondcron/kubeconfig', '--leader-elect=false', '--namespaces', ns.name, '--metrics-port', '0', '--health-port', '0', '--metrics-secure=false'],
      env: { POD_NAME: 'image-test', POD_NAMESPACE: ns.name },
      volumes: [{ hostPath: secrets, mountPath: '/run/secondcron' }],
    });
    const proc = new ManagedProcess({ name: 'operator (image)', command: c.command, args: c.args, env: c.env, logPath: join(work, 'operator.log') });
    // SIGKILL to the outer unshare kills the container (--kill-child) if the test fails midway.
    const untrack = track({ name: proc.name, dispose: () => proc.stop(5_000), killNow: () => proc.killNow() });
    t.after(async () => {
      await proc.stop(5_000);
      untrack();
    });

    const init = await eventually('the container process starts', async () => {
      const outer = proc.pid;
      if (!proc.running || outer === undefined) throw new Error(`${proc.describeExit()}\n${proc.logTail(20)}`);
      const pid = containerInitPid(outer);
      return pid !== undefined && readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('node\0') ? pid : undefined;
    }, { timeoutMs: 30_000 });
    const status = procStatus(init);
    assert.equal(status.get('NSpid')?.split(/\s+/).at(-1), '1', 'node is PID 1 in its namespace');
    assert.equal(status.get('Uid')?.split(/\s+/)[0], String(IMAGE_UID));

    // Ports 0: the operator logs the ports it got (it shares the host network here).
    const ports = await eventually('the operator logs its ports', async () => {
      if (!proc.running) throw new Error(`${proc.describeExit()}\n${proc.logTail(20)}`);
      const line = readFileSync(proc.logPath, 'utf8').split('\n').find((l) => l.includes('"msg":"serving"'));
      return line ? (JSON.parse(line) as { metricsPort: number; healthPort: number }) : undefined;
    }, { timeoutMs: 30_000 });
    await eventually('/readyz answers 200', async () => {
      if (!proc.running) throw new Error(`${proc.describeExit()}\n${proc.logTail(20)}`);
      const res = await fetch(`http://127.0.0.1:${ports.healthPort}/readyz`).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    }, { timeoutMs: 60_000 });

    const nsName = ns.name;
    await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(scjManifest(nsName, 'tick', { intervalSeconds: 1 })) });
    await eventually('a Job is created', async () => {
      const out = await kubectlOk(['get', 'jobs', '-n', nsName, '-l', 'secondcron.io/secondcronjob=tick', '-o', 'name']);
      return out.trim() ? true : undefined;
    }, { timeoutMs: 30_000 });
    const metrics = await (await fetch(`http://127.0.0.1:${ports.metricsPort}/metrics`)).text();
    const created = /^secondcron_jobs_created_total\{result="created"\} (\d+)$/m.exec(metrics);
    assert.ok(created && Number(created[1]) >= 1, 'the metrics port counts the created Job');
    // Deleted while the operator runs, so its finalizer is honoured and the namespace can go.
    await kubectlOk(['delete', 'secondcronjob', 'tick', '-n', nsName, '--wait=true', '--timeout=60s']);

    // As the kubelet stops a container: SIGTERM to its PID 1. A PID 1 without a handler would
    // ignore it; the operator handles it and exits 0, which the outer unshare passes on.
    const t0 = performance.now();
    process.kill(init, 'SIGTERM');
    const exit = await Promise.race([proc.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 15_000).unref())]);
    assert.deepEqual(exit, { code: 0, signal: null }, `exit after SIGTERM:\n${proc.logTail(10)}`);
    t.diagnostic(`stopped ${Math.round(performance.now() - t0)} ms after SIGTERM`);
    assert.match(readFileSync(proc.logPath, 'utf8'), /"msg":"stopped"/);
  });
});
