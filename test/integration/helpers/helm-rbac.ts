// Acting as the chart's ServiceAccount: a kubeconfig with a TokenRequest token (what the kubelet
// would mount in the pod), and `kubectl auth can-i --as system:serviceaccount:…` checks.
import { join } from 'node:path';

import type { Cluster } from '../../cluster/cluster.js';
import { writeKubeconfig } from '../../cluster/kubeconfig.js';

export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/**
 * Writes `<dir>/<name>.kubeconfig` holding a fresh token of the ServiceAccount (TokenRequest API,
 * `kubectl create token`), valid for `duration` (a Go duration), and returns its path.
 */
export async function serviceAccountKubeconfig(cluster: Cluster, namespace: string, name: string, dir: string, duration = '1h'): Promise<string> {
  const res = await cluster.kubectl(['create', 'token', name, '-n', namespace, `--duration=${duration}`]);
  if (res.code !== 0) throw new Error(`kubectl create token ${name} -n ${namespace}: ${res.stderr}`);
  const path = join(dir, `${name}.kubeconfig`);
  writeKubeconfig(path, { server: cluster.server, caPem: cluster.caPem, user: serviceAccountUser(namespace, name), token: res.stdout.trim(), namespace });
  return path;
}

export interface Access {
  verb: string;
  /** resource or resource.group, as kubectl auth can-i takes it. */
  resource: string;
  /**
   * status, finalizers, exec…: passed as --subresource (kubectl reads "resource/x" as the object
   * named x, so "secondcronjobs/status" would ask about the resource itself).
   */
  subresource?: string;
  /** Omitted: cluster-wide (--all-namespaces for namespaced resources). */
  namespace?: string;
  /** A resource name (for rules limited by resourceNames). */
  name?: string;
}

export function describeAccess(a: Access): string {
  return `${a.verb} ${a.resource}${a.subresource ? ' subresource ' + a.subresource : ''}${a.name ? ' named ' + a.name : ''} ${a.namespace ? 'in ' + a.namespace : 'cluster-wide'}`;
}

/** `kubectl auth can-i` as `user` (impersonated by the admin): true = yes, false = no. */
export async function canI(cluster: Cluster, user: string, a: Access): Promise<boolean> {
  const target = a.name ? `${a.resource}/${a.name}` : a.resource;
  const scope = a.namespace ? ['-n', a.namespace] : ['--all-namespaces'];
  const sub = a.subresource ? ['--subresource', a.subresource] : [];
  const res = await cluster.kubectl(['auth', 'can-i', a.verb, target, ...scope, ...sub, '--as', user]);
  const answer = res.stdout.trim();
  // Exit code 0 = yes, 1 = no; anything else (or an unexpected answer) is an error, not a "no".
  if (res.code === 0 && answer === 'yes') return true;
  if (res.code === 1 && answer.startsWith('no')) return false;
  throw new Error(`kubectl auth can-i ${describeAccess(a)} --as ${user}: code ${res.code}, stdout ${answer}, stderr ${res.stderr}`);
}
