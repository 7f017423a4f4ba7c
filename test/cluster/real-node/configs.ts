// The real test node's configuration files, as text. Every path the components would otherwise
// default to a host-wide location (/var/lib/containerd, /run/containerd/runc, /opt/containerd,
// /var/run/netns, /etc/cni, /var/log/pods, /etc/resolv.conf, …) points into the node's own
// directory; what cannot be moved is listed in host.ts and removed at teardown.
import {
  BRIDGE, CGROUP_ROOT, CNI_NETWORK, NODE_IP, NODE_NAME, PAUSE_IMAGE, POD_GATEWAY, POD_SUBNET,
  REAL_NODE_TAINT, SERVICE_CIDR,
} from './addresses.js';

/** Everything the node writes, under one directory (<cluster dir>/node). */
export interface NodePaths {
  root: string;
  containerdRoot: string;
  containerdState: string;
  containerdSocket: string;
  /** containerd's registry host configuration (<host:port>/hosts.toml, read at each pull). */
  registryHostsDir: string;
  runcRoot: string;
  runc: string;
  cniBinDir: string;
  cniConfDir: string;
  cniIpamDir: string;
  kubeletRoot: string;
  kubeletCertDir: string;
  podLogsDir: string;
  resolvConf: string;
  kubeletClientCa: string;
  kubeletKubeconfig: string;
  kubeProxyKubeconfig: string;
}

export function containerdConfig(p: NodePaths): string {
  // Config version 3 (containerd 2.x). TOML strings: JSON string escaping is valid TOML.
  const s = (v: string): string => JSON.stringify(v);
  return `version = 3
root = ${s(p.containerdRoot)}
state = ${s(p.containerdState)}

[grpc]
  address = ${s(p.containerdSocket)}
[ttrpc]
  address = ${s(`${p.containerdSocket}.ttrpc`)}

[plugins.'io.containerd.internal.v1.opt']
  path = ${s(`${p.containerdRoot}/opt`)}
# NRI would listen under /var/run/nri.
[plugins.'io.containerd.nri.v1.nri']
  disable = true

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = ${s(PAUSE_IMAGE)}
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = ${s(p.registryHostsDir)}

[plugins.'io.containerd.cri.v1.runtime']
  # Network namespaces under the state dir, not /var/run/netns.
  netns_mounts_under_state_dir = true
  # This VM lacks CAP_SYS_RESOURCE: runc cannot lower a process below its parent's oom_score_adj
  # ("nsexec: failed to update /proc/self/oom_score_adj: Permission denied" and no container).
  restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = ${s(p.runc)}
        Root = ${s(p.runcRoot)}
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [${s(p.cniBinDir)}]
    conf_dir = ${s(p.cniConfDir)}
`;
}

export function cniConfList(p: NodePaths): string {
  return `${JSON.stringify({
    cniVersion: '1.0.0',
    name: CNI_NETWORK,
    plugins: [
      {
        type: 'bridge',
        bridge: BRIDGE,
        isGateway: true,
        // No default route and no masquerading: a pod reaches Services (via kube-proxy's DNAT on
        // the host) and the node, nothing else.
        isDefaultGateway: false,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          dataDir: p.cniIpamDir,
          ranges: [[{ subnet: POD_SUBNET, gateway: POD_GATEWAY }]],
          routes: [{ dst: SERVICE_CIDR }, { dst: `${NODE_IP}/32` }],
        },
      },
      // hostPort support, nftables rules (the host's iptables may be absent or legacy).
      { type: 'portmap', capabilities: { portMappings: true }, backend: 'nftables' },
    ],
  }, null, 2)}\n`;
}

export function kubeletConfig(p: NodePaths): string {
  // JSON is YAML.
  return `${JSON.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: NODE_IP,
    port: 10250,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    readOnlyPort: 0,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: CGROUP_ROOT,
    // This machine has the cgroup v1 hierarchies (plus a v2 "unified" mount).
    failCgroupV1: false,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${p.containerdSocket}`,
    podLogsDir: p.podLogsDir,
    // Pods never ask the host's resolver (it is off the machine); nothing here needs DNS.
    resolvConf: p.resolvConf,
    clusterDomain: 'cluster.local',
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: p.kubeletClientCa },
    },
    authorization: { mode: 'Webhook' },
    registerWithTaints: [{ key: REAL_NODE_TAINT, value: 'true', effect: 'NoSchedule' }],
    maxPods: 30,
    // A shared test VM's disk and memory are not this node's alone: evict only when truly short,
    // and never collect images (the operator image is imported, it cannot be pulled again).
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // Pod status reaches the apiserver quickly (default 10 s between node status updates).
    nodeStatusUpdateFrequency: '4s',
    serializeImagePulls: false,
  }, null, 2)}\n`;
}

export function kubeProxyConfig(p: NodePaths): string {
  return `${JSON.stringify({
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: p.kubeProxyKubeconfig },
    mode: 'nftables',
    hostnameOverride: NODE_NAME,
    bindAddress: NODE_IP,
    clusterCIDR: POD_SUBNET,
    healthzBindAddress: '127.0.0.1:10256',
    metricsBindAddress: '127.0.0.1:10249',
    nodePortAddresses: [`${NODE_IP}/32`],
    // Zeros: kube-proxy leaves the host's conntrack sysctls alone.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  }, null, 2)}\n`;
}
