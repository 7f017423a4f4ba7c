// The one X.509 client certificate the real node needs: the apiserver's identity towards the
// kubelet (logs, exec, port-forward), which the kubelet checks against its client CA. node:crypto
// cannot issue certificates, so the openssl CLI (Debian's `openssl`, present wherever
// ca-certificates is) makes a throwaway CA and the certificate.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { runCommand } from '../run-command.js';

export interface KubeletClientPki {
  caCert: string;
  clientCert: string;
  clientKey: string;
}

async function openssl(args: string[]): Promise<void> {
  let res;
  try {
    res = await runCommand('openssl', args, { timeoutMs: 60_000 });
  } catch (err) {
    throw new Error(`real test node: cannot run openssl (Debian package openssl): ${err instanceof Error ? err.message : String(err)}`);
  }
  if (res.code !== 0) throw new Error(`openssl ${args.join(' ')} failed (${res.code}): ${res.stderr.trim()}`);
}

/** Writes ca.crt, apiserver-kubelet-client.{crt,key} into dir. */
export async function issueKubeletClientPki(dir: string): Promise<KubeletClientPki> {
  const caKey = join(dir, 'kubelet-client-ca.key');
  const pki: KubeletClientPki = {
    caCert: join(dir, 'kubelet-client-ca.crt'),
    clientCert: join(dir, 'apiserver-kubelet-client.crt'),
    clientKey: join(dir, 'apiserver-kubelet-client.key'),
  };
  const csr = join(dir, 'apiserver-kubelet-client.csr');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(['req', '-x509', ...ec, '-keyout', caKey, '-out', pki.caCert, '-days', '2',
    '-subj', '/CN=secondcron-test-kubelet-client-ca']);
  // The user kubeadm gives the apiserver for this: system:masters may do anything on the kubelet.
  await openssl(['req', '-new', ...ec, '-keyout', pki.clientKey, '-out', csr,
    '-subj', '/O=system:masters/CN=kube-apiserver-kubelet-client']);
  const ext = join(dir, 'apiserver-kubelet-client.ext');
  writeFileSync(ext, 'keyUsage = critical, digitalSignature\nextendedKeyUsage = clientAuth\n');
  await openssl(['x509', '-req', '-in', csr, '-CA', pki.caCert, '-CAkey', caKey, '-CAcreateserial',
    '-out', pki.clientCert, '-days', '2', '-extfile', ext]);
  return pki;
}
