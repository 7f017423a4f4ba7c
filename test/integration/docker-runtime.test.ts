// The Dockerfile without Docker: its stages are read and their COPY/RUN instructions replayed into
// temp directories (the context is the repository, as `docker build .`), then the operator is run
// from the runtime stage's directory — as the image's USER when this process may switch users —
// against the shared test cluster. What is proved: the runtime stage holds everything the operator
// needs (and no dev dependencies), `node dist/main.js` is a working entrypoint, and SIGTERM ends it
// cleanly.
import assert from 'node:assert/strict';
import { chmodSync, chownSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, posix } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { envName, FLAGS } from '../../src/config.js';
import { ManagedProcess } from '../cluster/managed-process.js';
import { track } from '../cluster/process-registry.js';
import { runCommand } from '../cluster/run-command.js';
import { kubectlOk, testKubeconfig, uniqueNamespace, type TestNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';
import { REPO_ROOT } from './helpers/helm.js';
import { scjManifest } from './helpers/scj.js';

// ---- reading the Dockerfile ------------------------------------------------------------------

interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

/** Instructions with continuation lines joined and comments dropped; ARGs before FROM substituted into FROM. */
function parseDockerfile(text: string): Stage[] {
  const logical: Instruction[] = [];
  let buffer = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    if (buffer === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) return;
    if (buffer === '') start = i + 1;
    if (line.endsWith('\\')) {
      buffer += line.slice(0, -1) + ' ';
      return;
    }
    buffer += line;
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(buffer);
    assert.ok(m, `Dockerfile line ${start}: cannot parse "${buffer}"`);
    logical.push({ keyword: (m[1] as string).toUpperCase(), args: (m[2] as string).trim(), line: start });
    buffer = '';
  });
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const ins of logical) {
    if (ins.keyword === 'ARG' && stages.length === 0) {
      const [name, value = ''] = ins.args.split('=', 2) as [string, string?];
      globalArgs.set(name, value);
    } else if (ins.keyword === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      assert.ok(m, `Dockerfile line ${ins.line}: FROM ${ins.args}`);
      const base = (m[1] as string).replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => globalArgs.get((a ?? b) as string) ?? '');
      stages.push({ name: m[2] ?? String(stages.length), base, instructions: [] });
    } else {
      const stage = stages.at(-1);
      assert.ok(stage, `Dockerfile line ${ins.line}: ${ins.keyword} before FROM`);
      stage.instructions.push(ins);
    }
  }
  return stages;
}

function exec(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === keyword);
}

/** The last ENTRYPOINT/USER etc. of a stage, as Docker applies them. */
function last(stage: Stage, keyword: string): string | undefined {
  return exec(stage, keyword).at(-1)?.args;
}

// ---- .dockerignore ------------------------------------------------------------------------------

/** The subset of .dockerignore syntax the file uses: plain paths and `**`/`*` globs, no `!` exceptions. */
function dockerignore(): RegExp[] {
  const lines = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  for (const l of lines) assert.ok(!l.startsWith('!'), `.dockerignore exception "${l}": teach the test about it`);
  return lines.map((pattern) => {
    const re = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*\//g, '(?:.*/)?').replace(/\*\*/g, '.*').replace(/\*/g, '[^/]*');
    return new RegExp(`^${re}(?:/.*)?$`);
  });
}

function ignored(path: string, patterns: RegExp[]): boolean {
  const p = posix.normalize(path).replace(/^\.\//, '').replace(/\/$/, '');
  return patterns.some((re) => re.test(p));
}

// ---- replaying a stage --------------------------------------------------------------------------

interface BuiltStage {
  root: string;
  workdir: string;
  env: Record<string, string>;
  notes: string[];
}

interface Replay {
  stages: Map<string, BuiltStage>;
  patterns: RegExp[];
}

const NPM_CI_FLAGS = new Set(['--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts']);

/** Container path → host path inside the stage's root. */
function hostPath(stage: BuiltStage, path: string): string {
  return join(stage.root, isAbsolute(path) ? path : posix.join(stage.workdir, path));
}

async function replayStage(def: Stage, root: string, replay: Replay, opts: { reuseNodeModulesForFullCi: boolean }): Promise<BuiltStage> {
  const built: BuiltStage = { root, workdir: '/', env: {}, notes: [] };
  mkdirSync(root, { recursive: true });
  for (const ins of def.instructions) {
    switch (ins.keyword) {
      case 'WORKDIR':
        built.workdir = posix.resolve(built.workdir, ins.args);
        mkdirSync(hostPath(built, '.'), { recursive: true });
        break;
      case 'ENV': {
        const m = /^(\w+)=(.*)$/.exec(ins.args);
        assert.ok(m, `line ${ins.line}: ENV ${ins.args} (only KEY=value is supported)`);
        built.env[m[1] as string] = m[2] as string;
        break;
      }
      case 'COPY': {
        const words = ins.args.split(/\s+/);
        const from = words[0]?.startsWith('--from=') ? (words.shift() as string).slice('--from='.length) : undefined;
        assert.ok(words.every((w) => !w.startsWith('--')), `line ${ins.line}: COPY flags other than --from are not replayed`);
        const dest = words.pop() as string;
        assert.ok(words.length > 0, `line ${ins.line}: COPY without a source`);
        const destIsDir = dest.endsWith('/') || words.length > 1;
        for (const src of words) {
          let source: string;
          if (from) {
            const stage = replay.stages.get(from);
            assert.ok(stage, `line ${ins.line}: COPY --from=${from}: no such earlier stage`);
            source = hostPath(stage, src);
          } else {
            assert.ok(!ignored(src, replay.patterns), `line ${ins.line}: COPY ${src}, but .dockerignore excludes it`);
            source = join(REPO_ROOT, src);
          }
          assert.ok(existsSync(source), `line ${ins.line}: COPY source ${src} does not exist`);
          const target = hostPath(built, destIsDir ? posix.join(dest, posix.basename(src)) : dest);
          mkdirSync(join(target, '..'), { recursive: true });
          // A directory source copies its contents to the target (Docker semantics), as cpSync does.
          cpSync(source, target, { recursive: true });
        }
        break;
      }
      case 'RUN':
        for (const command of ins.args.split('&&').map((c) => c.trim())) await runStep(built, command, ins, opts);
        break;
      case 'USER':
      case 'EXPOSE':
      case 'ENTRYPOINT':
      case 'CMD':
        break; // read by the test itself
      default:
        assert.fail(`line ${ins.line}: ${ins.keyword} is not replayed by test/integration/docker-runtime.test.ts; teach it`);
    }
  }
  return built;
}

async function runStep(built: BuiltStage, command: string, ins: Instruction, opts: { reuseNodeModulesForFullCi: boolean }): Promise<void> {
  const words = command.split(/\s+/);
  const cwd = hostPath(built, '.');
  if (words[0] === 'npm' && words[1] === 'ci') {
    const flags = words.slice(2);
    for (const f of flags) assert.ok(NPM_CI_FLAGS.has(f), `line ${ins.line}: npm ci ${f} is not a flag this test knows`);
    if (!flags.includes('--omit=dev') && opts.reuseNodeModulesForFullCi) {
      // The build stage's full install is the repository's own node_modules (same lockfile, built
      // by `make deps`): it only feeds tsc, and a second download of the dev tools proves nothing.
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(cwd, 'node_modules'));
      built.notes.push(`line ${ins.line}: "${command}" replaced by a link to the repository's node_modules`);
      return;
    }
    // --ignore-scripts always: the test must not run package scripts on this machine either.
    const args = ['ci', ...flags.filter((f) => f !== '--ignore-scripts'), '--ignore-scripts'];
    const res = await runCommand('npm', args, { cwd, env: { ...process.env, NODE_ENV: built.env.NODE_ENV ?? '' }, timeoutMs: 300_000 });
    assert.equal(res.code, 0, `npm ${args.join(' ')}:\n${res.stderr}`);
    built.notes.push(`line ${ins.line}: ran "npm ${args.join(' ')}"`);
    return;
  }
  if (words[0] === 'npx' && words[1] === 'tsc') {
    const res = await runCommand(join(cwd, 'node_modules', '.bin', 'tsc'), words.slice(2), { cwd, timeoutMs: 300_000 });
    // Type errors elsewhere in the tree must not hide here: tsc must exit 0 as in `docker build`.
    assert.equal(res.code, 0, `tsc ${words.slice(2).join(' ')}:\n${res.stdout}${res.stderr}`);
    built.notes.push(`line ${ins.line}: ran "${command}"`);
    return;
  }
  if (command === 'npm cache clean --force') {
    // Shrinks the image layer; on this machine it would empty the shared npm cache instead.
    built.notes.push(`line ${ins.line}: skipped "${command}" (image size only)`);
    return;
  }
  assert.fail(`line ${ins.line}: RUN ${command} is not replayed by this test; teach it`);
}

// ---- the tests ------------------------------------------------------------------------------------

const stages = parseDockerfile(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
const runtime = stages.at(-1) as Stage;
const IMAGE_UID = 65532;

describe('Dockerfile', () => {
  test('multi-stage: a build stage with dev dependencies and tsc, a runtime stage with production dependencies only', () => {
    assert.ok(stages.length >= 2, 'at least two stages');
    const build = stages.find((s) => s.name === 'build');
    assert.ok(build, 'a stage named build');
    assert.ok(exec(build, 'RUN').some((r) => /\bnpm ci\b/.test(r.args) && !r.args.includes('--omit=dev')), 'build: npm ci with dev dependencies');
    assert.ok(exec(build, 'RUN').some((r) => /\bnpx tsc -p tsconfig\.json\b/.test(r.args)), 'build: npx tsc');
    assert.equal(runtime.name, 'runtime');
    const runs = exec(runtime, 'RUN').map((r) => r.args);
    assert.ok(runs.some((r) => /^npm ci (?=.*--omit=dev)/.test(r)), 'runtime: npm ci --omit=dev');
    assert.ok(runs.every((r) => !/\b(tsc|npm (install|i) )/.test(r)), 'runtime: no compiler, no npm install');
    // Only the compiled output comes from the build stage; sources and dev tools stay behind.
    const fromBuild = exec(runtime, 'COPY').filter((c) => c.args.startsWith('--from='));
    assert.deepEqual(fromBuild.map((c) => c.args), ['--from=build /app/dist ./dist']);
    assert.ok(!exec(runtime, 'COPY').some((c) => /\bsrc\b|node_modules/.test(c.args)), 'runtime copies no src or node_modules');
  });

  test('runtime: a slim Node 20 base, a non-root numeric USER, node (not npm, not a shell) as the entrypoint', () => {
    assert.match(runtime.base, /^(node:20[.\d]*-(bookworm|bullseye)-slim|gcr\.io\/distroless\/nodejs20-debian\d+(:nonroot)?)(@sha256:[a-f0-9]{64})?$/);
    assert.equal(last(runtime, 'USER'), `${IMAGE_UID}:${IMAGE_UID}`);
    assert.deepEqual(JSON.parse(last(runtime, 'ENTRYPOINT') ?? 'null'), ['node', 'dist/main.js']);
    assert.equal(last(runtime, 'CMD'), undefined);
    assert.equal(exec(runtime, 'ENV').find((e) => e.args.startsWith('NODE_ENV='))?.args, 'NODE_ENV=production');
    assert.deepEqual(last(runtime, 'EXPOSE')?.split(/\s+/), ['8080', '8081']);
  });

  test('.dockerignore keeps host dependencies and build output out of the context', () => {
    const patterns = dockerignore();
    for (const path of ['node_modules', 'node_modules/x/index.js', 'dist', 'dist/main.js', 'build', '.git', '.cluster', 'test/unit/a.ts']) {
      assert.ok(ignored(path, patterns), `${path} must be ignored`);
    }
    for (const path of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.base.json', 'src/main.ts']) {
      assert.ok(!ignored(path, patterns), `${path} must reach the build`);
    }
  });
});

describe('the runtime stage, rebuilt without Docker, runs the operator', () => {
  let work: string;
  let app: string;
  let ns: TestNamespace | undefined;
  const runAs = process.getuid?.() === 0 ? IMAGE_UID : undefined;
  const setpriv = '/usr/bin/setpriv';

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'secondcron-docker-'));
    chmodSync(work, 0o755);
  });

  after(async () => {
    await ns?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** Runs `node <args>` like the image would: as its user (when possible), in its WORKDIR, with its ENV only. */
  function imageCommand(args: string[], env: Record<string, string>): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
    const nodeArgs = [...(JSON.parse(last(runtime, 'ENTRYPOINT') as string) as string[]).slice(1), ...args];
    const childEnv: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', ...env };
    if (runAs === undefined || !existsSync(setpriv)) return { command: process.execPath, args: nodeArgs, env: childEnv };
    return {
      command: setpriv,
      args: ['--reuid', String(runAs), '--regid', String(runAs), '--clear-groups', '--', process.execPath, ...nodeArgs],
      env: childEnv,
    };
  }

  test('replays the build and runtime stages', async (t) => {
    const replay: Replay = { stages: new Map(), patterns: dockerignore() };
    const t0 = performance.now();
    for (const def of stages) {
      const built = await replayStage(def, join(work, def.name), replay, { reuseNodeModulesForFullCi: def !== runtime });
      replay.stages.set(def.name, built);
      for (const note of built.notes) t.diagnostic(`${def.name}: ${note}`);
    }
    t.diagnostic(`replayed in ${Math.round(performance.now() - t0)} ms`);
    const rt = replay.stages.get(runtime.name) as BuiltStage;
    app = hostPath(rt, '.');
    assert.equal(rt.workdir, '/app');

    // Exactly what the Dockerfile puts there, and production dependencies only.
    assert.deepEqual(readdirSync(app).sort(), ['dist', 'node_modules', 'package-lock.json', 'package.json']);
    assert.ok(existsSync(join(app, 'dist', 'main.js')));
    // Production dependencies only, judged by the lockfile npm installed from: every package not
    // marked dev is there, none marked dev (typescript, @types/express, …) is.
    const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; optional?: boolean }> };
    const entries = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));
    const misplaced = entries
      .filter(([path, meta]) => !meta.optional && existsSync(join(app, path, 'package.json')) === Boolean(meta.dev))
      .map(([path, meta]) => `${path} (${meta.dev ? 'dev, installed' : 'production, missing'})`);
    assert.deepEqual(misplaced, []);
    assert.ok(entries.some(([path, meta]) => path === 'node_modules/typescript' && meta.dev), 'typescript is a dev dependency in the lockfile');
    if (runAs !== undefined) {
      // The tree is root's and read-only for the image user, as in the image.
      for (const p of [app, join(app, 'dist', 'main.js')]) assert.equal(statSync(p).uid, 0);
    }
  });

  test('node dist/main.js --help lists every flag', async () => {
    assert.ok(app, 'the replay test ran first');
    const c = imageCommand(['--help'], { NODE_ENV: 'production' });
    const res = await runCommand(c.command, c.args, { cwd: app, env: c.env });
    assert.equal(res.code, 0, res.stderr);
    for (const f of FLAGS) {
      assert.ok(res.stdout.includes(`--${f.flag}`), `--${f.flag} in --help`);
      assert.ok(res.stdout.includes(envName(f.flag)), `${envName(f.flag)} in --help`);
    }
  });

  test('the operator starts against the test cluster, becomes ready, creates a Job, and stops on SIGTERM', async (t) => {
    assert.ok(app, 'the replay test ran first');
    await kubectlOk(['apply', '-f', join(REPO_ROOT, 'config/crd/secondcronjobs.secondcron.io.yaml')]);
    await kubectlOk(['wait', '--for=condition=established', 'crd/secondcronjobs.secondcron.io', '--timeout=30s']);
    ns = await uniqueNamespace('docker-runtime');

    // The image user must be able to read its kubeconfig (in a pod: the mounted token).
    const kubeconfig = join(work, 'kubeconfig');
    copyFileSync(testKubeconfig(), kubeconfig);
    chmodSync(kubeconfig, 0o600);
    if (runAs !== undefined) chownSync(kubeconfig, runAs, runAs);

    const env: Record<string, string> = {};
    for (const e of exec(runtime, 'ENV')) {
      const [k, v] = e.args.split('=', 2) as [string, string];
      env[k] = v;
    }
    const c = imageCommand([
      '--kubeconfig', kubeconfig,
      '--leader-elect=false',
      '--namespaces', ns.name,
      '--metrics-port', '0',
      '--health-port', '0',
    ], { ...env, POD_NAME: 'docker-runtime-test', POD_NAMESPACE: ns.name });
    const proc = new ManagedProcess({ name: 'operator (runtime stage)', command: c.command, args: c.args, env: c.env, cwd: app, logPath: join(work, 'operator.log') });
    const untrack = track({ name: proc.name, dispose: () => proc.stop(5_000), killNow: () => proc.killNow() });
    t.after(async () => {
      await proc.stop(5_000);
      untrack();
    });
    t.diagnostic(runAs !== undefined ? `running as uid ${runAs}` : 'running as the current user (not root: cannot switch to the image user)');

    // Ports 0: the operator logs the ports it got.
    const ports = await eventually('the operator logs its ports', async () => {
      if (!proc.running) throw new Error(`${proc.describeExit()}\n${proc.logTail(20)}`);
      const line = readFileSync(proc.logPath, 'utf8').split('\n').find((l) => l.includes('"msg":"serving"'));
      return line ? (JSON.parse(line) as { metricsPort: number; healthPort: number }) : undefined;
    }, { timeoutMs: 30_000 });
    assert.ok(ports.healthPort > 0 && ports.metricsPort > 0);
    const t0 = performance.now();
    await eventually('/readyz answers 200', async () => {
      if (!proc.running) throw new Error(`${proc.describeExit()}\n${proc.logTail(20)}`);
      const res = await fetch(`http://127.0.0.1:${ports.healthPort}/readyz`).catch(() => undefined);
      return res?.status === 200 ? true : undefined;
    }, { timeoutMs: 60_000 });
    t.diagnostic(`ready ${Math.round(performance.now() - t0)} ms after the ports were logged`);

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

    await proc.stop(15_000);
    const exit = await proc.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, `exit after SIGTERM:\n${proc.logTail(10)}`);
    assert.match(readFileSync(proc.logPath, 'utf8'), /"msg":"stopped"/);
  });
});
