#!/usr/bin/env bash
# `make release`: what docs/releasing.md's checklist runs. Pushes the operator image and the Helm
# chart to an OCI registry, signs both with cosign, attaches the image's CycloneDX SBOM as a signed
# attestation, and writes the kubectl plugin's npm package, single executables and krew manifest to
# $RELEASE_DIR. Users then install with
#   helm install secondcron oci://$REGISTRY/charts/secondcron --version $VERSION
# and the chart's default image is $REGISTRY/secondcron@<the pushed digest> (values keep the tag
# $VERSION for humans; chart version = package version = appVersion = image tag).
# A version is pushed once: refused when the registry has it already (image tag or chart version).
#
#   REGISTRY=ghcr.io/secondcron release/release.sh
# Environment:
#   REGISTRY       host[:port][/path] to push to (required)
#   VERSION        default: package.json's version; for it, the git tag vVERSION must be HEAD's and
#                  CHANGELOG.md's [Unreleased] empty. Another version must be a pre-release.
#   PLAIN_HTTP=1   the registry speaks HTTP, not HTTPS (a registry on 127.0.0.1 in the tests)
#   RELEASE_PARTS  default "image chart plugin npm"; the e2e test pushes "image chart" twice
#   RELEASE_PLATFORMS  default "amd64 arm64": the linux platforms of the image index (arm64 is built
#                  under qemu-user-static emulation on amd64: test/image/build.sh)
#   RELEASE_DIR    default dist/release
#   HELM           default helm (the Makefile passes the pinned one)
#   COSIGN         default cosign (the Makefile passes the one test/cluster/build-cosign.sh builds)
#   COSIGN_KEY     a cosign private key (file, or a KMS URI such as awskms://…; COSIGN_PASSWORD for a
#                  file) to sign with; unset: keyless signing (an OIDC identity: the CI's workload
#                  identity, or a browser login), recorded in the public transparency log
#   COSIGN_TLOG=0  no transparency log upload (only with COSIGN_KEY; the tests, which reach no Rekor)
# Stdout: one "<part>: <what>" line per thing released.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
: "${REGISTRY:?set REGISTRY to the registry to push to, e.g. REGISTRY=ghcr.io/secondcron}"
REGISTRY=${REGISTRY%/}
VERSION=${VERSION:-$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version' "$root/package.json")}
PARTS=${RELEASE_PARTS:-image chart plugin npm}
PLATFORMS=${RELEASE_PLATFORMS:-amd64 arm64}
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
  # Everything between "## [Unreleased]" and the next "## [" heading must be blank.
  unreleased=$(awk '/^## \[Unreleased\]/ { on = 1; next } /^## \[/ { on = 0 } on && NF' "$root/CHANGELOG.md")
  [ -z "$unreleased" ] || fail "CHANGELOG.md's [Unreleased] section is not empty: move its entries into [$VERSION] (docs/releasing.md step 2)"
  tagged=$(git -C "$root" rev-parse -q --verify "refs/tags/v$VERSION^{commit}" || true)
  [ -n "$tagged" ] || fail "there is no git tag v$VERSION (docs/releasing.md step 3: git tag -s v$VERSION)"
  [ "$tagged" = "$(git -C "$root" rev-parse HEAD)" ] || fail "the git tag v$VERSION is not HEAD (it is ${tagged:0:12}): check out the tag to release it"
else
  [[ "$VERSION" == *-* ]] || fail "VERSION $VERSION differs from package.json's $package_version: only a pre-release (X.Y.Z-rc.1) may"
fi
tls=(--tls-verify=true)
plain=()
cosign_registry=()
if [ "${PLAIN_HTTP:-}" = 1 ]; then tls=(--tls-verify=false); plain=(--plain-http); cosign_registry=(--allow-http-registry --allow-insecure-registry); fi
COSIGN=${COSIGN:-cosign}
sign_flags=(--yes)
if [ -n "${COSIGN_KEY:-}" ]; then
  sign_flags+=(--key "$COSIGN_KEY")
  [ "${COSIGN_TLOG:-1}" != 0 ] || sign_flags+=(--tlog-upload=false --use-signing-config=false)
else
  [ "${COSIGN_TLOG:-1}" != 0 ] || fail "COSIGN_TLOG=0 needs COSIGN_KEY: keyless signatures are proved by the transparency log"
fi
if has image || has chart; then
  command -v "$COSIGN" >/dev/null || fail "$COSIGN not found: set COSIGN (make release builds it: test/cluster/build-cosign.sh)"
fi
mkdir -p "$RELEASE_DIR"
work=$(mktemp -d)
container=
manifest_list=
cleanup() {
  [ -z "$container" ] || "$root/test/image/buildah.sh" rm "$container" >/dev/null 2>&1 || true
  [ -z "$manifest_list" ] || "$root/test/image/buildah.sh" manifest rm "$manifest_list" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

image_repo=$REGISTRY/secondcron
chart_repo=$REGISTRY/charts/secondcron
# Immutable versions: nothing is pushed when the registry has this version already. cosign asks the
# registry for the tag (cosign tree): found is a refusal, MANIFEST_UNKNOWN or NAME_UNKNOWN goes on,
# any other answer (no access, no network) stops the release.
absent() {
  local out
  if out=$("$COSIGN" tree "${cosign_registry[@]}" "$1" 2>&1); then return 1; fi
  grep -Eq 'MANIFEST_UNKNOWN|NAME_UNKNOWN' <<<"$out" || fail "cannot tell whether $1 exists: $out"
}
if has image; then absent "$image_repo:$VERSION" || fail "$image_repo:$VERSION is in the registry already: a released version is never pushed again"; fi
if has chart; then absent "$chart_repo:$VERSION" || fail "$chart_repo:$VERSION is in the registry already: a released version is never pushed again"; fi

image=$image_repo:$VERSION
digest=
if has image; then
  bah() { "$root/test/image/buildah.sh" "$@"; }
  host_arch=$(dpkg --print-architecture)
  list=localhost/secondcron-release-$$:$VERSION
  bah manifest create "$list" >/dev/null
  manifest_list=$list
  sbom_args=()
  for arch in $PLATFORMS; do
    step "image: make image for linux/$arch"
    built=$(CLUSTER_DIR="$work/no-cluster" IMAGE_ARCH="$arch" IMAGE_VERSION="$VERSION" "$root/test/image/build.sh" | tail -n 1)
    bah manifest add "$list" "$built" >/dev/null
    # What the SBOM lists, read from the image's own files (mounted: no emulation needed).
    container=$(bah from --pull=never --quiet "$built")
    mnt=$(bah mount "$container")
    cp "$mnt/var/lib/dpkg/status" "$work/dpkg-status-$arch"
    sbom_args+=(--dpkg "$arch=$work/dpkg-status-$arch")
    if [ "$arch" = "$host_arch" ]; then
      node_version=$("$mnt/usr/local/bin/node" --version)
    else
      node_version=$(qemu-aarch64-static -L "$mnt" "$mnt/usr/local/bin/node" --version)
    fi
    [ -z "${image_node:-}" ] || [ "$image_node" = "$node_version" ] || fail "linux/$arch has node $node_version, another platform $image_node"
    image_node=$node_version
    # The lockfile `npm ci --omit=dev` installed from (npm sbom on the tree itself counts the absent
    # dev dependencies as problems); the same on every platform.
    [ -s "$work/npm-sbom.json" ] || (cd "$mnt/app" && HOME="$work" npm sbom --omit=dev --package-lock-only --sbom-format cyclonedx) > "$work/npm-sbom.json"
    bah rm "$container" >/dev/null
    container=
  done
  step "image: push the index of linux/${PLATFORMS// /, linux/} to $image"
  bah manifest push --all --quiet "${tls[@]}" --digestfile "$work/digest" "$list" "docker://$image" >&2
  bah manifest rm "$list" >/dev/null
  manifest_list=
  digest=$(cat "$work/digest")
  echo "image: $image@$digest"

  step "sbom: CycloneDX of the image's npm packages, Debian packages (per platform) and Node.js"
  mkdir -p "$RELEASE_DIR/sbom"
  sbom=$RELEASE_DIR/sbom/secondcron-$VERSION.cdx.json
  node "$root/build/release/sbom.js" --npm "$work/npm-sbom.json" "${sbom_args[@]}" --node "$image_node" \
    --name secondcron --version "$VERSION" > "$sbom"
  echo "sbom: $sbom"

  step "cosign: sign $image_repo@$digest (the index and each platform's image) and attest its SBOM"
  "$COSIGN" sign "${sign_flags[@]}" "${cosign_registry[@]}" --recursive "$image_repo@$digest" >&2
  "$COSIGN" attest "${sign_flags[@]}" "${cosign_registry[@]}" --type cyclonedx --predicate "$sbom" "$image_repo@$digest" >&2
  echo "signed: $image_repo@$digest (signature, cyclonedx attestation)"
fi

if has chart; then
  [ -n "$digest" ] || fail "the chart names the image by the digest pushed in the same run: RELEASE_PARTS needs image with chart"
  step "chart: version $VERSION, default image $image_repo@$digest"
  cp -r "$root/helm/secondcron" "$work/secondcron"
  # The released chart's default image is the one pushed beside it, by digest; the tag stays for humans.
  values=$work/secondcron/values.yaml
  sed -i -e "s|^  repository: ghcr.io/secondcron/secondcron\$|  repository: $image_repo|" \
    -e "s|^  tag: \"\"\$|  tag: \"$VERSION\"|" -e "s|^  digest: \"\"\$|  digest: \"$digest\"|" "$values"
  for line in "  repository: $image_repo" "  tag: \"$VERSION\"" "  digest: \"$digest\""; do
    grep -qxF "$line" "$values" || fail "values.yaml has no image line to set to '$line'"
  done
  "$HELM" package "$work/secondcron" --version "$VERSION" --app-version "$VERSION" -d "$work" >&2
  "$HELM" push "$work/secondcron-$VERSION.tgz" "oci://$REGISTRY/charts" "${plain[@]}" > "$work/helm-push" 2>&1 || { cat "$work/helm-push" >&2; fail "helm push failed"; }
  cat "$work/helm-push" >&2
  chart_digest=$(sed -n 's/^Digest: \(sha256:[0-9a-f]\{64\}\)$/\1/p' "$work/helm-push")
  [ -n "$chart_digest" ] || fail "helm push printed no digest"
  "$COSIGN" sign "${sign_flags[@]}" "${cosign_registry[@]}" "$chart_repo@$chart_digest" >&2
  mkdir -p "$RELEASE_DIR/chart"
  cp "$work/secondcron-$VERSION.tgz" "$RELEASE_DIR/chart/"
  echo "chart: oci://$chart_repo --version $VERSION"
  echo "signed: $chart_repo@$chart_digest (signature)"
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
