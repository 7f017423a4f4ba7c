// The operator as a child process aimed at the shared test cluster, as the chart's RBAC allows
// (operatorKubeconfig) unless a test names another kubeconfig.
import { OperatorProcess, type OperatorOptions } from '../../cluster/operator-process.js';
import { operatorKubeconfig, testEnv } from './cluster-env.js';

export { OperatorProcess };

export type TestOperatorOptions = Omit<OperatorOptions, 'kubeconfig' | 'env'> & Partial<Pick<OperatorOptions, 'kubeconfig' | 'env'>>;

export function testOperator(opts: TestOperatorOptions): OperatorProcess {
  // `kubeconfig: undefined` given explicitly: the operator finds its cluster itself (in-cluster).
  const kubeconfig = 'kubeconfig' in opts ? opts.kubeconfig : operatorKubeconfig();
  return new OperatorProcess({ ...opts, kubeconfig, env: { ...testEnv(), ...opts.env } });
}

export async function startOperator(opts: TestOperatorOptions): Promise<OperatorProcess> {
  const op = testOperator(opts);
  await op.start();
  return op.ready();
}

/** Short election timings for tests: lease 4 s, renew deadline 3 s, retry 0.5 s. */
export const FAST_ELECTION = ['--lease-duration', '4s', '--renew-deadline', '3s', '--retry-period', '500ms'];

/** `count` replicas named replica-0.. competing for the Lease in `namespace`, all started and Ready. */
export async function startReplicas(count: number, namespace: string, extra: Partial<TestOperatorOptions> = {}): Promise<OperatorProcess[]> {
  const ops = Array.from({ length: count }, (_, i) =>
    testOperator({
      namespaces: [namespace],
      identity: `replica-${i}`,
      ...extra,
      args: [...FAST_ELECTION, '--leader-election-namespace', namespace, ...(extra.args ?? [])],
    }),
  );
  await Promise.all(ops.map((o) => o.start()));
  await Promise.all(ops.map((o) => o.ready()));
  return ops;
}
