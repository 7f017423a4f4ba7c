#!/usr/bin/env bash
# `make image`: builds the project's Dockerfile — both stages, as written — with buildah (no Docker
# daemon: chroot isolation, the host network for `npm ci`, the layer cache in the project's store),
# on the Debian-built base from node-base.sh passed as NODE_IMAGE. Writes the image as an OCI
# archive outside the clone and, when a real-node cluster is up (<cluster dir>/real-node.json),
# imports it into that node's containerd so the kubelet finds it without pulling.
# Stdout: "archive: <path>", then the image reference as the last line; progress goes to stderr.
# The tag is <package.json version>-<image id>: a new image always gets a new tag.
# IMAGE_ARCH=arm64: the linux/arm64 image, on the arm64 base, its RUN steps under qemu-user-static
# (test/image/binfmt.sh registers it for the build and removes it after); never imported.
#   CLUSTER_DIR=.cluster test/image/build.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache_root=${SECONDCRON_CACHE:-$HOME/.cache/secondcron}
cluster_dir=${CLUSTER_DIR:-$root/.cluster}
REPOSITORY=localhost/secondcron
bah() { "$here/buildah.sh" "$@"; }
start=$(date +%s)
step() { echo "[image $(( $(date +%s) - start ))s] $*" >&2; }

"$root/test/cluster/apt-install.sh" buildah mmdebstrap
IMAGE_ARCH=${IMAGE_ARCH:-amd64}
host_arch=$(dpkg --print-architecture)
base=$("$here/node-base.sh" "$IMAGE_ARCH" | tail -n 1)
version=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version' "$root/package.json")

step "buildah build of Dockerfile (NODE_IMAGE=$base)"
iidfile=$(mktemp)
binfmt=
cleanup() {
  rm -f "$iidfile"
  [ -z "$binfmt" ] || "$here/binfmt.sh" unregister
}
trap cleanup EXIT
if [ "$IMAGE_ARCH" != "$host_arch" ]; then
  step "binfmt: $IMAGE_ARCH executables under qemu-user-static"
  [ "$("$here/binfmt.sh" register)" != registered ] || binfmt=1
fi
# RUN steps trust what this machine trusts (an egress proxy's CA, a company CA): the host's bundle
# is mounted over the base's for the build only; volumes never end up in a layer.
trust=()
host_ca=/etc/ssl/certs/ca-certificates.crt
[ ! -f "$host_ca" ] || trust=(--volume "$host_ca:$host_ca:ro")
# OCI labels: where the image comes from and which version and commit it is (IMAGE_VERSION: the
# version release.sh pushes, default package.json's).
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
source_url=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).homepage' "$root/package.json")
labels=(
  --label "org.opencontainers.image.source=$source_url"
  --label "org.opencontainers.image.version=${IMAGE_VERSION:-$version}"
  --label "org.opencontainers.image.revision=$revision"
  --label "org.opencontainers.image.licenses=Apache-2.0"
  --label "org.opencontainers.image.title=secondcron"
)
bah build --isolation chroot --network host --layers --force-rm --pull=never --platform "linux/$IMAGE_ARCH" "${trust[@]}" "${labels[@]}" \
  --build-arg "NODE_IMAGE=$base" --build-arg "COMMIT=${revision:0:12}" --iidfile "$iidfile" -f "$root/Dockerfile" "$root" >&2
id=$(sed 's/^sha256://' "$iidfile")
tag=$version-${id:0:12}
ref=$REPOSITORY:$tag
bah tag "$id" "$ref"

mkdir -p "$cache_root/images"
archive=$cache_root/images/secondcron-$tag.oci.tar
if [ ! -s "$archive" ]; then
  # A RUN step that fails but exits 0 (npm 10.8's `npm ci` did on a network error) leaves a broken
  # layer that the cache would serve to every later build. The entrypoint loads every module for
  # --help, so a missing dependency fails here, and the cache is cleared.
  step "smoke check: node dist/main.js --help as 65532"
  container=$(bah from --pull=never --quiet "$id")
  if ! bah run --isolation chroot --user 65532:65532 "$container" -- node dist/main.js --help >/dev/null; then
    bah rm "$container" >/dev/null
    bah rmi -f "$ref" >/dev/null
    bah rmi --prune >/dev/null
    echo "image: the built image cannot run its entrypoint (see above); the layer cache was cleared, run make image again" >&2
    exit 1
  fi
  bah rm "$container" >/dev/null
  step "writing $archive"
  bah push --quiet "$id" "oci-archive:$archive.partial.$$:$ref" >&2
  mv "$archive.partial.$$" "$archive"
fi
# Archives unused for a day go (another clone's current one is younger: it is touched on each use).
touch "$archive"
find "$cache_root/images" -maxdepth 1 -name 'secondcron-*.oci.tar*' -mmin +1440 -delete

real_node=$cluster_dir/real-node.json
if [ -f "$real_node" ] && [ "$IMAGE_ARCH" = "$host_arch" ]; then
  read -r socket ctr namespace < <(node -e '
    const n = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(n.containerdSocket, n.ctr, n.namespace ?? "k8s.io");' "$real_node")
  [ -S "$socket" ] || { echo "image: $real_node names containerd at $socket, which is not a socket (cluster down? make cluster-down)" >&2; exit 1; }
  step "importing into the real node's containerd ($socket, namespace $namespace)"
  "$ctr" --address "$socket" -n "$namespace" images import "$archive" >&2
else
  step "no real node is up ($real_node missing): built the archive only"
fi
step "$ref ($(bah images --noheading --format '{{.Size}}' "$ref"))"
echo "archive: $archive"
echo "$ref"
