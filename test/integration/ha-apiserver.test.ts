// kube-apiserver stopped for 10 s and started again (a private control plane, so other tests are
// not disturbed): the leader steps down or resumes, caches recover, scheduling resumes, no duplicates:
// history limit 0, and each Job name's creates counted from the private API server's audit log.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { type Cluster, startCluster } from '../cluster/cluster.js';
import { JobWatcher } from '../cluster/job-watcher.js';
import { auditedJobWrites, createProblems, describeJobWrites, slotOfJobName } from './helpers/audit-creates.js';
import { eventually } from './helpers/eventually.js';
import { FAST_ELECTION, type OperatorProcess, testOperator } from './helpers/operator.js';
import { scjManifest } from './helpers/scj.js';
import { installCrd } from '../cluster/crd.js';


let cluster: Cluster;
let watcher: JobWatcher;
const ops: OperatorProcess[] = [];

before(async () => {
  cluster = await startCluster({ nodes: 1, auditJobWrites: { users: ['admin'] } });
  const ok = async (args: string[], input?: string): Promise<string> => {
    const res = await cluster.kubectl(args, input === undefined ? {} : { input });
    if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
    return res.stdout;
  };
  await installCrd((args) => cluster.kubectl(args));
  await ok(['wait', '--for=create', 'serviceaccount/default', '-n', 'default', '--timeout=60s']);
  watcher = await new JobWatcher({ kubeconfigPath: cluster.kubeconfigPath, namespace: 'default' }).start();
  for (let i = 0; i < 2; i++) {
    ops.push(testOperator({ kubeconfig: cluster.kubeconfigPath, env: cluster.env, namespaces: ['default'], identity: `replica-${i}`, args: [...FAST_ELECTION, '--leader-election-namespace', 'default'] }));
  }
  await Promise.all(ops.map((o) => o.start()));
  await Promise.all(ops.map((o) => o.ready()));
  await ok(['apply', '-f', '-'], JSON.stringify(scjManifest('default', 'tick', { intervalSeconds: 1, successfulJobsHistoryLimit: 0, failedJobsHistoryLimit: 0 })));
  await eventually('Jobs flowing', async () => (watcher.slotsOf('tick').length >= 3 ? true : undefined), { timeoutMs: 15_000 });
});

after(async () => {
  watcher?.stop();
  await Promise.all(ops.map((o) => o.dispose()));
  await cluster?.stop();
});

test('kube-apiserver down for 10 s: scheduling resumes after it returns, without duplicates', async (t) => {
  const downAt = Date.now();
  await cluster.stopApiServer();
  await new Promise((r) => setTimeout(r, 10_000));
  const leadersDuringOutage = await Promise.all(ops.map((o) => o.metric('secondcron_leader')));
  await cluster.startApiServer();
  const upAt = Date.now();

  const resumed = await eventually('a Job for a slot after the restart', async () => {
    const s = watcher.slotsOf('tick').find((slot) => slot > upAt);
    return s;
  }, { timeoutMs: 30_000 });
  await new Promise((r) => setTimeout(r, 5_000));

  const slots = watcher.slotsOf('tick');
  const afterResume = slots.filter((s) => s >= resumed);
  const writes = await auditedJobWrites({ namespace: 'default' }, { path: cluster.auditLogPath });
  t.diagnostic(`outage ${upAt - downAt} ms; first slot after restart ${resumed - upAt} ms after the apiserver came back; leader gauges during the outage ${leadersDuringOutage.join(',')}; ${describeJobWrites(writes)}`);
  // A create on the wire when the server stopped (an unknown outcome, retried for its own slot) may
  // meet the Job the first one stored: that 409 the outage provoked. A second 201 is never allowed.
  const onTheWire = (name: string): boolean => {
    const slot = slotOfJobName(name);
    return slot >= downAt - 2_000 && slot <= upAt;
  };
  assert.deepEqual(createProblems(writes, { allow409: onTheWire }), [], 'API server audit: no Job name created twice, no 409 but for a slot on the wire during the outage');
  assert.deepEqual(watcher.duplicates(), [], 'no slot created twice');
  assert.deepEqual(leadersDuringOutage, [0, 0], 'unable to renew, the leader stepped down (fencing) during the outage');
  assert.ok(afterResume.length >= 4, 'scheduling resumed');
  assert.ok(afterResume.every((s, i) => i === 0 || s - (afterResume[i - 1] as number) === 1_000), 'and runs every slot again');
  const leaders = await Promise.all(ops.map((o) => o.metric('secondcron_leader')));
  assert.equal(leaders.reduce<number>((a, b) => a + (b ?? 0), 0), 1, 'exactly one leader again');
  const syncedAgain = await Promise.all(ops.map((o) => fetch(`http://127.0.0.1:${o.healthPort}/readyz`).then((r) => r.status)));
  assert.deepEqual(syncedAgain, [200, 200]);
});
