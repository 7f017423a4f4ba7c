// What a failed `helm install/upgrade --wait` leaves behind, gathered before the private control
// plane (and its log directory) goes away, so a flaky failure explains itself in the test output.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Cluster } from '../../cluster/cluster.js';

/** Control-plane components whose logs say why a pod was not created, scheduled or made Ready. */
const LOGGED_COMPONENTS = ['kwok', 'kube-scheduler', 'kube-controller-manager'] as const;

/** Start-up chatter that would push the lines that matter out of a log tail. */
const LOG_NOISE = /Caches are synced|Waiting for caches to sync|Started .* informer|Starting .* controller/;

const POD_STATE_COLUMNS = [
  'NAME:.metadata.name',
  'NODE:.spec.nodeName',
  'PHASE:.status.phase',
  'CONDITIONS:.status.conditions[*].type',
  'STATUSES:.status.conditions[*].status',
  'DELETING:.metadata.deletionTimestamp',
].join(',');

const NODE_STATE_COLUMNS = [
  'NAME:.metadata.name',
  'READY:.status.conditions[?(@.type=="Ready")].status',
  'HEARTBEAT:.status.conditions[?(@.type=="Ready")].lastHeartbeatTime',
  'TAINTS:.spec.taints[*].key',
  'UNSCHEDULABLE:.spec.unschedulable',
].join(',');

function logTail(path: string, lines: number): string {
  try {
    return readFileSync(path, 'utf8').split('\n').filter((line) => line !== '' && !LOG_NOISE.test(line)).slice(-lines).join('\n');
  } catch (err) {
    return `(cannot read: ${err instanceof Error ? err.message : String(err)})`;
  }
}

async function section(cluster: Cluster, title: string, args: string[]): Promise<string> {
  const res = await cluster.kubectl(args, { timeoutMs: 30_000 });
  const body = res.code === 0 ? res.stdout : `(exit ${res.code}) ${res.stderr}${res.stdout}`;
  return `--- ${title}: kubectl ${args.join(' ')} ---\n${body.trimEnd()}`;
}

/**
 * The objects of a release namespace (pods, ReplicaSets, Deployments, PDBs, events, pod
 * conditions), the nodes' readiness, heartbeat, taints and events, and the tails of the kwok,
 * scheduler and controller-manager logs. Never throws: a diagnostic that cannot be had says so.
 */
export async function releaseDiagnostics(cluster: Cluster, namespace: string, logLines = 40): Promise<string> {
  const parts: string[] = [];
  const add = async (title: string, args: string[]): Promise<void> => {
    try {
      parts.push(await section(cluster, title, args));
    } catch (err) {
      parts.push(`--- ${title}: ${err instanceof Error ? err.message : String(err)} ---`);
    }
  };
  await add('objects', ['get', 'pods,rs,deploy,pdb', '-n', namespace, '-o', 'wide', '--show-labels']);
  await add('pod conditions', ['get', 'pods', '-n', namespace, '-o', `custom-columns=${POD_STATE_COLUMNS}`]);
  await add('events', ['get', 'events', '-n', namespace, '-o', 'wide', '--sort-by=.lastTimestamp']);
  await add('nodes', ['get', 'nodes', '-o', `custom-columns=${NODE_STATE_COLUMNS}`]);
  // NodeNotReady here means the node lifecycle controller missed kwok's heartbeat and set every pod
  // on the node Ready=False (see test/cluster/kwok-stages.yaml).
  await add('node events', ['get', 'events', '-n', 'default', '--field-selector', 'involvedObject.kind=Node', '--sort-by=.lastTimestamp']);
  for (const name of LOGGED_COMPONENTS) {
    const path = join(cluster.dir, 'logs', `${name}.log`);
    parts.push(`--- tail of ${path} (start-up chatter left out) ---\n${logTail(path, logLines)}`);
  }
  return parts.join('\n');
}

/**
 * Runs `action`; if it throws, rethrows with the release diagnostics appended to the message
 * (gathered while the cluster still runs).
 */
export async function withReleaseDiagnostics<T>(cluster: Cluster, namespace: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (err) {
    const diagnostics = await releaseDiagnostics(cluster, namespace);
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${message}\n=== diagnostics of namespace ${namespace} ===\n${diagnostics}`, { cause: err });
  }
}
