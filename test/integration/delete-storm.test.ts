// A user cleaning up a mistake: 500 SecondCronJobs created at once, then deleted together (as
// `kubectl delete scj --all`), while a healthy 1 s schedule runs in another namespace. Every deleted
// resource and its Jobs must be gone within seconds, whatever order the creates, finalizer patches
// and deletions meet in (repeated with two seeds: deleted at once, and while finalizers are added).
// The healthy schedule's lateness and gaps during the storm are reported, not asserted: on a loaded
// test machine the API server itself answers creates in seconds (timings belong to make bench).
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import pLimit from 'p-limit';

import { bulkCreate, restFor, scjPath } from '../../bench/lib/kube.js';
import { JobWatcher } from '../cluster/job-watcher.js';
import { kubectl, kubectlOk, testKubeconfig, type TestNamespace, uniqueNamespace } from './helpers/cluster-env.js';
import { installCrd } from '../cluster/crd.js';
import { eventually } from './helpers/eventually.js';
import { FAST_ELECTION, type OperatorProcess, testOperator } from './helpers/operator.js';
import { scjManifest } from './helpers/scj.js';

const STORM = 500;
const GONE_WITHIN_MS = 30_000;
let healthy: TestNamespace;
let storm: TestNamespace;
let ops: OperatorProcess[] = [];
let watcher: JobWatcher;

async function names(kind: string, namespace: string): Promise<string[]> {
  const out = await kubectlOk(['get', kind, '-n', namespace, '-o', 'name'], { timeoutMs: 60_000 });
  return out.split('\n').filter(Boolean);
}

before(async () => {
  await installCrd(kubectl);
  healthy = await uniqueNamespace('storm-healthy');
  storm = await uniqueNamespace('storm');
  ops = [testOperator({ namespaces: [healthy.name, storm.name], identity: 'storm-0', logLevel: 'info', args: [...FAST_ELECTION, '--leader-election-namespace', healthy.name] })];
  await ops[0]?.start();
  await ops[0]?.ready();
  watcher = await new JobWatcher({ kubeconfigPath: testKubeconfig(), namespace: healthy.name }).start();
  await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(scjManifest(healthy.name, 'healthy', { intervalSeconds: 1 })) });
  await eventually('healthy Jobs flowing', async () => (watcher.seen.length >= 3 ? true : undefined), { timeoutMs: 20_000 });
});

after(async () => {
  watcher?.stop();
  await Promise.all(ops.map((o) => o.dispose()));
  await storm?.cleanup();
  await healthy?.cleanup();
});

for (const [seed, deleteAfterMs] of [[1, 0], [2, 1_500]] as const) {
  test(`seed ${seed}: ${STORM} created, deleted together ${deleteAfterMs} ms later: all gone within ${GONE_WITHIN_MS / 1000} s`, async (t) => {
    const scjNames = Array.from({ length: STORM }, (_, i) => `s${seed}-${i}`);
    const items = scjNames.map((name, i) => scjManifest(storm.name, name, { intervalSeconds: 10 + ((i * 7 + seed) % 5) }));
    const startedMs = Date.now();
    // As fast as a user's script would: 16 creates in flight (kubectl apply of a List is sequential).
    const rest = restFor(testKubeconfig());
    await bulkCreate(rest, scjPath(storm.name), items, 16);
    const createdMs = Date.now();
    await sleep(deleteAfterMs);
    const deleteMs = Date.now();
    // What `kubectl delete scj --all` asks for, 16 at a time: kubectl sends the 500 DELETEs one after
    // the other (over two minutes on a loaded 2-core test machine), and one DeleteCollection ran
    // into the API server's 60 s request timeout there.
    const limit = pLimit(16);
    await Promise.all(scjNames.map((name) => limit(() => rest.request({ verb: 'delete', path: `${scjPath(storm.name)}/${name}`, timeoutMs: 60_000 }))));
    const deletedMs = Date.now(); // every deletion requested
    let left: string[] = [];
    const goneMs = await eventually(
      'every SecondCronJob gone',
      async () => {
        left = await names('secondcronjobs', storm.name);
        return left.length === 0 ? Date.now() : undefined;
      },
      { timeoutMs: GONE_WITHIN_MS, intervalMs: 500 },
    ).catch((err: unknown) => {
      throw new Error(`${left.length} SecondCronJob(s) still there ${GONE_WITHIN_MS / 1000} s after the delete (${left.slice(0, 5).join(', ')}): ${String(err)}`);
    });
    const jobsGoneMs = await eventually('their Jobs gone', async () => ((await names('jobs', storm.name)).length === 0 ? Date.now() : undefined), { timeoutMs: GONE_WITHIN_MS, intervalMs: 500 });
    const during = watcher.seen.filter((j) => j.slotMs >= startedMs && j.slotMs <= goneMs);
    const lateness = during.map((j) => j.arrivedMs - j.slotMs).sort((a, b) => a - b);
    const at = (q: number): number => lateness[Math.min(lateness.length - 1, Math.floor(q * lateness.length))] ?? Number.NaN;
    const slots = during.map((j) => j.slotMs).sort((a, b) => a - b);
    const gaps = slots.filter((s, i) => i > 0 && s - (slots[i - 1] as number) > 1000).length;
    const message =
      `created in ${((createdMs - startedMs) / 1000).toFixed(1)} s; delete took ${((deletedMs - deleteMs) / 1000).toFixed(1)} s; ` +
      `all SecondCronJobs gone ${((goneMs - deletedMs) / 1000).toFixed(1)} s after it returned, their Jobs ${((jobsGoneMs - deletedMs) / 1000).toFixed(1)} s; healthy schedule: ${during.length} Jobs, watch-observed lateness p50 ${at(0.5)} ms, ` +
      `p99 ${at(0.99)} ms, max ${lateness.at(-1)} ms, ${lateness.filter((l) => l >= 1000).length} ≥ 1 s, gaps ${gaps}`;
    t.diagnostic(message);
    process.stderr.write(`[delete-storm] ${message}\n`);
  });
}
