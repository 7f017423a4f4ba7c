#!/usr/bin/env bash
# Builds what the release tests use besides the control plane: krew (installs the kubectl plugin from
# its manifest, as users do) and an OCI registry on 127.0.0.1 (test/cluster/go/registry: the
# image and the chart are pushed to it, the real node pulls from it). Cached outside the clone, once
# per pinned version set; prints the cache directory on its last line.
# A separate set from build-binaries.sh so the control plane's cache key does not move with it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
KREW_VERSION=v0.4.3
# The registry's go-containerregistry version is pinned in go/registry/go.mod (v0.22.1).

cache_root=${SECONDCRON_CACHE:-$HOME/.cache/secondcron}
key=$(cat "$here/go/registry/go.mod" "$here/go/registry/go.sum" "$here/go/registry/main.go" "$0" | sha256sum | cut -c1-12)
out="$cache_root/release-tools/krew-$KREW_VERSION-$key"
names=(krew registry)

complete=1
for n in "${names[@]}"; do [ -x "$out/$n" ] || complete=0; done
if [ "$complete" = 1 ]; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "build-release-tools: Go is required to build krew and the test registry" >&2; exit 1; }
mkdir -p "$out.partial"
export GOFLAGS=-trimpath GOTOOLCHAIN=local CGO_ENABLED=0
start=$(date +%s)
step() { echo "[build-release-tools $(( $(date +%s) - start ))s] $*" >&2; }

if [ ! -x "$out.partial/krew" ]; then
  step "krew $KREW_VERSION"
  GOBIN="$out.partial" go install -ldflags="-s -w -X sigs.k8s.io/krew/internal/version.gitTag=$KREW_VERSION" "sigs.k8s.io/krew/cmd/krew@$KREW_VERSION"
fi
if [ ! -x "$out.partial/registry" ]; then
  step "registry (go-containerregistry pkg/registry)"
  (cd "$here/go/registry" && go build -ldflags='-s -w' -o "$out.partial/registry" .)
fi

rm -rf "$out"
mv "$out.partial" "$out"
step "done: $out"
echo "$out"
