// What the real test node changes on the host outside its own directory, and how it is undone.
//
// Set up: the node IP on `lo`, an nftables table that keeps pod and Service traffic on the machine,
// kubelet's cgroup root in every hierarchy. Made by the components themselves: the CNI bridge and
// the pods' veths and network namespaces, kube-proxy's nftables tables, kubelet's KUBE-* iptables
// chains (when an iptables binary exists), ip_forward=1 (the bridge plugin), and files in places
// that cannot be moved: /var/lib/kubelet/device-plugins, /var/log/containers, /var/lib/cni/results,
// /run/containerd/s (shim sockets).
//
// The host is locked while a real node exists (its addresses are fixed): a directory under /run
// with a record of the host's state before. cleanupHost() works from that record alone, so
// `make cluster-down` or the next start can clean up after an owner that was SIGKILLed.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { runCommand } from '../run-command.js';
import {
  BRIDGE, CGROUP_ROOT, CNI_NETWORK, NFT_TABLE, NODE_IP, POD_SUBNET, RUNTIME_CGROUP, SERVICE_CIDR,
} from './addresses.js';

export const HOST_LOCK_DIR = '/run/secondcron-real-node';
const RECORD = join(HOST_LOCK_DIR, 'host.json');
const CGROUP_MOUNT = '/sys/fs/cgroup';
const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';
/** Host-wide directories the kubelet, containerd and libcni write to whatever their config says. */
const HOST_WIDE_DIRS = ['/var/lib/kubelet', '/run/containerd', '/var/log/containers', '/var/lib/cni'] as const;

export interface HostRecord {
  ownerPid: number;
  clusterDir: string;
  /** The node's own directory: every mount below it is the node's. */
  nodeDir: string;
  /** Where the node's binaries are: a process running one of them is the node's. */
  nodeBinDir: string;
  ipForward: string;
  /** "family name" of each nftables table that existed before. */
  nftTables: string[];
  /** Which of HOST_WIDE_DIRS existed before. */
  preexisting: Record<string, boolean>;
}

export class RealNodeHostBusyError extends Error {}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err instanceof Error && 'code' in err && err.code === 'EPERM';
  }
}

async function run(command: string, args: string[], input?: string): Promise<string> {
  const res = await runCommand(command, args, { input, timeoutMs: 60_000 });
  if (res.code !== 0) throw new Error(`${command} ${args.join(' ')} failed (${res.code}): ${res.stderr.trim()}`);
  return res.stdout;
}

export function readHostRecord(): HostRecord | undefined {
  try {
    return JSON.parse(readFileSync(RECORD, 'utf8')) as HostRecord;
  } catch {
    return undefined;
  }
}

// ---- nftables ------------------------------------------------------------------------------------

interface NftItem {
  table?: { family: string; name: string };
  chain?: { family: string; table: string; name: string };
  rule?: { family: string; table: string; chain: string; handle: number; expr?: unknown[] };
}

async function nftItems(args: string[]): Promise<NftItem[]> {
  const out = await run('nft', ['-j', ...args]);
  return (JSON.parse(out) as { nftables: NftItem[] }).nftables;
}

async function nftTables(): Promise<string[]> {
  return (await nftItems(['list', 'tables'])).flatMap((i) => (i.table ? [`${i.table.family} ${i.table.name}`] : []));
}

const isKubeChain = (name: string): boolean => name.startsWith('KUBE-');

function jumpsToKubeChain(expr: unknown[] | undefined): boolean {
  return JSON.stringify(expr ?? []).match(/"(jump|goto)":\{"target":"KUBE-/) !== null;
}

/**
 * Removes kube-proxy's tables, portmap's, our own, and the kubelet's KUBE-* chains in the
 * iptables-nft tables (with the rules that jump to them); a table that did not exist before and
 * is left without rules goes too. Rules and chains of others stay.
 */
async function cleanNftables(before: string[]): Promise<void> {
  const existed = new Set(before);
  for (const table of await nftTables()) {
    const [family, name] = table.split(' ') as [string, string];
    const created = !existed.has(table);
    if (name === NFT_TABLE || (created && (name === 'kube-proxy' || name.startsWith('cni_')))) {
      await run('nft', ['delete', 'table', family, name]);
      continue;
    }
    const items = await nftItems(['list', 'table', family, name]);
    for (const i of items) {
      if (i.rule && !isKubeChain(i.rule.chain) && jumpsToKubeChain(i.rule.expr)) {
        await run('nft', ['delete', 'rule', family, name, i.rule.chain, 'handle', String(i.rule.handle)]);
      }
    }
    const kubeChains = items.flatMap((i) => (i.chain && isKubeChain(i.chain.name) ? [i.chain.name] : []));
    for (const chain of kubeChains) await run('nft', ['flush', 'chain', family, name, chain]);
    for (const chain of kubeChains) await run('nft', ['delete', 'chain', family, name, chain]);
    if (created && !(await nftItems(['list', 'table', family, name])).some((i) => i.rule)) {
      await run('nft', ['delete', 'table', family, name]);
    }
  }
}

/** Nothing from the pods' subnet leaves except onto their bridge; no un-translated Service address is routed at all. */
function guardRules(): string {
  return `table inet ${NFT_TABLE} {
  chain forward {
    type filter hook forward priority filter; policy accept;
    ip saddr ${POD_SUBNET} oifname != "${BRIDGE}" drop
    ip daddr ${SERVICE_CIDR} drop
  }
  chain output {
    type filter hook output priority filter; policy accept;
    ip daddr ${SERVICE_CIDR} drop
  }
}
`;
}

// ---- cgroups ---------------------------------------------------------------------------------------

/** Every mounted hierarchy (v1 controllers, the named systemd one, the v2 "unified" mount), once each. */
function cgroupHierarchies(): string[] {
  const seen = new Set<string>();
  for (const entry of readdirSync(CGROUP_MOUNT)) {
    const path = join(CGROUP_MOUNT, entry);
    if (!existsSync(join(path, 'cgroup.procs'))) continue;
    seen.add(realpathSync(path));
  }
  return [...seen];
}

function createCgroup(hierarchy: string, path: string): void {
  const dir = join(hierarchy, path);
  mkdirSync(dir, { recursive: true });
  // A new v1 cpuset cgroup starts with no CPUs and no memory nodes: nothing could run in it.
  const parent = join(dir, '..');
  for (const file of ['cpuset.cpus', 'cpuset.mems']) {
    if (existsSync(join(dir, file)) && readFileSync(join(dir, file), 'utf8').trim() === '') {
      writeFileSync(join(dir, file), readFileSync(join(parent, file), 'utf8'));
    }
  }
}

/**
 * Moves a process (containerd: its shims follow) into RUNTIME_CGROUP, so cleanupHost() finds them
 * all. Not in the memory hierarchy: the process stays accounted to whoever started the cluster.
 */
export function enterRuntimeCgroup(pid: number): void {
  for (const h of cgroupHierarchies()) {
    if (h === join(CGROUP_MOUNT, 'memory')) continue;
    writeFileSync(join(h, RUNTIME_CGROUP, 'cgroup.procs'), `${pid}\n`);
  }
}

function cgroupPids(): number[] {
  const pids = new Set<number>();
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) {
      if (line.trim()) pids.add(Number(line));
    }
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
  };
  for (const h of cgroupHierarchies()) walk(join(h, CGROUP_ROOT));
  return [...pids];
}

function removeCgroupTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeCgroupTree(join(dir, e.name));
  rmdirSync(dir);
}

// ---- processes and mounts ------------------------------------------------------------------------

function pidsRunningFrom(binDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/exe`).startsWith(`${binDir}/`)) pids.push(Number(entry));
    } catch {
      // Gone, or a kernel thread.
    }
  }
  return pids;
}

/** SIGKILLs every process in the node's cgroups or running one of its binaries, until none is left. */
async function killNodeProcesses(record: HostRecord): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const pids = [...new Set([...cgroupPids(), ...pidsRunningFrom(record.nodeBinDir)])].filter((p) => p !== process.pid);
    if (pids.length === 0) return;
    if (Date.now() > deadline) throw new Error(`processes of the real node survive SIGKILL: ${pids.join(', ')}`);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await sleep(100);
  }
}

function decodeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

export function mountsUnder(prefixes: string[]): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => decodeMountPath(l.split(' ')[4] as string))
    .filter((mp) => prefixes.some((p) => mp === p || mp.startsWith(`${p}/`)));
}

async function unmountAll(prefixes: string[]): Promise<void> {
  for (let round = 0; round < 10; round++) {
    // Deepest first; the same path can be stacked several times.
    const mounts = mountsUnder(prefixes).sort((a, b) => b.length - a.length);
    if (mounts.length === 0) return;
    for (const mp of mounts) {
      const res = await runCommand('umount', [mp], { timeoutMs: 30_000 });
      if (res.code !== 0) await runCommand('umount', ['-l', mp], { timeoutMs: 30_000 });
    }
  }
  const left = mountsUnder(prefixes);
  if (left.length > 0) throw new Error(`mounts of the real node survive umount: ${left.join(', ')}`);
}

// ---- files -------------------------------------------------------------------------------------

function removeHostWideFiles(record: HostRecord): void {
  for (const dir of ['/var/lib/kubelet', '/run/containerd']) {
    if (!record.preexisting[dir]) rmSync(dir, { recursive: true, force: true });
  }
  // Shared with anything else on the machine (buildah uses /var/lib/cni too): only our entries,
  // then the directories if they are empty and were not there before.
  const logs = '/var/log/containers';
  if (existsSync(logs)) {
    for (const e of readdirSync(logs)) {
      const path = join(logs, e);
      try {
        if (lstatSync(path).isSymbolicLink() && readlinkSync(path).startsWith(`${record.nodeDir}/`)) rmSync(path);
      } catch {
        // Gone meanwhile.
      }
    }
  }
  const results = '/var/lib/cni/results';
  if (existsSync(results)) {
    // containerd's CRI runs the pods' loopback as a network of its own, "cni-loopback".
    for (const e of readdirSync(results)) {
      if (e.startsWith(`${CNI_NETWORK}-`) || e.startsWith('cni-loopback-')) rmSync(join(results, e), { force: true });
    }
  }
  for (const dir of [logs, results, '/var/lib/cni']) {
    if (record.preexisting[dir] || !existsSync(dir)) continue;
    try {
      rmdirSync(dir);
    } catch {
      // Not empty: someone else's files.
    }
  }
}

// ---- lock, set-up, clean-up ---------------------------------------------------------------------------

function describeOwner(record: HostRecord | undefined): string {
  return record ? `pid ${record.ownerPid}, cluster directory ${record.clusterDir}` : 'owner unknown (still starting?)';
}

/**
 * Takes the host for a real node owned by this process, cleaning up after a dead owner first.
 * Throws RealNodeHostBusyError while another live process owns it.
 */
export async function acquireHost(clusterDir: string, nodeDir: string, nodeBinDir: string): Promise<HostRecord> {
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(HOST_LOCK_DIR, { mode: 0o700 });
      break;
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST') || attempt > 0) throw err;
    }
    const owner = readHostRecord();
    if (owner === undefined || isAlive(owner.ownerPid)) {
      throw new RealNodeHostBusyError(
        `a real-node cluster already exists on this machine (${describeOwner(owner)}); only one can, its addresses ` +
          `are fixed (${NODE_IP}, ${POD_SUBNET}). Stop it first (\`make cluster-down\`, or let its test run finish).`,
      );
    }
    await cleanupHost(owner);
  }
  try {
    const addrs = await run('ip', ['-o', 'addr', 'show']);
    if (addrs.includes(` ${NODE_IP}/`)) throw new Error(`${NODE_IP} is already assigned on this machine:\n${addrs}`);
    const record: HostRecord = {
      ownerPid: process.pid,
      clusterDir,
      nodeDir,
      nodeBinDir,
      ipForward: readFileSync(IP_FORWARD, 'utf8').trim(),
      nftTables: await nftTables(),
      preexisting: Object.fromEntries(
        [...HOST_WIDE_DIRS, '/var/lib/cni/results'].map((d) => [d, existsSync(d)]),
      ),
    };
    writeFileSync(`${RECORD}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
    renameSync(`${RECORD}.tmp`, RECORD);
    return record;
  } catch (err) {
    rmSync(HOST_LOCK_DIR, { recursive: true, force: true });
    throw err;
  }
}

/** The node's host-level set-up; everything it does is undone by cleanupHost(). */
export async function prepareHost(): Promise<void> {
  await run('ip', ['addr', 'add', `${NODE_IP}/32`, 'dev', 'lo']);
  await run('nft', ['-f', '-'], guardRules());
  for (const h of cgroupHierarchies()) {
    createCgroup(h, CGROUP_ROOT);
    createCgroup(h, RUNTIME_CGROUP);
  }
}

/**
 * What of the node is still on the host, one line each (empty once cleanupHost() succeeded). Checks
 * only what is the node's: other programs may change the same kinds of state meanwhile.
 */
export async function hostLeftovers(record: HostRecord): Promise<string[]> {
  const found: string[] = [];
  const pids = [...new Set([...cgroupPids(), ...pidsRunningFrom(record.nodeBinDir)])];
  if (pids.length > 0) found.push(`processes ${pids.join(', ')}`);
  const hostDirs = HOST_WIDE_DIRS.filter((d) => !record.preexisting[d]);
  for (const mp of mountsUnder([record.nodeDir, ...hostDirs])) found.push(`mount ${mp}`);
  if ((await runCommand('ip', ['link', 'show', BRIDGE])).code === 0) found.push(`link ${BRIDGE}`);
  if ((await run('ip', ['-o', 'addr', 'show'])).includes(` ${NODE_IP}/`)) found.push(`address ${NODE_IP}`);
  const existed = new Set(record.nftTables);
  for (const table of await nftTables()) {
    const [family, name] = table.split(' ') as [string, string];
    if (name === NFT_TABLE || (!existed.has(table) && (name === 'kube-proxy' || name.startsWith('cni_')))) found.push(`nftables table ${table}`);
    for (const i of await nftItems(['list', 'table', family, name])) {
      if (i.chain && isKubeChain(i.chain.name)) found.push(`nftables chain ${table} ${i.chain.name}`);
    }
  }
  if (readFileSync(IP_FORWARD, 'utf8').trim() !== record.ipForward) found.push(`ip_forward ${readFileSync(IP_FORWARD, 'utf8').trim()}`);
  for (const h of cgroupHierarchies()) if (existsSync(join(h, CGROUP_ROOT))) found.push(`cgroup ${join(h, CGROUP_ROOT)}`);
  for (const d of hostDirs) if (existsSync(d)) found.push(`directory ${d}`);
  if (existsSync(record.nodeDir)) found.push(`directory ${record.nodeDir}`);
  if (existsSync(HOST_LOCK_DIR)) found.push(`lock ${HOST_LOCK_DIR}`);
  return found;
}

/**
 * Undoes everything the node did on the host, from the record alone; idempotent, and every step
 * runs even when an earlier one failed (the failures are reported together). Releases the lock.
 */
export async function cleanupHost(record: HostRecord): Promise<void> {
  const failures: string[] = [];
  const step = async (what: string, fn: () => Promise<void> | void): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      failures.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const hostDirs = HOST_WIDE_DIRS.filter((d) => !record.preexisting[d]);
  await step('processes', () => killNodeProcesses(record));
  await step('mounts', () => unmountAll([record.nodeDir, ...hostDirs]));
  await step('bridge', async () => {
    if ((await runCommand('ip', ['link', 'show', BRIDGE])).code === 0) await run('ip', ['link', 'del', BRIDGE]);
  });
  await step('node address', async () => {
    if ((await run('ip', ['-o', 'addr', 'show', 'dev', 'lo'])).includes(` ${NODE_IP}/32`)) {
      await run('ip', ['addr', 'del', `${NODE_IP}/32`, 'dev', 'lo']);
    }
  });
  await step('nftables', () => cleanNftables(record.nftTables));
  await step('ip_forward', () => {
    if (readFileSync(IP_FORWARD, 'utf8').trim() !== record.ipForward) writeFileSync(IP_FORWARD, `${record.ipForward}\n`);
  });
  await step('cgroups', async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        for (const h of cgroupHierarchies()) removeCgroupTree(join(h, CGROUP_ROOT));
        return;
      } catch (err) {
        // EBUSY for a moment after the last process of a cgroup died.
        if (attempt >= 50) throw err;
        await sleep(100);
      }
    }
  });
  await step('host-wide files', () => removeHostWideFiles(record));
  await step('node directory', () => rmSync(record.nodeDir, { recursive: true, force: true, maxRetries: 3 }));
  await step('check', async () => {
    const left = (await hostLeftovers(record)).filter((l) => !l.startsWith('lock '));
    if (left.length > 0) throw new Error(`still there: ${left.join('; ')}`);
  });
  if (failures.length > 0) {
    throw new Error(`real test node: clean-up incomplete (the lock ${HOST_LOCK_DIR} stays so the next start retries):\n  ${failures.join('\n  ')}`);
  }
  rmSync(HOST_LOCK_DIR, { recursive: true, force: true });
}
