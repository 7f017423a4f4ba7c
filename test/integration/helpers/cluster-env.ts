// How integration tests reach the shared control plane started by test/cluster/run-integration.ts.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

import { runCommand, type CommandResult } from '../../cluster/run-command.js';

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: integration tests need the local control plane. Run them with ` +
        '`make test-integration` (or `node build/test/cluster/run-integration.js [file]` with ' +
        'SECONDCRON_BIN_DIR set), not with plain `node --test`.',
    );
  }
  return value;
}

/** Admin kubeconfig of the shared test cluster. */
export function testKubeconfig(): string {
  return required('SECONDCRON_TEST_KUBECONFIG');
}

/**
 * Kubeconfig of the ServiceAccount bound to exactly the chart's cluster-mode RBAC: the operators'
 * identity (test/cluster/operator-rbac.ts), whose every request the run judges at its end.
 */
export function operatorKubeconfig(): string {
  return required('SECONDCRON_TEST_OPERATOR_KUBECONFIG');
}

/** Directory of the pinned binaries (kubectl, helm, kwok, kube-*, etcd). */
export function testBinDir(): string {
  return required('SECONDCRON_BIN_DIR');
}

/** Environment for child processes (the operator, helm, kubectl) aimed at the shared cluster. */
export function testEnv(): NodeJS.ProcessEnv {
  const binDir = testBinDir();
  return {
    ...process.env,
    KUBECONFIG: testKubeconfig(),
    PATH: `${binDir}:${process.env.PATH ?? ''}`,
  };
}

/** Runs the pinned kubectl against the shared cluster. */
export function kubectl(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<CommandResult> {
  return runCommand(join(testBinDir(), 'kubectl'), [`--kubeconfig=${testKubeconfig()}`, ...args], {
    env: testEnv(),
    input: opts.input,
    timeoutMs: opts.timeoutMs,
  });
}

/** kubectl that throws with its stderr when it fails; returns stdout. */
export async function kubectlOk(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<string> {
  const res = await kubectl(args, opts);
  if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${res.code}): ${res.stderr.trim()}`);
  return res.stdout;
}

export interface TestNamespace {
  name: string;
  /** Deletes the namespace without waiting for its contents to go. */
  cleanup(): Promise<void>;
}

/**
 * Creates a namespace `<prefix>-<random>` and waits for its "default" ServiceAccount, without which
 * pods (and so Jobs) cannot be admitted yet.
 */
export async function uniqueNamespace(prefix: string): Promise<TestNamespace> {
  const base = prefix.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, '').slice(0, 50) || 'test';
  const name = `${base}-${randomBytes(3).toString('hex')}`;
  await kubectlOk(['create', 'namespace', name]);
  await kubectlOk(['wait', '--for=create', 'serviceaccount/default', '-n', name, '--timeout=60s']);
  return {
    name,
    cleanup: async () => {
      await kubectlOk(['delete', 'namespace', name, '--wait=false', '--ignore-not-found']);
    },
  };
}
