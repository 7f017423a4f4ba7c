// The operator as a child process aimed at the shared test cluster.
import { OperatorProcess, type OperatorOptions } from '../../cluster/operator-process.js';
import { testEnv, testKubeconfig } from './cluster-env.js';

export { OperatorProcess };

export type TestOperatorOptions = Omit<OperatorOptions, 'kubeconfig' | 'env'> & Partial<Pick<OperatorOptions, 'kubeconfig' | 'env'>>;

export function testOperator(opts: TestOperatorOptions): OperatorProcess {
  return new OperatorProcess({ kubeconfig: testKubeconfig(), ...opts, env: { ...testEnv(), ...opts.env } });
}

export async function startOperator(opts: TestOperatorOptions): Promise<OperatorProcess> {
  const op = testOperator(opts);
  await op.start();
  return op.ready();
}
