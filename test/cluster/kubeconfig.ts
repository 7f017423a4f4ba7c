// Writes kubeconfig files (bearer-token users; see cluster.ts for why tokens, not client certs).
import { writeFileSync } from 'node:fs';

export interface KubeconfigSpec {
  server: string;
  /** PEM bundle that verifies the apiserver's serving certificate. */
  caPem: string;
  user: string;
  token: string;
  namespace?: string;
}

export const CONTEXT_NAME = 'secondcron-test';

export function kubeconfigYaml(spec: KubeconfigSpec): string {
  // Every value is a URL, base64 or a hex token: nothing that needs YAML quoting beyond "…".
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${CONTEXT_NAME}`,
    '  cluster:',
    `    server: "${spec.server}"`,
    `    certificate-authority-data: ${Buffer.from(spec.caPem).toString('base64')}`,
    'users:',
    `- name: "${spec.user}"`,
    '  user:',
    `    token: "${spec.token}"`,
    'contexts:',
    `- name: ${CONTEXT_NAME}`,
    '  context:',
    `    cluster: ${CONTEXT_NAME}`,
    `    user: "${spec.user}"`,
    `    namespace: ${spec.namespace ?? 'default'}`,
    `current-context: ${CONTEXT_NAME}`,
    '',
  ].join('\n');
}

export function writeKubeconfig(path: string, spec: KubeconfigSpec): void {
  writeFileSync(path, kubeconfigYaml(spec), { mode: 0o600 });
}
