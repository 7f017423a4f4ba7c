// The kubectl plugin installed the two ways kubectl users install plugins, from what `make release`
// writes: the npm package (`npm pack`, then `npm install -g --prefix`), and the single executable
// through the real krew (built from sigs.k8s.io/krew by test/cluster/build-release-tools.sh) from
// the local manifest and archive into a temporary KREW_ROOT, then run with no Node.js on PATH.
// Both read the cluster (`next -A`) through an auth-provider (oidc) kubeconfig — client-node
// authenticates, with the undici npm resolved for the installed copy — and through an exec one.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, closeSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { load } from 'js-yaml';

import { installCrd } from '../cluster/crd.js';
import { repoRoot } from '../cluster/repo-root.js';
import { type CommandResult, runCommand } from '../cluster/run-command.js';
import { type TestNamespace, kubectl, kubectlOk, testBinDir, uniqueNamespace } from './helpers/cluster-env.js';
import { applyScj } from './helpers/scj.js';

const ROOT = repoRoot();
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const COMMIT = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
const SCHEDULE = `apiVersion: secondcron.io/v1
kind: SecondCronJob
metadata: {name: berlin}
spec:
  schedule: "0 30 2 * * *"
  timeZone: Europe/Berlin
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
`;

function releaseToolsDir(): string {
  const dir = process.env.SECONDCRON_RELEASE_TOOLS_DIR;
  if (!dir) throw new Error('SECONDCRON_RELEASE_TOOLS_DIR is not set: run with `make test-integration` (test/cluster/build-release-tools.sh)');
  return dir;
}

describe('the kubectl plugin installed as users install it', () => {
  let tmp: string;
  /** A directory holding kubectl and nothing else. */
  let kubectlOnly: string;
  let scheduleFile: string;
  let ns: TestNamespace | undefined;
  /** Cluster-scoped objects made for the reader, deleted in after(). */
  let rbacName: string | undefined;
  /** Kubeconfigs of a reader that may list SecondCronJobs everywhere: auth-provider and exec. */
  let kubeconfigs: { name: string; path: string }[] = [];

  /** Set for the single executable only: the npm copy is a Node.js program and rightly honours it. */
  let nodeOptions: string | undefined;

  /**
   * `kubectl secondcron …` with exactly `path` as PATH (and KUBECONFIG when given), and with a
   * NODE_OPTIONS that crashes any Node.js program honouring it.
   */
  const kubectlPlugin = (path: string[], args: string[], kubeconfig?: string): Promise<CommandResult> =>
    runCommand(join(kubectlOnly, 'kubectl'), ['secondcron', ...args], {
      env: { PATH: path.join(delimiter), HOME: tmp, ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}), ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) },
      timeoutMs: 60_000,
    });

  /** `next -A` through each kubeconfig lists the test's SecondCronJob and prints nothing on stderr. */
  const assertReadsCluster = async (path: string[]): Promise<void> => {
    assert.ok(ns && kubeconfigs.length === 2);
    for (const kc of kubeconfigs) {
      const res = await kubectlPlugin(path, ['next', '-A', '--count', '1', '-o', 'json'], kc.path);
      // -A reads the shared test cluster: other tests' resources (in namespaces still terminating)
      // may be suspended or invalid, which the plugin reports per resource. Nothing else may reach
      // stderr (no Node.js warning), and only such an invalid resource may make it exit 1.
      const perResource = /^(Warning: \S+ is suspended: .*|error: \S+: (InvalidSchedule|UnknownTimeZone): .*)$/;
      const other = res.stderr.split('\n').filter((l) => l !== '' && !perResource.test(l));
      assert.deepEqual(other, [], `${kc.name}: nothing on stderr but per-resource reports`);
      assert.equal(res.code, res.stderr.includes('\nerror: ') || res.stderr.startsWith('error: ') ? 1 : 0, `${kc.name}: ${res.stdout}${res.stderr}`);
      const listed = JSON.parse(res.stdout) as { name: string; namespace?: string }[];
      assert.ok(listed.some((e) => e.name === 'reader-sees-me' && e.namespace === ns?.name), `${kc.name}: ${res.stdout}`);
    }
  };

  /** The plugin answers --version and computes next slots (time zone data included) from a file. */
  const assertRuns = async (path: string[]): Promise<void> => {
    const version = await kubectlPlugin(path, ['--version']);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout.trim(), `kubectl-secondcron ${VERSION} (commit ${COMMIT})`);
    assert.equal(version.stderr, '', 'no warnings');
    const next = await kubectlPlugin(path, ['next', '-f', scheduleFile, '--count', '2', '-o', 'json']);
    assert.equal(next.code, 0, next.stderr);
    assert.equal(next.stderr, '', 'no warnings');
    const printed = JSON.parse(next.stdout) as { name: string; next: { utc: string }[] }[];
    assert.equal(printed.length, 1);
    assert.equal(printed[0]?.name, 'berlin');
    const utc = printed[0]?.next.map((n) => n.utc) ?? [];
    assert.equal(utc.length, 2);
    for (const u of utc) assert.match(u, /T0[01]:30:00(\.000)?Z$/, `02:30 in Berlin is 01:30 or 00:30 UTC, got ${u}`);
  };

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'secondcron-plugin-install-'));
    kubectlOnly = join(tmp, 'kubectl-only');
    mkdirSync(kubectlOnly);
    symlinkSync(join(testBinDir(), 'kubectl'), join(kubectlOnly, 'kubectl'));
    scheduleFile = join(tmp, 'berlin.yaml');
    writeFileSync(scheduleFile, SCHEDULE);

    await installCrd(kubectl);
    ns = await uniqueNamespace('plugin-install');
    await applyScj(ns.name, 'reader-sees-me', { intervalSeconds: 3600 });
    // A reader that may list SecondCronJobs in every namespace, and nothing else.
    rbacName = `secondcron-plugin-reader-${ns.name}`;
    await kubectlOk(['create', 'serviceaccount', 'reader', '-n', ns.name]);
    await kubectlOk(['create', 'clusterrole', rbacName, '--verb=list,get', '--resource=secondcronjobs.secondcron.io']);
    await kubectlOk(['create', 'clusterrolebinding', rbacName, `--clusterrole=${rbacName}`, `--serviceaccount=${ns.name}:reader`]);
    // A service account token is a JWT with an expiry: client-node's oidc provider uses it as the
    // id-token as long as it has not expired, without asking the (absent) issuer.
    const token = (await kubectlOk(['create', 'token', 'reader', '-n', ns.name, '--duration=1h'])).trim();
    const view = JSON.parse(await kubectlOk(['config', 'view', '--raw', '--minify', '-o', 'json'])) as {
      clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    };
    const cluster = view.clusters[0]?.cluster;
    assert.ok(cluster, 'the test kubeconfig names its cluster');
    const write = (name: string, user: Record<string, unknown>): { name: string; path: string } => {
      const path = join(tmp, `${name}.kubeconfig`);
      writeFileSync(path, JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'test', cluster }],
        users: [{ name, user }],
        contexts: [{ name, context: { cluster: 'test', user: name } }],
        'current-context': name,
      }), { mode: 0o600 });
      return { name, path };
    };
    // The exec plugin uses only shell builtins: the krew run has no /bin on PATH.
    const plugin = join(tmp, 'credential-plugin');
    writeFileSync(plugin, `#!/bin/sh\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' '${token}'\n`, { mode: 0o700 });
    kubeconfigs = [
      write('auth-provider', { 'auth-provider': { name: 'oidc', config: { 'client-id': 'secondcron-test', 'idp-issuer-url': 'https://127.0.0.1:9/unused', 'id-token': token } } }),
      write('exec', { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } }),
    ];
  });

  after(async () => {
    if (rbacName) {
      await kubectl(['delete', 'clusterrolebinding', rbacName, '--ignore-not-found']);
      await kubectl(['delete', 'clusterrole', rbacName, '--ignore-not-found']);
    }
    await ns?.cleanup();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  test('npm: the package holds only what runs; npm install -g puts kubectl-secondcron on PATH', async (t) => {
    const packed = await runCommand('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: ROOT, timeoutMs: 120_000 });
    assert.equal(packed.code, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout) as { filename: string; size: number; files: { path: string }[] }[];
    assert.ok(info);
    const files = info.files.map((f) => f.path).sort();
    const unexpected = files.filter((f) => !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/build-info.json', 'dist/bin/kubectl-secondcron'].includes(f) && !/^dist\/.+\.js$/.test(f));
    assert.deepEqual(unexpected, [], 'files that do not run');
    for (const needed of ['dist/bin/kubectl-secondcron', 'dist/main.js', 'dist/plugin/plugin.js', 'LICENSE', 'CHANGELOG.md']) assert.ok(files.includes(needed), `${needed} is in the package`);
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { private?: boolean; bin: Record<string, string>; engines: { node: string } };
    assert.equal(manifest.private, undefined);
    assert.equal(manifest.bin['kubectl-secondcron'], 'dist/bin/kubectl-secondcron');
    t.diagnostic(`${info.filename}: ${files.length} files, ${info.size} bytes`);

    // As a user installs it: an empty prefix, dependencies resolved by npm from the registry — not
    // from this repository's lockfile (there is no npm-shrinkwrap.json, and the cwd has no lockfile).
    assert.equal(existsSync(join(ROOT, 'npm-shrinkwrap.json')), false, 'no shrinkwrap: users get what npm resolves');
    assert.equal(manifest.engines.node, '>=24');
    assert.equal((manifest as { overrides?: unknown }).overrides, undefined, 'no overrides: they would apply only inside this repository');
    const prefix = join(tmp, 'npm-prefix');
    const installed = await runCommand('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', join(tmp, info.filename)], { cwd: tmp, timeoutMs: 300_000 });
    assert.equal(installed.code, 0, installed.stderr);
    assert.ok(existsSync(join(prefix, 'bin', 'kubectl-secondcron')), 'kubectl-secondcron in <prefix>/bin');
    const tree = join(prefix, 'lib', 'node_modules', 'secondcron');
    assert.equal(existsSync(join(tree, 'package-lock.json')), false, 'the installed copy has no lockfile of ours');
    const undici = (dir: string): string | undefined =>
      existsSync(join(dir, 'package.json')) ? (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version : undefined;
    t.diagnostic(`installed undici: ${undici(join(tree, 'node_modules', 'undici')) ?? '-'}, client-node's own: ${undici(join(tree, 'node_modules', '@kubernetes', 'client-node', 'node_modules', 'undici')) ?? '(shared)'}`);
    // The npm package runs on the user's Node.js: its directory on PATH besides the prefix and kubectl.
    const path = [join(prefix, 'bin'), dirname(process.execPath), kubectlOnly];
    await assertRuns(path);
    await assertReadsCluster(path);
  });

  test('krew: the single executable from the local manifest and archive runs with no Node.js on PATH', async (t) => {
    const release = join(tmp, 'release');
    const built = await runCommand(process.execPath, [join(ROOT, 'build', 'release', 'plugin-executable.js')], { env: { ...process.env, RELEASE_DIR: release, PLUGIN_PLATFORMS: 'linux/amd64' }, timeoutMs: 300_000 });
    assert.equal(built.code, 0, built.stderr);
    const manifestPath = join(release, 'secondcron.yaml');
    const archive = join(release, 'kubectl-secondcron-linux-amd64.tar.gz');
    const manifest = load(readFileSync(manifestPath, 'utf8')) as { spec: { version: string; platforms: { sha256: string; bin: string }[] } };
    assert.equal(manifest.spec.version, `v${VERSION}`);
    const sha = execFileSync('sha256sum', [archive], { encoding: 'utf8' }).split(' ')[0];
    assert.equal(manifest.spec.platforms[0]?.sha256, sha, 'the manifest carries the archive digest');

    const krewRoot = join(tmp, 'krew');
    const krew = await runCommand(join(releaseToolsDir(), 'krew'), ['install', `--manifest=${manifestPath}`, `--archive=${archive}`],
      { env: { HOME: tmp, KREW_ROOT: krewRoot, PATH: '/usr/bin:/bin' }, timeoutMs: 120_000 });
    assert.equal(krew.code, 0, `${krew.stdout}${krew.stderr}`);
    assert.match(krew.stderr + krew.stdout, /Installed plugin: secondcron/);
    const receipt = load(readFileSync(join(krewRoot, 'receipts', 'secondcron.yaml'), 'utf8')) as { spec: { version: string } };
    assert.equal(receipt.spec.version, `v${VERSION}`);

    const exe = join(krewRoot, 'bin', 'kubectl-secondcron');
    const head = Buffer.alloc(4);
    const fd = openSync(exe, 'r');
    readSync(fd, head, 0, 4, 0);
    closeSync(fd);
    assert.deepEqual([...head], [0x7f, 0x45, 0x4c, 0x46], 'an ELF executable, not a script for node');
    const path = [join(krewRoot, 'bin'), kubectlOnly];
    assert.deepEqual(path.filter((d) => existsSync(join(d, 'node'))), [], 'no node on PATH');
    // A user's NODE_OPTIONS for their own Node.js programs: a Node.js program honouring it dies.
    nodeOptions = `--require ${join(tmp, 'no-such-hook.js')}`;
    try {
      await assertRuns(path);
      await assertReadsCluster(path);
    } finally {
      nodeOptions = undefined;
    }
    t.diagnostic(`archive ${readFileSync(archive).length} bytes`);
  });
});
