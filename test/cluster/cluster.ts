// A real, local Kubernetes control plane for integration tests and the demo:
// etcd → kube-apiserver → kube-controller-manager + kube-scheduler + kwok (fake nodes whose pods
// "run" according to test/cluster/kwok-stages.yaml), and with `realNode` also a real kubelet node
// (real-node/: containerd, runc, CNI bridge, kube-proxy) for pods that select and tolerate it.
//
// Auth: node:crypto can make keys but not X.509 certificates, and we add no npm dependency and
// assume no openssl CLI. So the apiserver self-signs its serving certificate in --cert-dir (a CA
// plus a leaf for 127.0.0.1, reused on restart), and clients authenticate with bearer tokens from a
// static --token-auth-file: admin (group system:masters), the controller-manager and scheduler as
// their bootstrap-RBAC users, kwok as a master. The service-account signing key pair is generated
// here.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { BINARY_NAMES, resolveBinaries, type BinaryPaths } from './binaries.js';
import { freePorts } from './free-ports.js';
import { httpCall, isOk } from './http-probe.js';
import { writeKubeconfig } from './kubeconfig.js';
import { ManagedProcess } from './managed-process.js';
import { resolveNodeBinaries, type NodeBinaries } from './node-binaries.js';
import { track } from './process-registry.js';
import { NODE_IP, NODE_NAME } from './real-node/addresses.js';
import { acquireHost, cleanupHost, prepareHost, readHostRecord, type HostRecord } from './real-node/host.js';
import { issueKubeletClientPki, type KubeletClientPki } from './real-node/pki.js';
import { RealNode, type RealNodeInfo } from './real-node/real-node.js';
import { runCommand, type CommandResult } from './run-command.js';

export const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** Zones of the fake nodes, assigned round-robin: node 0 → a, node 1 → b, node 2 → a, … */
export const ZONES = ['a', 'b'] as const;
/** kwok manages only nodes with this annotation (value "fake"). */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
/** Annotations on a Job's pod template understood by kwok-stages.yaml. */
export const RUN_SECONDS_ANNOTATION = 'secondcron.test/run-seconds';
export const FAIL_ANNOTATION = 'secondcron.test/fail';

export interface ClusterOptions {
  /** Number of fake nodes (default 2). */
  nodes?: number;
  /** Use this directory for state, logs and kubeconfigs (created if missing). Default: a new temp dir. */
  dir?: string;
  /** Remove the directory on stop (default true). */
  removeDirOnStop?: boolean;
  /** Environment for binary lookup (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Give up starting after this long (default 90 s, 240 s with a real node). */
  startTimeoutMs?: number;
  /** Progress messages (default: none). */
  log?: (message: string) => void;
  /**
   * Add a real kubelet node (real-node/; needs root and the binaries of build-node-binaries.sh via
   * SECONDCRON_NODE_BIN_DIR). The apiserver then listens on the node's address instead of
   * 127.0.0.1, so pods reach it through the "kubernetes" Service. One per machine at a time.
   */
  realNode?: boolean;
  /**
   * Write an audit log (JSON lines, <dir>/logs/audit.log) of these users' requests at level Metadata
   * (verb, resource, user agent, times, code; no bodies), nothing of anyone else's: the bench counts
   * the operator's requests from the API server's side with it.
   */
  auditUsers?: string[];
  /**
   * Also write the audit log (<dir>/logs/audit.log) for Job creates and deletes (batch/jobs, verbs
   * create and delete, level Metadata: name, code, user, times) by these users and by any member of
   * these groups, and nothing else of theirs. Cheap enough for the shared integration cluster: the
   * failover and fault tests count each Job name's creates from it (test/integration/helpers/
   * audit-creates.ts), outside the operator.
   */
  auditJobWrites?: { users?: string[]; userGroups?: string[] };
  /**
   * GOGC for the Go processes the cluster starts (etcd, kube-apiserver, kube-controller-manager,
   * kube-scheduler, kwok); default: Go's (100). The bench trades their memory for CPU with it.
   */
  goGC?: number;
}

export interface FakeNode {
  name: string;
  zone: string;
}

export type KubectlResult = CommandResult;

export interface Cluster {
  /** State directory: etcd data, certs, kubeconfigs, logs/<component>.log. */
  readonly dir: string;
  /** Admin kubeconfig (user "admin" in group system:masters). */
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** Directory with etcd, kube-*, kubectl, kwok and helm (links to the resolved binaries). */
  readonly binDir: string;
  /** Environment for child processes: PATH with binDir first, KUBECONFIG. */
  readonly env: NodeJS.ProcessEnv;
  /** The apiserver's CA bundle (PEM) and the admin bearer token, for clients that skip kubeconfig. */
  readonly caPem: string;
  readonly adminToken: string;
  readonly nodes: readonly FakeNode[];
  /** The real node, when started with `realNode` (also written to <dir>/real-node.json). */
  readonly realNode: RealNodeInfo | undefined;
  /** The audit log when started with `auditUsers` or `auditJobWrites`. */
  readonly auditLogPath: string | undefined;
  /** Milliseconds from startCluster() to a usable cluster. */
  readonly startupMs: number;
  /** Per-phase breakdown of startupMs. */
  readonly timings: Readonly<Record<string, number>>;
  kubectl(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** Stops every process and removes the directory (unless removeDirOnStop: false). Idempotent. */
  stop(): Promise<void>;
  /** Stops only kube-apiserver (SIGTERM, then SIGKILL); the other components keep running. */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again on the same port with the same certificates and tokens. */
  startApiServer(): Promise<void>;
  /** Freezes kube-apiserver (SIGSTOP): connections stay open and nothing is answered. */
  pauseApiServer(): void;
  /** Thaws it (SIGCONT). stop() thaws it too. */
  resumeApiServer(): void;
  /**
   * Restarts kube-controller-manager (every controller) with these client-side limits, waits for its
   * /healthz; without `limits`, back to the test cluster's own (KCM_TEST_LIMITS).
   */
  restartControllerManager(limits?: ClientLimits): Promise<void>;
  /** The pid of a running control-plane process (the bench reads its CPU and memory from /proc). */
  pidOf(name: 'etcd' | 'kube-apiserver'): number | undefined;
  /** How a control-plane process ended and the tail of its log; undefined while it runs. */
  exitReport(name: 'etcd' | 'kube-apiserver'): string | undefined;
}

/** kube-controller-manager's --kube-api-qps / --kube-api-burst (and --concurrent-job-syncs). */
export interface ClientLimits {
  qps: number;
  burst: number;
  /** Job controller workers; upstream's default (5) when absent. */
  jobSyncs?: number;
}

/** Upstream kube-controller-manager's defaults. */
export const KCM_DEFAULT_LIMITS: ClientLimits = { qps: 20, burst: 30 };
/**
 * What the test cluster runs with: the upstream default makes start-up slow (each controller
 * requests its own service-account token) and throttles Job pod creation in tests.
 */
export const KCM_TEST_LIMITS: ClientLimits = { qps: 100, burst: 200 };

const STOP_GRACE_MS = 5_000;
const POLL_MS = 100;

/** test/cluster/kwok-stages.yaml, found from this module whether it runs from build/ or the source. */
function locateStagesFile(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'test', 'cluster', 'kwok-stages.yaml');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('test cluster: cannot find test/cluster/kwok-stages.yaml above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

function token(): string {
  return randomBytes(24).toString('hex');
}

interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  controllerManager: number;
  scheduler: number;
}

interface Tokens {
  admin: string;
  controllerManager: string;
  scheduler: string;
  kwok: string;
  node: string;
  kubeProxy: string;
}

/** What the real node needs besides the control plane: its binaries, the host lock, the kubelet client certificate. */
interface RealNodeParts {
  bins: NodeBinaries;
  host?: HostRecord;
  pki?: KubeletClientPki;
  node?: RealNode;
}

class StartupError extends Error {}

class LocalCluster implements Cluster {
  readonly dir: string;
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly binDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly adminToken: string;
  readonly nodes: FakeNode[];
  startupMs = 0;
  readonly timings: Record<string, number> = {};

  private readonly bins: BinaryPaths;
  private readonly ports: Ports;
  private readonly tokens: Tokens;
  private readonly removeDir: boolean;
  private readonly log: (message: string) => void;
  private readonly procs = new Map<string, ManagedProcess>();
  private caPemValue = '';
  private stopping: Promise<void> | undefined;
  private untrack: () => void = () => undefined;
  private readonly real: RealNodeParts | undefined;
  private kcmLimits: ClientLimits = KCM_TEST_LIMITS;
  readonly auditLogPath: string | undefined;

  constructor(
    dir: string,
    removeDir: boolean,
    bins: BinaryPaths,
    ports: Ports,
    nodeCount: number,
    log: (m: string) => void,
    nodeBins: NodeBinaries | undefined,
    private readonly auditUsers: string[] = [],
    private readonly goGC: number | undefined = undefined,
    private readonly auditJobWrites: { users?: string[]; userGroups?: string[] } = {},
  ) {
    this.dir = dir;
    const auditsJobWrites = (auditJobWrites.users?.length ?? 0) + (auditJobWrites.userGroups?.length ?? 0) > 0;
    this.auditLogPath = auditUsers.length || auditsJobWrites ? join(dir, 'logs', 'audit.log') : undefined;
    this.removeDir = removeDir;
    this.bins = bins;
    this.ports = ports;
    this.log = log;
    this.real = nodeBins ? { bins: nodeBins } : undefined;
    this.tokens = {
      admin: token(), controllerManager: token(), scheduler: token(), kwok: token(), node: token(), kubeProxy: token(),
    };
    this.adminToken = this.tokens.admin;
    this.kubeconfigPath = join(dir, 'kubeconfig');
    this.server = `https://${this.real ? NODE_IP : '127.0.0.1'}:${ports.apiserver}`;
    this.binDir = join(dir, 'bin');
    this.env = {
      ...process.env,
      PATH: `${this.binDir}:${process.env.PATH ?? ''}`,
      KUBECONFIG: this.kubeconfigPath,
      // kubectl's discovery cache, with the cluster instead of in ~/.kube/cache.
      KUBECACHEDIR: join(dir, 'kube-cache'),
    };
    this.nodes = Array.from({ length: nodeCount }, (_, i) => ({
      name: `kwok-node-${i}`,
      zone: ZONES[i % ZONES.length] as string,
    }));
  }

  get caPem(): string {
    return this.caPemValue;
  }

  get realNode(): RealNodeInfo | undefined {
    return this.real?.node?.info;
  }

  private path(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  // ---- startup -------------------------------------------------------------------------------

  async start(timeoutMs: number): Promise<void> {
    const t0 = performance.now();
    const deadline = Date.now() + timeoutMs;
    let phaseStart = t0;
    const phase = (name: string): void => {
      const now = performance.now();
      this.timings[name] = Math.round(now - phaseStart);
      phaseStart = now;
    };

    this.untrack = track({
      name: `test cluster ${this.dir}`,
      dispose: () => this.stop(),
      killNow: () => this.killNow(),
    });

    if (this.real) {
      // The lock first: nothing of another real-node cluster may be touched.
      this.real.host = await acquireHost(this.dir, this.path('node'), this.real.bins.dir);
      await prepareHost();
      mkdirSync(this.path('node'), { recursive: true, mode: 0o700 });
    }
    this.prepareFiles();
    if (this.real) this.real.pki = await issueKubeletClientPki(this.path('pki'));
    phase('files');

    this.startEtcd();
    await this.waitFor('etcd /health', ['etcd'], deadline, () =>
      isOk(`http://127.0.0.1:${this.ports.etcdClient}/health`));
    phase('etcd');

    this.spawnApiServer();
    await this.waitForApiServer(deadline);
    phase('kube-apiserver');

    this.writeComponentKubeconfigs();
    this.startControllerManager();
    this.startScheduler();
    this.startKwok();
    await this.createNodes(deadline);
    await Promise.all([
      this.waitFor('kube-controller-manager /healthz', ['kube-controller-manager'], deadline, () =>
        isOk(`https://127.0.0.1:${this.ports.controllerManager}/healthz`)),
      this.waitFor('kube-scheduler /healthz', ['kube-scheduler'], deadline, () =>
        isOk(`https://127.0.0.1:${this.ports.scheduler}/healthz`)),
      this.waitFor('fake nodes Ready', ['kwok'], deadline, () => this.nodesReady()),
      // The ServiceAccount controller has run: new namespaces get their "default" account, which
      // pod admission needs.
      this.waitFor('ServiceAccount default/default', ['kube-controller-manager'], deadline, async () =>
        (await this.api('GET', '/api/v1/namespaces/default/serviceaccounts/default')).status === 200),
    ]);
    phase('components');
    if (this.real) {
      await this.startRealNode(this.real, deadline);
      phase('real node');
    }
    this.startupMs = Math.round(performance.now() - t0);
  }

  private async startRealNode(real: RealNodeParts, deadline: number): Promise<void> {
    if (!real.pki) throw new Error('test cluster: the kubelet client certificate was not issued');
    real.node = new RealNode({
      dir: this.path('node'),
      bins: real.bins,
      server: this.server,
      caPem: this.caPemValue,
      nodeToken: this.tokens.node,
      kubeProxyToken: this.tokens.kubeProxy,
      kubeletClientCa: real.pki.caCert,
      adminToken: this.tokens.admin,
      log: this.log,
    });
    await real.node.start(deadline);
    writeFileSync(this.path('real-node.json'), `${JSON.stringify(real.node.info, null, 2)}\n`);
  }

  private prepareFiles(): void {
    for (const sub of ['logs', 'bin', 'etcd-data', 'pki', 'apiserver-certs', 'kwok']) {
      // 0700: etcd warns about a data dir others can read.
      mkdirSync(this.path(sub), { recursive: true, mode: 0o700 });
    }
    for (const name of BINARY_NAMES) {
      const link = this.path('bin', name);
      rmSync(link, { force: true });
      symlinkSync(this.bins[name], link);
    }
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    writeFileSync(this.path('pki', 'sa.key'), privateKey, { mode: 0o600 });
    writeFileSync(this.path('pki', 'sa.pub'), publicKey);
    // token,user,uid,"groups"
    writeFileSync(
      this.path('pki', 'tokens.csv'),
      [
        `${this.tokens.admin},admin,admin,"system:masters"`,
        `${this.tokens.controllerManager},system:kube-controller-manager,system:kube-controller-manager`,
        `${this.tokens.scheduler},system:kube-scheduler,system:kube-scheduler`,
        `${this.tokens.kwok},kwok,kwok,"system:masters"`,
        ...(this.real
          ? [
            `${this.tokens.node},system:node:${NODE_NAME},system:node:${NODE_NAME},"system:nodes"`,
            `${this.tokens.kubeProxy},system:kube-proxy,system:kube-proxy`,
          ]
          : []),
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    if (this.auditLogPath) {
      // JSON is YAML. One event per request and stage (watches: ResponseStarted, then ResponseComplete).
      // Within one rule users and userGroups must both match: one rule each.
      const jobWrites = { verbs: ['create', 'delete'], resources: [{ group: 'batch', resources: ['jobs'] }] };
      const policy = {
        apiVersion: 'audit.k8s.io/v1',
        kind: 'Policy',
        omitStages: ['RequestReceived'],
        rules: [
          ...(this.auditUsers.length ? [{ level: 'Metadata', users: this.auditUsers }] : []),
          ...(this.auditJobWrites.users?.length ? [{ level: 'Metadata', users: this.auditJobWrites.users, ...jobWrites }] : []),
          ...(this.auditJobWrites.userGroups?.length ? [{ level: 'Metadata', userGroups: this.auditJobWrites.userGroups, ...jobWrites }] : []),
          { level: 'None' },
        ],
      };
      writeFileSync(this.path('pki', 'audit-policy.yaml'), JSON.stringify(policy));
    }
  }

  private spawn(name: string, command: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): ManagedProcess {
    const proc = new ManagedProcess({
      name,
      command,
      args,
      logPath: this.path('logs', `${name}.log`),
      cwd: this.dir,
      env: { ...process.env, ...(this.goGC === undefined ? {} : { GOGC: String(this.goGC) }), ...extraEnv },
    });
    this.procs.set(name, proc);
    this.log(`started ${name} (pid ${proc.pid ?? '?'})`);
    return proc;
  }

  private startEtcd(): void {
    const client = `http://127.0.0.1:${this.ports.etcdClient}`;
    const peer = `http://127.0.0.1:${this.ports.etcdPeer}`;
    this.spawn('etcd', this.bins.etcd, [
      '--name=secondcron-test',
      `--data-dir=${this.path('etcd-data')}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=secondcron-test=${peer}`,
      '--initial-cluster-state=new',
      // Test data is thrown away: skipping fsync makes etcd fast on shared disks.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
  }

  private apiServerArgs(): string[] {
    const address = this.real ? NODE_IP : '127.0.0.1';
    return [
      `--etcd-servers=http://127.0.0.1:${this.ports.etcdClient}`,
      `--bind-address=${address}`,
      `--advertise-address=${address}`,
      `--secure-port=${this.ports.apiserver}`,
      // No --tls-cert-file: the apiserver writes a self-signed CA + serving cert here on first
      // start and reuses them after a restart.
      `--cert-dir=${this.path('apiserver-certs')}`,
      `--token-auth-file=${this.path('pki', 'tokens.csv')}`,
      '--authorization-mode=Node,RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${this.path('pki', 'sa.pub')}`,
      `--service-account-signing-key-file=${this.path('pki', 'sa.key')}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      '--allow-privileged=true',
      ...(this.real?.pki
        ? [
          // The "kubernetes" Service points at NODE_IP: pods on the real node use it.
          `--kubelet-client-certificate=${this.real.pki.clientCert}`,
          `--kubelet-client-key=${this.real.pki.clientKey}`,
          // Else logs/exec resolve the node's name through the host's resolver (off the machine).
          '--kubelet-preferred-address-types=InternalIP',
        ]
        : [
          // The "kubernetes" Endpoints may not hold a loopback address: without this the apiserver
          // logs a failed sync every 10 s. Nothing runs in-cluster here to need that Service.
          '--endpoint-reconciler-type=none',
        ]),
      // On SIGTERM the HTTP server otherwise waits up to --request-timeout (60 s) for the clients'
      // open watches; with this it answers 429 + Retry-After while draining, then stops in ~2 s.
      '--shutdown-send-retry-after=true',
      '--profiling=false',
      ...(this.auditLogPath
        ? [`--audit-policy-file=${this.path('pki', 'audit-policy.yaml')}`, `--audit-log-path=${this.auditLogPath}`, '--audit-log-format=json', '--audit-log-maxsize=0']
        : []),
    ];
  }

  private spawnApiServer(): void {
    this.spawn('kube-apiserver', this.bins['kube-apiserver'], this.apiServerArgs());
  }

  private async waitForApiServer(deadline: number): Promise<void> {
    const certPath = this.path('apiserver-certs', 'apiserver.crt');
    // The file holds the serving cert followed by its self-signed CA: a valid trust bundle. It is
    // written non-atomically, so wait until both certificates are there.
    await this.waitFor('kube-apiserver serving certificate', ['kube-apiserver'], deadline, async () => {
      if (!existsSync(certPath)) return false;
      this.caPemValue = readFileSync(certPath, 'utf8');
      return (this.caPemValue.match(/-----END CERTIFICATE-----/g) ?? []).length >= 2;
    });
    await this.waitFor('kube-apiserver /readyz', ['kube-apiserver', 'etcd'], deadline, () =>
      isOk(`${this.server}/readyz`, { ca: this.caPemValue, token: this.tokens.admin }));
  }

  private writeComponentKubeconfigs(): void {
    const common = { server: this.server, caPem: this.caPemValue };
    writeKubeconfig(this.kubeconfigPath, { ...common, user: 'admin', token: this.tokens.admin });
    writeKubeconfig(this.path('pki', 'controller-manager.kubeconfig'), {
      ...common, user: 'system:kube-controller-manager', token: this.tokens.controllerManager,
    });
    writeKubeconfig(this.path('pki', 'scheduler.kubeconfig'), {
      ...common, user: 'system:kube-scheduler', token: this.tokens.scheduler,
    });
    writeKubeconfig(this.path('pki', 'kwok.kubeconfig'), { ...common, user: 'kwok', token: this.tokens.kwok });
    writeFileSync(this.path('pki', 'ca.crt'), this.caPemValue);
  }

  private startControllerManager(): void {
    const kubeconfig = this.path('pki', 'controller-manager.kubeconfig');
    this.spawn('kube-controller-manager', this.bins['kube-controller-manager'], [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      // The apiserver has no client CA, so there is no extension-apiserver-authentication
      // ConfigMap to look up (looking logs an error forever); tokens are still checked by TokenReview.
      '--authentication-skip-lookup=true',
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${this.ports.controllerManager}`,
      `--kube-api-qps=${this.kcmLimits.qps}`,
      `--kube-api-burst=${this.kcmLimits.burst}`,
      ...(this.kcmLimits.jobSyncs === undefined ? [] : [`--concurrent-job-syncs=${this.kcmLimits.jobSyncs}`]),
      // One instance: no need to wait for a lease.
      '--leader-elect=false',
      // All default controllers: job, cronjob, garbagecollector, namespace, serviceaccount,
      // serviceaccount-token, nodelifecycle, …
      '--controllers=*',
      `--service-account-private-key-file=${this.path('pki', 'sa.key')}`,
      `--root-ca-file=${this.path('pki', 'ca.crt')}`,
      '--use-service-account-credentials=true',
      '--profiling=false',
    ]);
  }

  private startScheduler(): void {
    const kubeconfig = this.path('pki', 'scheduler.kubeconfig');
    this.spawn('kube-scheduler', this.bins['kube-scheduler'], [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      '--authentication-skip-lookup=true',
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${this.ports.scheduler}`,
      '--leader-elect=false',
      '--profiling=false',
    ]);
  }

  private startKwok(): void {
    this.spawn('kwok', this.bins.kwok, [
      `--kubeconfig=${this.path('pki', 'kwok.kubeconfig')}`,
      `--config=${locateStagesFile()}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
      // Pod IPs only appear in status; nothing is routed. Outside the service range above.
      '--cidr=10.244.0.0/16',
      '--node-ip=10.243.0.1',
    ], {
      // kwok would otherwise read ~/.kwok/kwok.yaml first.
      KWOK_WORKDIR: this.path('kwok'),
    });
  }

  private async createNodes(deadline: number): Promise<void> {
    for (const node of this.nodes) {
      const body = JSON.stringify({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name: node.name,
          annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
          labels: {
            'kubernetes.io/arch': 'amd64',
            'kubernetes.io/os': 'linux',
            'kubernetes.io/hostname': node.name,
            'node-role.kubernetes.io/agent': '',
            type: 'kwok',
            [ZONE_LABEL]: node.zone,
          },
        },
        spec: {},
      });
      await this.waitFor(`create node ${node.name}`, ['kube-apiserver'], deadline, async () => {
        const res = await this.api('POST', '/api/v1/nodes', body);
        if (res.status === 201 || res.status === 409) return true;
        throw new Error(`creating node ${node.name}: HTTP ${res.status} ${res.body}`);
      });
    }
  }

  private async nodesReady(): Promise<boolean> {
    const res = await this.api('GET', '/api/v1/nodes');
    if (res.status !== 200) return false;
    const list = JSON.parse(res.body) as {
      items: Array<{ metadata: { name: string }; status?: { conditions?: Array<{ type: string; status: string }> } }>;
    };
    const ready = new Set(
      list.items
        .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        .map((n) => n.metadata.name),
    );
    return this.nodes.every((n) => ready.has(n.name));
  }

  private api(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
    return httpCall(`${this.server}${path}`, { method, body, ca: this.caPemValue, token: this.tokens.admin });
  }

  /**
   * Polls `check` until it returns true. Fails early when one of `watched` exits, and on the
   * deadline, with the tail of the relevant log either way.
   */
  private async waitFor(what: string, watched: string[], deadline: number, check: () => Promise<boolean>): Promise<void> {
    let lastError: unknown;
    for (;;) {
      for (const name of watched) {
        const proc = this.procs.get(name);
        if (proc && !proc.running) {
          await proc.exited;
          throw new StartupError(`test cluster: ${proc.describeExit()} while waiting for ${what}.\n` +
            `--- tail of ${proc.logPath} ---\n${proc.logTail()}`);
        }
      }
      try {
        if (await check()) return;
        lastError = undefined;
      } catch (err) {
        lastError = err;
      }
      if (Date.now() > deadline) {
        const logs = watched
          .map((name) => this.procs.get(name))
          .filter((p): p is ManagedProcess => p !== undefined)
          .map((p) => `--- tail of ${p.logPath} ---\n${p.logTail(25)}`)
          .join('\n');
        const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
        throw new StartupError(`test cluster: timed out waiting for ${what}${cause}.\n${logs}`);
      }
      await sleep(POLL_MS);
    }
  }

  // ---- running cluster -----------------------------------------------------------------------

  kubectl(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
    return runCommand(this.bins.kubectl, [`--kubeconfig=${this.kubeconfigPath}`, ...args], {
      env: this.env,
      input: opts.input,
      timeoutMs: opts.timeoutMs,
    });
  }

  async stopApiServer(): Promise<void> {
    const proc = this.procs.get('kube-apiserver');
    if (proc) await proc.stop(STOP_GRACE_MS);
  }

  pauseApiServer(): void {
    this.procs.get('kube-apiserver')?.pause();
  }

  pidOf(name: 'etcd' | 'kube-apiserver'): number | undefined {
    const proc = this.procs.get(name);
    return proc?.running ? proc.pid : undefined;
  }

  resumeApiServer(): void {
    this.procs.get('kube-apiserver')?.resume();
  }

  exitReport(name: 'etcd' | 'kube-apiserver'): string | undefined {
    const proc = this.procs.get(name);
    if (!proc || proc.running) return undefined;
    return `${proc.describeExit()}\n--- tail of ${proc.logPath} ---\n${proc.logTail()}`;
  }

  async startApiServer(): Promise<void> {
    if (this.stopping) throw new Error('test cluster: already stopped');
    if (this.procs.get('kube-apiserver')?.running) throw new Error('test cluster: kube-apiserver is already running');
    this.spawnApiServer();
    try {
      await this.waitForApiServer(Date.now() + 60_000);
    } catch (err) {
      await this.stopApiServer();
      throw err;
    }
  }

  async restartControllerManager(limits: ClientLimits = KCM_TEST_LIMITS): Promise<void> {
    if (this.stopping) throw new Error('test cluster: already stopped');
    await this.procs.get('kube-controller-manager')?.stop(STOP_GRACE_MS);
    this.kcmLimits = limits;
    this.startControllerManager();
    await this.waitFor('kube-controller-manager /healthz', ['kube-controller-manager'], Date.now() + 60_000, () =>
      isOk(`https://127.0.0.1:${this.ports.controllerManager}/healthz`));
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    const stopAll = (names: string[]): Promise<unknown> =>
      Promise.all(names.map((n) => this.procs.get(n)?.stop(STOP_GRACE_MS)));
    this.resumeApiServer(); // a test that failed while it was frozen
    let cleanupError: unknown;
    try {
      // The node while its apiserver is still there, then clients so they do not log connection
      // errors for the apiserver going away; etcd last.
      await this.real?.node?.stop();
      await stopAll(['kwok', 'kube-scheduler', 'kube-controller-manager']);
      await stopAll(['kube-apiserver']);
      await stopAll(['etcd']);
    } finally {
      // Whatever happened above, the host is put back (processes, mounts, links, rules, cgroups).
      if (this.real?.host) {
        try {
          await cleanupHost(this.real.host);
        } catch (err) {
          cleanupError = err;
        }
      }
    }
    if (this.removeDir) rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
    this.untrack();
    if (cleanupError) throw cleanupError;
  }

  private killNow(): void {
    // The host-level leftovers of a real node (no async work is possible here) are removed by the
    // next start or `make cluster-down`, from the host lock's record.
    this.real?.node?.killNow();
    for (const proc of this.procs.values()) proc.killNow();
    if (this.removeDir) {
      try {
        rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
      } catch {
        // Exiting anyway; a leftover temp dir is better than a crash in an exit handler.
      }
    }
  }
}

const TEMP_PREFIX = 'secondcron-cluster-';
const OWNER_FILE = 'owner.pid';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes temp dirs of clusters whose owner process died without cleaning up (SIGKILL, OOM): its
 * control-plane processes died with it (parent-death signal) but the directory stays.
 */
function sweepAbandonedTempDirs(): void {
  let entries: string[];
  try {
    entries = readdirSync(tmpdir()).filter((e) => e.startsWith(TEMP_PREFIX));
  } catch {
    return;
  }
  // A dead real node's directory holds mounts: only cleanupHost() (on the next real-node start or
  // `make cluster-down`) may remove it.
  const realNodeDir = readHostRecord()?.clusterDir;
  for (const entry of entries) {
    const dir = join(tmpdir(), entry);
    if (dir === realNodeDir) continue;
    try {
      const owner = Number(readFileSync(join(dir, OWNER_FILE), 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && !isAlive(owner)) rmSync(dir, { recursive: true, force: true });
    } catch {
      // No owner file (still being created, or not ours): leave it.
    }
  }
}

/** Starts a control plane and returns once pods can be created, scheduled and run on fake nodes. */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const bins = resolveBinaries(opts.env ?? process.env);
  const nodeBins = opts.realNode ? resolveNodeBinaries(opts.env ?? process.env) : undefined;
  let dir: string;
  let removeDir: boolean;
  if (opts.dir) {
    dir = resolve(opts.dir);
    mkdirSync(dir, { recursive: true });
    removeDir = opts.removeDirOnStop ?? true;
  } else {
    sweepAbandonedTempDirs();
    dir = mkdtempSync(join(tmpdir(), TEMP_PREFIX));
    writeFileSync(join(dir, OWNER_FILE), `${process.pid}\n`);
    removeDir = opts.removeDirOnStop ?? true;
  }
  const [etcdClient, etcdPeer, apiserver, controllerManager, scheduler] = await freePorts(5) as [number, number, number, number, number];
  const cluster = new LocalCluster(
    dir,
    removeDir,
    bins,
    { etcdClient, etcdPeer, apiserver, controllerManager, scheduler },
    opts.nodes ?? 2,
    opts.log ?? (() => undefined),
    nodeBins,
    opts.auditUsers,
    opts.goGC,
    opts.auditJobWrites,
  );
  try {
    // A real node adds containerd, the kubelet's registration and kube-proxy's first sync.
    await cluster.start(opts.startTimeoutMs ?? (opts.realNode ? 240_000 : 90_000));
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
