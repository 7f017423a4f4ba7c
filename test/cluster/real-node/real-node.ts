// A real kubelet node in the test control plane: containerd (+ runc, the CNI bridge) runs the pods,
// kubelet registers the node, kube-proxy (nftables mode) implements Services, all as children of
// the cluster's process. Labelled and tainted (addresses.ts) so only pods meant for it land there.
//
// Start order: containerd (moved into the node's cgroup, so its shims and every container follow),
// the pause image imported, kubelet until the node is Ready, kube-proxy until it has synced. Stop
// order is the reverse; whatever is left (containers, mounts, rules) is removed by host.ts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { httpCall } from '../http-probe.js';
import { writeKubeconfig } from '../kubeconfig.js';
import { ManagedProcess } from '../managed-process.js';
import type { NodeBinaries } from '../node-binaries.js';
import { runCommand, type CommandResult } from '../run-command.js';
import { CRI_NAMESPACE, NODE_IP, NODE_NAME, REAL_NODE_LABEL } from './addresses.js';
import { cniConfList, containerdConfig, kubeletConfig, kubeProxyConfig, type NodePaths } from './configs.js';
import { enterRuntimeCgroup } from './host.js';

/** <cluster dir>/real-node.json: how other tools (`make image`) reach the node's containerd. */
export interface RealNodeInfo {
  nodeName: string;
  nodeIp: string;
  containerdSocket: string;
  /** Where a test puts <host:port>/hosts.toml for a registry the node pulls from (containerd's config_path). */
  registryHostsDir: string;
  ctr: string;
  namespace: string;
}

export interface RealNodeOptions {
  /** The node's own directory (created). */
  dir: string;
  bins: NodeBinaries;
  server: string;
  caPem: string;
  nodeToken: string;
  kubeProxyToken: string;
  /** CA of the apiserver's client certificate towards the kubelet (pki.ts). */
  kubeletClientCa: string;
  /** Admin access, to watch the node come up. */
  adminToken: string;
  log: (message: string) => void;
}

const STOP_GRACE_MS = 10_000;

export function nodePaths(dir: string, bins: NodeBinaries, kubeletClientCa: string): NodePaths {
  return {
    root: dir,
    containerdRoot: join(dir, 'containerd', 'root'),
    containerdState: join(dir, 'containerd', 'state'),
    containerdSocket: join(dir, 'containerd', 'containerd.sock'),
    registryHostsDir: join(dir, 'containerd', 'certs.d'),
    runcRoot: join(dir, 'containerd', 'runc'),
    runc: bins.bin.runc,
    cniBinDir: bins.cniDir,
    cniConfDir: join(dir, 'cni', 'net.d'),
    cniIpamDir: join(dir, 'cni', 'ipam'),
    kubeletRoot: join(dir, 'kubelet', 'root'),
    kubeletCertDir: join(dir, 'kubelet', 'pki'),
    podLogsDir: join(dir, 'pod-logs'),
    resolvConf: join(dir, 'kubelet', 'resolv.conf'),
    kubeletClientCa,
    kubeletKubeconfig: join(dir, 'kubelet', 'kubeconfig'),
    kubeProxyKubeconfig: join(dir, 'kube-proxy', 'kubeconfig'),
  };
}

export class RealNode {
  readonly info: RealNodeInfo;
  private readonly procs: ManagedProcess[] = [];
  private readonly paths: NodePaths;
  private readonly logDir: string;

  constructor(private readonly opts: RealNodeOptions) {
    this.paths = nodePaths(opts.dir, opts.bins, opts.kubeletClientCa);
    this.logDir = join(opts.dir, 'logs');
    this.info = {
      nodeName: NODE_NAME,
      nodeIp: NODE_IP,
      containerdSocket: this.paths.containerdSocket,
      registryHostsDir: this.paths.registryHostsDir,
      ctr: opts.bins.bin.ctr,
      namespace: CRI_NAMESPACE,
    };
  }

  /** ctr against the node's containerd, in the CRI namespace. */
  ctr(args: string[], timeoutMs = 120_000): Promise<CommandResult> {
    return runCommand(this.opts.bins.bin.ctr, ['--address', this.paths.containerdSocket, '-n', CRI_NAMESPACE, ...args], { timeoutMs });
  }

  async start(deadline: number): Promise<void> {
    this.writeFiles();
    const containerd = this.spawn('containerd', this.opts.bins.bin.containerd, ['--config', join(this.opts.dir, 'containerd', 'config.toml')]);
    if (containerd.pid === undefined) throw new Error(containerd.describeExit());
    enterRuntimeCgroup(containerd.pid);
    await this.waitFor('containerd', containerd, deadline, async () => (await this.ctr(['version'], 5_000)).code === 0);
    const imported = await this.ctr(['images', 'import', '--platform', 'linux/amd64', this.opts.bins.pauseArchive]);
    if (imported.code !== 0) throw new Error(`importing the pause image: ${imported.stderr}`);

    const kubelet = this.spawn('kubelet', this.opts.bins.bin.kubelet, [
      `--config=${join(this.opts.dir, 'kubelet', 'config.yaml')}`,
      `--kubeconfig=${this.paths.kubeletKubeconfig}`,
      `--root-dir=${this.paths.kubeletRoot}`,
      `--cert-dir=${this.paths.kubeletCertDir}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${NODE_IP}`,
      `--node-labels=${REAL_NODE_LABEL}=true`,
      '--v=1',
    ]);
    await this.waitFor(`node ${NODE_NAME} Ready`, kubelet, deadline, () => this.nodeReady());

    const proxy = this.spawn('kube-proxy', this.opts.bins.bin['kube-proxy'], [
      `--config=${join(this.opts.dir, 'kube-proxy', 'config.yaml')}`,
      '--v=1',
    ]);
    // /healthz answers 200 once the first full sync of the rules is done.
    await this.waitFor('kube-proxy synced', proxy, deadline, async () =>
      (await httpCall('http://127.0.0.1:10256/healthz')).status === 200);
  }

  /** Stops kube-proxy and kubelet, removes every container through containerd, stops containerd. */
  async stop(): Promise<void> {
    const byName = (name: string): ManagedProcess | undefined => this.procs.find((p) => p.name === name);
    await byName('kube-proxy')?.stop(STOP_GRACE_MS);
    await byName('kubelet')?.stop(STOP_GRACE_MS);
    const containerd = byName('containerd');
    if (containerd?.running) {
      // Best effort: host.ts kills and unmounts whatever this leaves.
      const tasks = await this.ctr(['tasks', 'ls', '-q'], 30_000);
      for (const id of tasks.stdout.split('\n').filter((l) => l.trim())) {
        await this.ctr(['tasks', 'kill', '-s', 'SIGKILL', id], 10_000);
        await this.ctr(['tasks', 'rm', '-f', id], 30_000);
      }
      const containers = await this.ctr(['containers', 'ls', '-q'], 30_000);
      const ids = containers.stdout.split('\n').filter((l) => l.trim());
      if (ids.length > 0) await this.ctr(['containers', 'rm', ...ids], 60_000);
    }
    await containerd?.stop(STOP_GRACE_MS);
  }

  killNow(): void {
    for (const p of this.procs) p.killNow();
  }

  logFiles(): string[] {
    return this.procs.map((p) => p.logPath);
  }

  private writeFiles(): void {
    const p = this.paths;
    for (const d of ['logs', 'containerd', 'containerd/certs.d', 'kubelet', 'kube-proxy', 'pod-logs', 'cni/net.d', 'cni/ipam']) {
      mkdirSync(join(this.opts.dir, d), { recursive: true, mode: 0o700 });
    }
    writeFileSync(join(this.opts.dir, 'containerd', 'config.toml'), containerdConfig(p));
    writeFileSync(join(p.cniConfDir, '10-secondcron-node.conflist'), cniConfList(p));
    writeFileSync(join(this.opts.dir, 'kubelet', 'config.yaml'), kubeletConfig(p));
    writeFileSync(p.resolvConf, 'nameserver 127.0.0.1\n');
    writeFileSync(join(this.opts.dir, 'kube-proxy', 'config.yaml'), kubeProxyConfig(p));
    const common = { server: this.opts.server, caPem: this.opts.caPem };
    writeKubeconfig(p.kubeletKubeconfig, { ...common, user: `system:node:${NODE_NAME}`, token: this.opts.nodeToken });
    writeKubeconfig(p.kubeProxyKubeconfig, { ...common, user: 'system:kube-proxy', token: this.opts.kubeProxyToken });
  }

  private spawn(name: string, command: string, args: string[]): ManagedProcess {
    const proc = new ManagedProcess({
      name,
      command,
      args,
      logPath: join(this.logDir, `${name}.log`),
      cwd: this.opts.dir,
      // containerd finds its shim on PATH; kube-proxy runs nft from it.
      env: { ...process.env, PATH: `${this.opts.bins.dir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` },
    });
    this.procs.push(proc);
    this.opts.log(`started ${name} (pid ${proc.pid ?? '?'})`);
    return proc;
  }

  private async nodeReady(): Promise<boolean> {
    const res = await httpCall(`${this.opts.server}/api/v1/nodes/${NODE_NAME}`, { ca: this.opts.caPem, token: this.opts.adminToken });
    if (res.status !== 200) return false;
    const node = JSON.parse(res.body) as { status?: { conditions?: Array<{ type: string; status: string }> } };
    return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  }

  private async waitFor(what: string, proc: ManagedProcess, deadline: number, check: () => Promise<boolean>): Promise<void> {
    let lastError = '';
    for (;;) {
      if (!proc.running) {
        await proc.exited;
        throw new Error(`real test node: ${proc.describeExit()} while waiting for ${what}.\n--- tail of ${proc.logPath} ---\n${proc.logTail()}`);
      }
      try {
        if (await check()) return;
      } catch (err) {
        lastError = err instanceof Error ? ` (last error: ${err.message})` : '';
      }
      if (Date.now() > deadline) {
        throw new Error(`real test node: timed out waiting for ${what}${lastError}.\n--- tail of ${proc.logPath} ---\n${proc.logTail(30)}`);
      }
      await sleep(250);
    }
  }
}
