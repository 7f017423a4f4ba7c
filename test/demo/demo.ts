// `make demo`: a local control plane, the CRD, three operator replicas competing for the Lease, the
// examples applied, and every Job printed as it appears with its trigger latency (seen by an
// independent watcher: watch arrival minus the slot). Part-way through, the leader is stopped
// (SIGTERM) to show the handover, then started again as a follower. Ctrl-C or DURATION=<s> ends it.
import { KubeConfig, Watch } from '@kubernetes/client-node';

import { startCluster } from '../cluster/cluster.js';
import { OperatorProcess } from '../cluster/operator-process.js';
import { track } from '../cluster/process-registry.js';
import { installCrd } from '../cluster/crd.js';

interface JobEvent {
  metadata: { name: string; namespace: string; annotations?: Record<string, string> };
}

const REPLICAS = 3;
const LEASE_NAMESPACE = 'default';
const LEASE_NAME = 'secondcron-leader';

function parseDuration(): number | undefined {
  const raw = process.env.DURATION;
  if (!raw) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`DURATION must be a number of seconds, got "${raw}"`);
  return n * 1000;
}

const say = (msg: string): void => {
  process.stdout.write(`${new Date().toISOString().slice(11, 23)}  ${msg}\n`);
};

async function main(): Promise<void> {
  const durationMs = parseDuration();
  say('starting a local control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)…');
  const cluster = await startCluster({ log: (m) => say(`  ${m}`) });
  const untrack = track({ name: 'demo cluster', dispose: () => cluster.stop(), killNow: () => {} });
  say(`control plane up in ${(cluster.startupMs / 1000).toFixed(1)} s; KUBECONFIG=${cluster.kubeconfigPath}`);

  const kubectl = async (args: string[]): Promise<void> => {
    const res = await cluster.kubectl(args);
    if (res.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${res.stderr}`);
  };
  await installCrd((args) => cluster.kubectl(args));
  say('CRD installed');

  const replicas = Array.from(
    { length: REPLICAS },
    (_, i) =>
      new OperatorProcess({
        kubeconfig: cluster.kubeconfigPath,
        env: cluster.env,
        namespaces: [],
        identity: `secondcron-${i}`,
        logLevel: 'info',
        args: ['--lease-duration', '6s', '--renew-deadline', '4s', '--retry-period', '1s', '--leader-election-namespace', LEASE_NAMESPACE],
      }),
  );
  await Promise.all(replicas.map((r) => r.start()));
  await Promise.all(replicas.map((r) => r.ready()));
  say(`${REPLICAS} operator replicas ready (pids ${replicas.map((r) => r.pid).join(', ')}); logs: ${replicas.map((r) => r.logPath).join(' ')}`);

  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  let leader = '';
  const leaderPoll = setInterval(() => {
    void cluster.kubectl(['get', 'lease', LEASE_NAME, '-n', LEASE_NAMESPACE, '-o', 'jsonpath={.spec.holderIdentity}']).then((res) => {
      const holder = res.code === 0 ? res.stdout.trim() : '';
      if (holder !== leader) {
        say(`LEADER: ${holder || '(none)'}`);
        leader = holder;
      }
    });
  }, 250);

  let watchAbort: AbortController | undefined;
  const watchJobs = async (): Promise<void> => {
    watchAbort = await new Watch(kc).watch(
      '/apis/batch/v1/jobs',
      { labelSelector: 'secondcron.io/secondcronjob' },
      (type, obj: JobEvent) => {
        if (type !== 'ADDED') return;
        const slot = Date.parse(obj.metadata.annotations?.['secondcron.io/scheduled-at'] ?? '');
        const latency = Date.now() - slot;
        say(`job ${obj.metadata.namespace}/${obj.metadata.name}  slot ${new Date(slot).toISOString().slice(11, 23)}  latency ${latency} ms  (leader ${leader})`);
      },
      (err) => {
        if (!stopping) setTimeout(() => void watchJobs(), 500);
        if (err && !stopping) say(`(job watch ended: ${String(err)}; resuming)`);
      },
    );
  };
  let stopping = false;
  await watchJobs();

  await kubectl(['apply', '-n', 'default', '-f', 'examples/']);
  say('applied examples/: heartbeat (every 5 s), berlin-report (*/10 s, Europe/Berlin), campaign-digest (a schedules list in a 2027 window: no Jobs yet) and sync (Enqueue: every 10 s, never two at once)');
  say(durationMs ? `running for ${durationMs / 1000} s…` : 'running until Ctrl-C…');

  // Show a graceful handover once: SIGTERM the leader, then bring it back as a follower.
  const handoverAt = durationMs ? Math.min(20_000, durationMs / 3) : 20_000;
  const handover = setTimeout(() => {
    const current = replicas.find((r) => r.identity === leader);
    if (!current) return;
    say(`stopping the leader ${current.identity} (SIGTERM): it releases the Lease and a follower takes over`);
    void current.stop().then(async () => {
      say(`${current.identity} exited; restarting it as a follower in 3 s`);
      await new Promise((r) => setTimeout(r, 3_000));
      await current.start();
    });
  }, handoverAt);

  const finish = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    say(`${why}: stopping the demo`);
    clearTimeout(handover);
    clearInterval(leaderPoll);
    watchAbort?.abort();
    await Promise.all(replicas.map((r) => r.dispose()));
    await cluster.stop();
    untrack();
    say('done: every process stopped, temporary files removed');
    process.exit(0);
  };
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  process.on('SIGINT', () => void finish('Ctrl-C'));
  process.on('SIGTERM', () => void finish('SIGTERM'));
  if (durationMs) setTimeout(() => void finish(`${durationMs / 1000} s elapsed`), durationMs);
}

main().catch((err: unknown) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
