#!/usr/bin/env bash
# cosign (signs and verifies the released image and chart, attaches and verifies the SBOM
# attestation), built from its Go module: no prebuilt binary can be downloaded here. Cached outside
# the clone, once per version; prints the cache directory (with ./cosign) on its last line.
# A separate cache from build-release-tools.sh so that krew's and the registry's key does not move.
set -euo pipefail

COSIGN_VERSION=v3.1.3
cache_root=${SECONDCRON_CACHE:-$HOME/.cache/secondcron}
key=$(grep -v '^[[:space:]]*#' "$0" | sha256sum | cut -c1-12)
out="$cache_root/cosign/cosign-$COSIGN_VERSION-$key"
if [ -x "$out/cosign" ]; then
  echo "$out"
  exit 0
fi

command -v go >/dev/null || { echo "build-cosign: Go is required to build cosign" >&2; exit 1; }
start=$(date +%s)
echo "[build-cosign] cosign $COSIGN_VERSION from github.com/sigstore/cosign/v3 (go install)" >&2
mkdir -p "$out.partial"
GOFLAGS=-trimpath GOTOOLCHAIN=local CGO_ENABLED=0 GOBIN="$out.partial" \
  go install -ldflags="-s -w -X sigs.k8s.io/release-utils/version.gitVersion=$COSIGN_VERSION" "github.com/sigstore/cosign/v3/cmd/cosign@$COSIGN_VERSION" >&2
"$out.partial/cosign" version >/dev/null
rm -rf "$out"
mv "$out.partial" "$out"
echo "[build-cosign] done in $(( $(date +%s) - start ))s: $out" >&2
echo "$out"
