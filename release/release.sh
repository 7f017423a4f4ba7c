#!/usr/bin/env bash
# `make release`: what docs/releasing.md's checklist runs. Pushes the operator image and the Helm
# chart to an OCI registry and writes the kubectl plugin's npm package, single executable and krew
# manifest to $RELEASE_DIR. Users then install with
#   helm install secondcron oci://$REGISTRY/charts/secondcron --version $VERSION
# and the chart's default image is $REGISTRY/secondcron:$VERSION (chart version = package version,
# appVersion = image tag).
#
#   REGISTRY=ghcr.io/secondcron release/release.sh
# Environment:
#   REGISTRY       host[:port][/path] to push to (required)
#   VERSION        default: package.json's version
#   PLAIN_HTTP=1   the registry speaks HTTP, not HTTPS (a registry on 127.0.0.1 in the tests)
#   RELEASE_PARTS  default "image chart plugin npm"; the e2e test pushes "image chart" twice
#   RELEASE_DIR    default dist/release
#   HELM           default helm (the Makefile passes the pinned one)
# Stdout: one "<part>: <what>" line per thing released.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
: "${REGISTRY:?set REGISTRY to the registry to push to, e.g. REGISTRY=ghcr.io/secondcron}"
REGISTRY=${REGISTRY%/}
VERSION=${VERSION:-$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version' "$root/package.json")}
PARTS=${RELEASE_PARTS:-image chart plugin npm}
RELEASE_DIR=${RELEASE_DIR:-$root/dist/release}
HELM=${HELM:-helm}
start=$(date +%s)
step() { echo "[release $(( $(date +%s) - start ))s] $*" >&2; }
has() { [[ " $PARTS " == *" $1 "* ]]; }

fail() { echo "release: $*" >&2; exit 1; }
[[ "$VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || fail "VERSION $VERSION is not a semantic version"
# docs/releasing.md steps 1-3 for a release of package.json's version; other versions are pre-releases.
package_version=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version' "$root/package.json")
if [ "$VERSION" = "$package_version" ]; then
  for field in version appVersion; do
    grep -Eq "^$field: \"?$VERSION\"?\$" "$root/helm/secondcron/Chart.yaml" || fail "helm/secondcron/Chart.yaml $field is not $VERSION (docs/releasing.md step 1)"
  done
  grep -Eq "^## \[$VERSION\] - [0-9]{4}-[0-9]{2}-[0-9]{2}\$" "$root/CHANGELOG.md" || fail "CHANGELOG.md has no '## [$VERSION] - YYYY-MM-DD' section (docs/releasing.md step 2)"
  [ -z "$(git -C "$root" status --porcelain)" ] || fail "the work tree has uncommitted changes (docs/releasing.md step 3)"
else
  [[ "$VERSION" == *-* ]] || fail "VERSION $VERSION differs from package.json's $package_version: only a pre-release (X.Y.Z-rc.1) may"
fi
tls=(--tls-verify=true)
plain=()
if [ "${PLAIN_HTTP:-}" = 1 ]; then tls=(--tls-verify=false); plain=(--plain-http); fi
mkdir -p "$RELEASE_DIR"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

image=$REGISTRY/secondcron:$VERSION
if has image; then
  step "image: make image, then push to $image"
  built=$(CLUSTER_DIR="$work/no-cluster" "$root/test/image/build.sh" | tail -n 1)
  "$root/test/image/buildah.sh" push --quiet "${tls[@]}" --digestfile "$work/digest" "$built" "docker://$image" >&2
  echo "image: $image@$(cat "$work/digest")"
fi

if has chart; then
  step "chart: version $VERSION, default image $image"
  cp -r "$root/helm/secondcron" "$work/secondcron"
  # The released chart's default image is the one pushed beside it.
  sed -i "s|^  repository: ghcr.io/secondcron/secondcron\$|  repository: $REGISTRY/secondcron|" "$work/secondcron/values.yaml"
  grep -q "^  repository: $REGISTRY/secondcron\$" "$work/secondcron/values.yaml" || { echo "release: values.yaml has no image.repository line to set" >&2; exit 1; }
  "$HELM" package "$work/secondcron" --version "$VERSION" --app-version "$VERSION" -d "$work" >&2
  "$HELM" push "$work/secondcron-$VERSION.tgz" "oci://$REGISTRY/charts" "${plain[@]}" >&2
  mkdir -p "$RELEASE_DIR/chart"
  cp "$work/secondcron-$VERSION.tgz" "$RELEASE_DIR/chart/"
  echo "chart: oci://$REGISTRY/charts/secondcron --version $VERSION"
fi

if has plugin; then
  step "plugin: single executable and krew manifest"
  RELEASE_DIR="$RELEASE_DIR" node "$root/build/release/plugin-executable.js" | sed 's/^/plugin: /'
fi

if has npm; then
  step "npm: package of the operator and the kubectl plugin"
  mkdir -p "$RELEASE_DIR/npm"
  (cd "$root" && npm pack --silent --pack-destination "$RELEASE_DIR/npm") | sed "s|^|npm: $RELEASE_DIR/npm/|"
fi
step "done"
