// The test control plane itself works: the pinned version, kwok nodes, the Job controller driving
// fake pods to Succeeded/Failed, the per-pod knobs of test/cluster/kwok-stages.yaml, and the
// ServiceAccount controllers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Job, V1JobList, V1NodeList, V1Pod, V1PodList, V1ServiceAccount } from '@kubernetes/client-node';

import { FAIL_ANNOTATION, KWOK_NODE_ANNOTATION, RUN_SECONDS_ANNOTATION, ZONE_LABEL } from '../cluster/cluster.js';
import { kubectl, kubectlOk, uniqueNamespace, type TestNamespace } from './helpers/cluster-env.js';
import { eventually } from './helpers/eventually.js';

function jobManifest(name: string, namespace: string, annotations: Record<string, string> = {}): string {
  const job: V1Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: {
      // One pod, no retries: a failing pod fails the Job at once.
      backoffLimit: 0,
      template: {
        metadata: { annotations },
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'work', image: 'example.invalid/noop:1' }],
        },
      },
    },
  };
  return JSON.stringify(job);
}

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse(await kubectlOk([...args, '-o', 'json'])) as T;
}

async function jobPods(ns: string, job: string): Promise<V1Pod[]> {
  return (await getJson<V1PodList>(['get', 'pods', '-n', ns, '-l', `batch.kubernetes.io/job-name=${job}`])).items;
}

async function waitForJobCondition(ns: string, job: string, condition: 'Complete' | 'Failed'): Promise<void> {
  await kubectlOk(['wait', '-n', ns, `--for=condition=${condition}`, `job/${job}`, '--timeout=60s'], { timeoutMs: 70_000 });
}

function hasCondition(job: V1Job, type: string): boolean {
  return (job.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** Seconds between the container's start and end as recorded in the pod status. */
function runSeconds(pod: V1Pod): number {
  const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
  assert.ok(terminated?.startedAt && terminated.finishedAt, 'container has terminated with start and finish times');
  return (new Date(terminated.finishedAt).getTime() - new Date(terminated.startedAt).getTime()) / 1000;
}

describe('test control plane', () => {
  let ns: TestNamespace;
  let kwokNodes: string[] = [];

  before(async () => {
    ns = await uniqueNamespace('smoke');
    const nodes = (await getJson<V1NodeList>(['get', 'nodes'])).items;
    kwokNodes = nodes
      .filter((n) => n.metadata?.annotations?.[KWOK_NODE_ANNOTATION] === 'fake')
      .map((n) => n.metadata?.name ?? '');
  });

  after(async () => {
    await ns?.cleanup();
  });

  test('serves Kubernetes v1.36.x', async () => {
    const version = JSON.parse(await kubectlOk(['version', '-o', 'json'])) as {
      clientVersion: { gitVersion: string };
      serverVersion: { gitVersion: string; major: string; minor: string };
    };
    assert.match(version.serverVersion.gitVersion, /^v1\.36\.\d+$/);
    assert.equal(version.serverVersion.minor, '36');
    assert.match(version.clientVersion.gitVersion, /^v1\.36\.\d+$/);
  });

  test('kubectl get nodes lists Ready kwok nodes in zones a and b', async () => {
    const nodes = (await getJson<V1NodeList>(['get', 'nodes'])).items;
    const fake = nodes.filter((n) => n.metadata?.annotations?.[KWOK_NODE_ANNOTATION] === 'fake');
    assert.ok(fake.length >= 2, `expected at least 2 kwok nodes, got ${fake.length}`);
    for (const node of fake) {
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      assert.equal(ready?.status, 'True', `node ${node.metadata?.name} is Ready`);
    }
    assert.deepEqual(new Set(fake.map((n) => n.metadata?.labels?.[ZONE_LABEL])), new Set(['a', 'b']));

    const table = await kubectl(['get', 'nodes']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /kwok-node-0\s+Ready/);
  });

  test('a new namespace gets its default ServiceAccount and root CA', async () => {
    const sa = await getJson<V1ServiceAccount>(['get', 'serviceaccount', 'default', '-n', ns.name]);
    assert.equal(sa.metadata?.name, 'default');
    const ca = await eventually('kube-root-ca.crt', async () => {
      const res = await kubectl(['get', 'configmap', 'kube-root-ca.crt', '-n', ns.name, '-o', 'jsonpath={.data.ca\\.crt}']);
      return res.code === 0 && res.stdout.length > 0 ? res.stdout : undefined;
    });
    assert.match(ca, /BEGIN CERTIFICATE/);
  });

  test('a plain Job is scheduled onto a kwok node and completes', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: jobManifest('plain', ns.name) });
    await waitForJobCondition(ns.name, 'plain', 'Complete');
    const pods = await jobPods(ns.name, 'plain');
    assert.equal(pods.length, 1);
    const pod = pods[0] as V1Pod;
    assert.ok(kwokNodes.length > 0, 'the cluster has kwok nodes');
    assert.ok(kwokNodes.includes(pod.spec?.nodeName ?? ''), `pod ran on ${pod.spec?.nodeName}, not a kwok node`);
    assert.equal(pod.status?.phase, 'Succeeded');
    assert.equal(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
    const job = await getJson<V1Job>(['get', 'job', 'plain', '-n', ns.name]);
    assert.equal(job.status?.succeeded, 1);
  });

  test(`a Job whose pods are annotated ${FAIL_ANNOTATION} fails`, async () => {
    await kubectlOk(['apply', '-f', '-'], { input: jobManifest('failing', ns.name, { [FAIL_ANNOTATION]: 'true' }) });
    await waitForJobCondition(ns.name, 'failing', 'Failed');
    const pods = await jobPods(ns.name, 'failing');
    assert.equal(pods.length, 1);
    assert.equal(pods[0]?.status?.phase, 'Failed');
    assert.equal(pods[0]?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 1);
    const job = await getJson<V1Job>(['get', 'job', 'failing', '-n', ns.name]);
    assert.ok(!hasCondition(job, 'Complete'));
  });

  test(`${RUN_SECONDS_ANNOTATION}: "3" keeps the pod Running, then the Job completes`, async () => {
    await kubectlOk(['apply', '-f', '-'], { input: jobManifest('slow', ns.name, { [RUN_SECONDS_ANNOTATION]: '3' }) });
    await eventually('the slow pod to run', async () => {
      const pods = await jobPods(ns.name, 'slow');
      return pods.some((p) => p.status?.phase === 'Running') ? true : undefined;
    });
    await sleep(1_000);
    const [pod] = await jobPods(ns.name, 'slow');
    assert.ok(pod, 'the pod still exists');
    if (pod.status?.phase === 'Running') {
      const jobs = await getJson<V1JobList>(['get', 'jobs', '-n', ns.name, '--field-selector', 'metadata.name=slow']);
      assert.ok(!hasCondition(jobs.items[0] as V1Job, 'Complete'), 'Job is not Complete while its pod runs');
    } else {
      // This machine was too slow to look within 3 s; the recorded run time still has to be 3 s.
      assert.ok(runSeconds(pod) >= 3, `pod ended after ${runSeconds(pod)} s`);
    }
    await waitForJobCondition(ns.name, 'slow', 'Complete');
    const [done] = await jobPods(ns.name, 'slow');
    assert.ok(done);
    assert.equal(done.status?.phase, 'Succeeded');
    assert.ok(runSeconds(done) >= 3, `pod ran ${runSeconds(done)} s, expected at least 3`);
  });

  test('pods of a deleted Job go away', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: jobManifest('doomed', ns.name, { [RUN_SECONDS_ANNOTATION]: '600' }) });
    await eventually('the doomed pod to run', async () => {
      const pods = await jobPods(ns.name, 'doomed');
      return pods.some((p) => p.status?.phase === 'Running') ? true : undefined;
    });
    await kubectlOk(['delete', 'job', 'doomed', '-n', ns.name, '--cascade=foreground', '--wait=true', '--timeout=60s'], { timeoutMs: 70_000 });
    const left = await eventually('the pods of the deleted Job to go', async () => {
      const pods = await jobPods(ns.name, 'doomed');
      return pods.length === 0 ? pods : undefined;
    });
    assert.deepEqual(left, []);
  });
});
