#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubectl, kwok, helm) from Go modules into a cache outside the clone, once per pinned version set.
# Prints the cache directory on its last line. Set SECONDCRON_CACHE to move the cache.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
HELM_VERSION=v4.3.2

cache_root=${SECONDCRON_CACHE:-$HOME/.cache/secondcron}
# The wrapper modules are part of the key: changing a pin or a replace builds a new set.
key=$(cat "$here"/go/*/go.mod "$here"/go/*/go.sum "$0" | sha256sum | cut -c1-12)
out="$cache_root/bin/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-helm-$HELM_VERSION-$key"
names=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok helm)

complete=1
for n in "${names[@]}"; do [ -x "$out/$n" ] || complete=0; done
if [ "$complete" = 1 ]; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "build-binaries: Go is required to build the test control plane" >&2; exit 1; }
mkdir -p "$out.partial"
export GOFLAGS=-trimpath GOTOOLCHAIN=local CGO_ENABLED=0
start=$(date +%s)
step() { echo "[build-binaries $(( $(date +%s) - start ))s] $*" >&2; }

if [ ! -x "$out.partial/etcd" ]; then
  step "etcd $ETCD_VERSION"
  (cd "$here/go/etcd" && go build -ldflags='-s -w' -o "$out.partial/etcd" .)
fi

if [ ! -x "$out.partial/kubectl" ]; then
  step "kube-apiserver, kube-controller-manager, kube-scheduler, kubectl $K8S_VERSION (the long one: ~10-25 min cold on 2 cores)"
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  ldflags="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.gitCommit=module-$K8S_VERSION -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  (cd "$here/go/kubernetes" && go build -ldflags="$ldflags" -o "$out.partial/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
fi

if [ ! -x "$out.partial/kwok" ]; then
  step "kwok $KWOK_VERSION"
  GOBIN="$out.partial" go install -ldflags='-s -w' "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
fi

if [ ! -x "$out.partial/helm" ]; then
  step "helm $HELM_VERSION"
  GOBIN="$out.partial" go install -ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" "helm.sh/helm/v4/cmd/helm@$HELM_VERSION"
fi

rm -rf "$out"
mv "$out.partial" "$out"
step "done: $out"
echo "$out"
