// Runs the operator the way its container runs it: node as PID 1 of its own PID namespace (the kernel
// then drops signals PID 1 has no handler for, as in a pod), and optionally a service-account
// directory mounted where the kubelet mounts it. Namespaces belong to the unshare(1) child and vanish
// with it; --kill-child takes the operator down if unshare is killed.
import { readFileSync } from 'node:fs';

/** Where the kubelet mounts the service-account token, CA and namespace. */
export const SERVICE_ACCOUNT_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

export function podLauncher(opts: { serviceAccountDir?: string } = {}): string[] {
  const pid1 = ['unshare', '--pid', '--fork', '--kill-child'];
  if (!opts.serviceAccountDir) return pid1;
  // A private mount namespace: a tmpfs over /run (/var/run links to it) holds the mount point, so the
  // host's /run stays untouched; the bind mount shows later renames in the directory (token rotation).
  const script = `mount -t tmpfs tmpfs /run && mkdir -p ${SERVICE_ACCOUNT_MOUNT} && mount --bind "$0" ${SERVICE_ACCOUNT_MOUNT} && exec "$@"`;
  return [...pid1, '--mount', '--propagation', 'private', 'sh', '-c', script, opts.serviceAccountDir];
}

/** The host PID of the process unshare forked (node, PID 1 inside). */
export function sandboxedPid(unsharePid: number): number {
  const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  if (children.length !== 1) throw new Error(`unshare ${unsharePid} has ${children.length} children, expected 1`);
  return Number(children[0]);
}
