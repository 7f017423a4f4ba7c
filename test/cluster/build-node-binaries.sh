#!/usr/bin/env bash
# Builds the real test node (kubelet, kube-proxy, containerd + shim + ctr, runc, CNI plugins) from Go
# modules into a cache outside the clone, once per pinned version set, and installs the Debian
# packages the node needs at run time (nft for kube-proxy's nftables mode and the test's own rules)
# or at build time (libseccomp-dev: runc without seccomp cannot start a RuntimeDefault pod).
# Prints the cache directory on its last line; CNI plugins are in its cni/ subdirectory.
# A separate set from build-binaries.sh so the control plane's cache key does not move with it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=v1.36.3
CONTAINERD_VERSION=v2.4.2
RUNC_VERSION=v1.5.3
CNI_PLUGINS_VERSION=v1.10.0

"$here/apt-install.sh" nftables libseccomp-dev gcc libc6-dev pkg-config

cache_root=${SECONDCRON_CACHE:-$HOME/.cache/secondcron}
# kubelet and kube-proxy come from the control plane's wrapper module: it is part of the key.
key=$(cat "$here/go/kubernetes/go.mod" "$here/go/kubernetes/go.sum" "$0" "$here/pause/pause.go" "$here/oci-archive.sh" \
  | sha256sum | cut -c1-12)
out="$cache_root/node/k8s-$K8S_VERSION-containerd-$CONTAINERD_VERSION-runc-$RUNC_VERSION-cni-$CNI_PLUGINS_VERSION-$key"
# The sandbox image; the Node side reads the same name from here (test/cluster/real-node/).
PAUSE_IMAGE=registry.local/secondcron/pause:1
names=(kubelet kube-proxy containerd containerd-shim-runc-v2 ctr runc cni/bridge cni/host-local cni/loopback cni/portmap)

complete=1
for n in "${names[@]}"; do [ -x "$out/$n" ] || complete=0; done
[ -f "$out/pause.tar" ] || complete=0
if [ "$complete" = 1 ]; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "build-node-binaries: Go is required to build the test node" >&2; exit 1; }
mkdir -p "$out.partial/cni"
export GOFLAGS=-trimpath GOTOOLCHAIN=local CGO_ENABLED=0
start=$(date +%s)
step() { echo "[build-node-binaries $(( $(date +%s) - start ))s] $*" >&2; }

ctrd=github.com/containerd/containerd/v2
ctrd_ldflags="-s -w -X $ctrd/version.Version=$CONTAINERD_VERSION"
ctrd_tags="urfave_cli_no_docs osusergo netgo static_build"
if [ ! -x "$out.partial/ctr" ]; then
  step "containerd, ctr $CONTAINERD_VERSION"
  GOBIN="$out.partial" go install -tags "$ctrd_tags" -ldflags "$ctrd_ldflags" \
    "$ctrd/cmd/containerd@$CONTAINERD_VERSION" "$ctrd/cmd/ctr@$CONTAINERD_VERSION"
fi
if [ ! -x "$out.partial/containerd-shim-runc-v2" ]; then
  step "containerd-shim-runc-v2 $CONTAINERD_VERSION"
  GOBIN="$out.partial" go install -tags "$ctrd_tags no_grpc" -ldflags "$ctrd_ldflags" \
    "$ctrd/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION"
fi

if [ ! -x "$out.partial/runc" ]; then
  step "runc $RUNC_VERSION (static, with libseccomp)"
  GOBIN="$out.partial" CGO_ENABLED=1 go install -tags "seccomp netgo osusergo" \
    -ldflags "-s -w -X main.version=${RUNC_VERSION#v} -extldflags -static" \
    "github.com/opencontainers/runc@$RUNC_VERSION"
fi

if [ ! -x "$out.partial/cni/portmap" ]; then
  step "CNI plugins $CNI_PLUGINS_VERSION: bridge, host-local, loopback, portmap"
  p=github.com/containernetworking/plugins/plugins
  GOBIN="$out.partial/cni" go install -ldflags '-s -w' \
    "$p/main/bridge@$CNI_PLUGINS_VERSION" "$p/main/loopback@$CNI_PLUGINS_VERSION" \
    "$p/ipam/host-local@$CNI_PLUGINS_VERSION" "$p/meta/portmap@$CNI_PLUGINS_VERSION"
fi

if [ ! -x "$out.partial/kube-proxy" ]; then
  step "kubelet, kube-proxy $K8S_VERSION (shares most packages with the control plane: fast once that is built)"
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=module-$K8S_VERSION -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$here/go/kubernetes" && go build -ldflags="$ldflags" -o "$out.partial/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
fi

if [ ! -f "$out.partial/pause.tar" ]; then
  step "pause image $PAUSE_IMAGE"
  rootfs=$(mktemp -d)
  (cd "$here/pause" && go build -ldflags='-s -w' -o "$rootfs/pause" pause.go)
  "$here/oci-archive.sh" "$PAUSE_IMAGE" "$out.partial/pause.tar" "$rootfs" '["/pause"]'
  rm -rf "$rootfs"
fi

rm -rf "$out"
mv "$out.partial" "$out"
step "done: $out"
echo "$out"
