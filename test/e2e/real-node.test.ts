// The real node of `make e2e`'s cluster (test/cluster/real-node/) as Kubernetes sees it: Ready,
// labelled and tainted so only pods meant for it land there, running a pod on its bridge, serving
// logs through the apiserver, and the `kubernetes` Service pointing at the node's address.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { NODE_IP, NODE_NAME, PAUSE_IMAGE, POD_SUBNET, REAL_NODE_LABEL, REAL_NODE_TAINT } from '../cluster/real-node/addresses.js';
import { kubectlOk, uniqueNamespace, type TestNamespace } from '../integration/helpers/cluster-env.js';
import { eventually } from '../integration/helpers/eventually.js';

interface PodStatus {
  spec: { nodeName?: string };
  status: { phase?: string; podIP?: string; containerStatuses?: { ready: boolean }[] };
}

let ns: TestNamespace;

before(async () => {
  ns = await uniqueNamespace('real-node');
});

after(async () => {
  await ns?.cleanup();
});

function pod(name: string, tolerate: boolean): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns.name },
    spec: {
      terminationGracePeriodSeconds: 2,
      ...(tolerate
        ? {
          nodeSelector: { [REAL_NODE_LABEL]: 'true' },
          tolerations: [{ key: REAL_NODE_TAINT, operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
        }
        : {}),
      containers: [{ name: 'main', image: PAUSE_IMAGE, imagePullPolicy: 'Never' }],
    },
  };
}

async function podStatus(name: string): Promise<PodStatus> {
  return JSON.parse(await kubectlOk(['get', 'pod', name, '-n', ns.name, '-o', 'json'])) as PodStatus;
}

test('the real node is Ready, labelled and tainted, with its InternalIP', async () => {
  const node = JSON.parse(await kubectlOk(['get', 'node', NODE_NAME, '-o', 'json'])) as {
    metadata: { labels: Record<string, string> };
    spec: { taints?: { key: string; value?: string; effect: string }[] };
    status: { conditions: { type: string; status: string }[]; addresses: { type: string; address: string }[] };
  };
  assert.equal(node.status.conditions.find((c) => c.type === 'Ready')?.status, 'True');
  assert.equal(node.metadata.labels[REAL_NODE_LABEL], 'true');
  assert.deepEqual(node.spec.taints, [{ key: REAL_NODE_TAINT, value: 'true', effect: 'NoSchedule' }]);
  assert.ok(node.status.addresses.some((a) => a.type === 'InternalIP' && a.address === NODE_IP));
});

test('a pod that tolerates the taint runs there on the bridge; one that does not goes to a fake node', async () => {
  await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pod('real', true), pod('fake', false)] }) });
  const real = await eventually('the real pod Running and Ready', async () => {
    const p = await podStatus('real');
    return p.status.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500 });
  assert.equal(real.spec.nodeName, NODE_NAME);
  assert.ok(real.status.podIP?.startsWith(POD_SUBNET.replace(/0\/24$/, '')), `pod IP ${real.status.podIP} on the bridge`);
  const fake = await eventually('the other pod scheduled', async () => (await podStatus('fake')).spec.nodeName || undefined);
  assert.notEqual(fake, NODE_NAME, 'an untolerating pod never lands on the real node');
  // Logs come from the kubelet, through the apiserver's client certificate (empty for pause).
  await kubectlOk(['logs', 'real', '-n', ns.name]);
});

test('the kubernetes Service points at the node address, where the apiserver listens', async () => {
  const ep = JSON.parse(await kubectlOk(['get', 'endpointslices', '-n', 'default', '-l', 'kubernetes.io/service-name=kubernetes', '-o', 'json'])) as {
    items: { endpoints: { addresses: string[] }[] }[];
  };
  assert.deepEqual(ep.items.flatMap((s) => s.endpoints.flatMap((e) => e.addresses)), [NODE_IP]);
});
