// The real test node's fixed addresses and names. They are fixed (the apiserver's certificate, the
// kubelet's and kube-proxy's configs and the pods' routes all name them), so only one real-node
// cluster can exist on a machine at a time: host.ts holds a lock for it.
//
// Nothing here is routed off the machine: NODE_IP lives on `lo` (the kernel has no dummy links),
// pods live on BRIDGE, and host-network.ts drops whatever from POD_SUBNET or to SERVICE_CIDR would
// otherwise be forwarded elsewhere.
export const NODE_NAME = 'secondcron-real-node';
/** The node's InternalIP: kubelet, kube-proxy and (in real-node mode) the apiserver listen here. */
export const NODE_IP = '10.250.0.1';
/** Pods' addresses, on BRIDGE; outside kwok's fake pod range (10.244.0.0/16) so no IP is shared. */
export const POD_SUBNET = '10.245.0.0/24';
/** The bridge's own address, first of POD_SUBNET: the pods' next hop to Services and NODE_IP. */
export const POD_GATEWAY = '10.245.0.1';
export const SERVICE_CIDR = '10.96.0.0/16';
export const BRIDGE = 'scnode0';
/** Name of the CNI network (also the prefix of libcni's cache entries in /var/lib/cni/results). */
export const CNI_NETWORK = 'secondcron-node';
/** kubelet's --cgroup-root, created in every cgroup hierarchy; containerd and its shims run in RUNTIME_CGROUP. */
export const CGROUP_ROOT = '/secondcron-node';
export const RUNTIME_CGROUP = `${CGROUP_ROOT}/runtime`;
/** nftables table (family inet) with the forwarding guards. */
export const NFT_TABLE = 'secondcron_node';
/** The containerd namespace the CRI plugin uses (what `ctr -n` needs to see the kubelet's images). */
export const CRI_NAMESPACE = 'k8s.io';
/** Sandbox image name; build-node-binaries.sh packs it into pause.tar under this name. */
export const PAUSE_IMAGE = 'registry.local/secondcron/pause:1';

/** Label and NoSchedule taint of the real node: only pods that select and tolerate it land there. */
export const REAL_NODE_LABEL = 'secondcron.test/real-node';
export const REAL_NODE_TAINT = 'secondcron.test/real-node';
