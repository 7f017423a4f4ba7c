// `make test-integration`: starts ONE shared control plane, runs the integration tests against it
// (one file at a time), stops it and exits with the tests' exit code.
//
//   node build/test/cluster/run-integration.js                       all of build/test/integration/
//   node build/test/cluster/run-integration.js test/integration/smoke.test.ts   one file (.ts → build/…js)
//   node build/test/cluster/run-integration.js --test-name-pattern=Job          flags go to node --test
//   node build/test/cluster/run-integration.js --real-node build/test/e2e       with a real kubelet node
//                                                                              (`make e2e`; needs SECONDCRON_NODE_BIN_DIR)
//
// Tests find the cluster through SECONDCRON_TEST_KUBECONFIG (see test/integration/helpers/); a test
// that needs a private cluster (e.g. to stop its apiserver) calls startCluster() itself.
//
// Operators run as a ServiceAccount bound to exactly the chart's RBAC (SECONDCRON_TEST_OPERATOR_KUBECONFIG,
// operator-rbac.ts); after the tests its requests in the audit log are judged, and the run fails when
// one was refused (403) or, on a whole run, when the chart grants a verb no operator used.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { startCluster, type Cluster } from './cluster.js';
import { chartOperatorRules, createOperatorIdentity, judgeOperatorAccess, OPERATOR_USER } from './operator-rbac.js';
import { RealNodeHostBusyError } from './real-node/host.js';
import { repoRoot } from './repo-root.js';
import { diesWithParent } from './parent-death.js';
import { shutdownInProgress, track } from './process-registry.js';


function findTestFiles(path: string): string[] {
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const full = join(path, entry.name);
      if (entry.isDirectory()) return findTestFiles(full);
      return entry.name.endsWith('.test.js') ? [full] : [];
    });
}

/** A source path (test/integration/x.test.ts) is mapped to its compiled file under build/. */
function toBuildPath(root: string, arg: string): string {
  const abs = resolve(arg);
  const rel = relative(root, abs);
  if (!rel.startsWith('build') && !rel.startsWith('..')) {
    return join(root, 'build', rel.replace(/\.ts$/, '.js'));
  }
  return abs;
}

/** Flags that run only some tests of the files: such a run cannot show every granted verb used. */
const SUBSET_FLAGS = /^--test-(name-pattern|skip-pattern|only)/;
/** The operators' token outlives any run (a whole run takes ~20 min; a test has at most 10). */
const OPERATOR_TOKEN_DURATION = '12h';

/** How long a run waits for another run's real node to go (one per machine) before giving up. */
const REAL_NODE_WAIT_MS = 30 * 60_000;

async function startSharedCluster(realNode: boolean): Promise<Cluster> {
  const log = (m: string): void => void process.stderr.write(`[run-integration] ${m}\n`);
  const deadline = Date.now() + REAL_NODE_WAIT_MS;
  for (let waited = false; ; waited = true) {
    try {
      // Every request of the operators' ServiceAccount is audited (its RBAC is judged from it), and Job
      // creates and deletes by any operator the tests run (as admin, or in pods as a service account):
      // the failover and fault tests count each Job name's creates from it.
      return await startCluster({
        realNode,
        log,
        auditUsers: [OPERATOR_USER],
        auditJobWrites: { users: ['admin'], userGroups: ['system:serviceaccounts'] },
      });
    } catch (err) {
      if (!(err instanceof RealNodeHostBusyError) || Date.now() > deadline) throw err;
      if (!waited) log(`${err.message}\nWaiting for it to go (up to ${REAL_NODE_WAIT_MS / 60_000} min)…`);
      await sleep(5_000);
    }
  }
}

async function main(argv: string[]): Promise<number> {
  const root = repoRoot();
  const realNode = argv.includes('--real-node');
  const flags = argv.filter((a) => a.startsWith('--') && a !== '--real-node');
  const paths = argv.filter((a) => !a.startsWith('--'));
  const targets = paths.length > 0 ? paths.map((p) => toBuildPath(root, p)) : [join(root, 'build', 'test', 'integration')];
  const missing = targets.filter((t) => !existsSync(t));
  if (missing.length > 0) {
    process.stderr.write(`run-integration: not found: ${missing.join(', ')} (compile with \`npx tsc -p tsconfig.test.json\`)\n`);
    return 2;
  }
  const files = targets.flatMap(findTestFiles);
  if (files.length === 0) {
    process.stderr.write(`run-integration: no *.test.js files in ${targets.join(', ')}\n`);
    return 2;
  }

  process.stderr.write('[run-integration] starting the shared control plane…\n');
  const cluster = await startSharedCluster(realNode);
  process.stderr.write(
    `[run-integration] control plane ready in ${(cluster.startupMs / 1000).toFixed(1)} s ` +
      `(${Object.entries(cluster.timings).map(([k, v]) => `${k} ${v} ms`).join(', ')}); ` +
      `kubeconfig ${cluster.kubeconfigPath}\n`,
  );

  try {
    const rules = await chartOperatorRules(cluster.binDir, cluster.dir);
    const operatorKubeconfig = await createOperatorIdentity(cluster, rules, OPERATOR_TOKEN_DURATION);
    const env: NodeJS.ProcessEnv = {
      ...cluster.env,
      SECONDCRON_TEST_KUBECONFIG: cluster.kubeconfigPath,
      // What test/integration/helpers/operator.ts starts operators with unless a test names another.
      SECONDCRON_TEST_OPERATOR_KUBECONFIG: operatorKubeconfig,
      // End-to-end tests find the real node's containerd (<dir>/real-node.json) and logs here.
      SECONDCRON_TEST_CLUSTER_DIR: cluster.dir,
      // Job creates and deletes as the API server saw them (test/integration/helpers/audit-creates.ts).
      ...(cluster.auditLogPath ? { SECONDCRON_TEST_AUDIT_LOG: cluster.auditLogPath } : {}),
      // Private clusters started by tests resolve their binaries from here; keep the cache dir
      // when the Makefile gave one (cluster.binDir disappears with the shared cluster).
      SECONDCRON_BIN_DIR: process.env.SECONDCRON_BIN_DIR ?? cluster.binDir,
    };
    const hasTimeout = flags.some((f) => f.startsWith('--test-timeout'));
    const args = [
      '--test',
      '--test-concurrency=1',
      // A hung test must not hang CI: no single test may take longer than this.
      ...(hasTimeout ? [] : ['--test-timeout=600000']),
      ...flags,
      ...files,
    ];
    // SIGTERM (not SIGKILL) if this runner dies hard, so node --test can still stop its test files.
    const [command, argv] = diesWithParent(process.execPath, args, 'SIGTERM');
    const child = spawn(command, argv, { env, stdio: 'inherit', cwd: root });
    const exited = new Promise<number>((resolveExit) => {
      child.once('exit', (code, signal) => resolveExit(code ?? (signal === 'SIGINT' ? 130 : 1)));
      child.once('error', () => resolveExit(1));
    });
    const untrack = track({
      name: 'node --test',
      dispose: async () => {
        child.kill('SIGTERM');
        await exited;
      },
      killNow: () => {
        child.kill('SIGKILL');
      },
    });
    const code = await exited;
    untrack();
    if (!cluster.auditLogPath) throw new Error('the shared cluster writes no audit log');
    const complete = paths.length === 0 && !flags.some((f) => SUBSET_FLAGS.test(f));
    const verdict = await judgeOperatorAccess(cluster.auditLogPath, rules, complete);
    const log = (m: string): void => void process.stderr.write(`[run-integration] RBAC ${m}\n`);
    for (const line of verdict.report) log(line);
    for (const problem of verdict.problems) log(`FAILED: ${problem}`);
    if (verdict.problems.length === 0) log(`ok: nothing refused${complete ? ', every granted verb used but those named above' : ''}`);
    return code !== 0 ? code : verdict.problems.length > 0 ? 1 : 0;
  } finally {
    process.stderr.write('[run-integration] stopping the shared control plane…\n');
    await cluster.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // On SIGINT/SIGTERM the process registry finishes the cleanup and exits with 130/143.
    if (!shutdownInProgress()) process.exit(code);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
