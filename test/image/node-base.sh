#!/usr/bin/env bash
# The Dockerfile's NODE_IMAGE, built here because no registry image can be pulled: Debian trixie
# (stable) with ca-certificates and the C++ runtime from the Debian mirror, and Node.js 24 LTS — the
# official nodejs.org build with npm, the very files test/cluster/install-node.sh installs for the
# Makefile (checked against the sha512 pinned there) — in /usr/local, as the official node images lay
# them out. Not Debian's nodejs: trixie's is 20.19 (end of life 2026-04-30) and forky's 24 is Debian
# testing. Stored in the project's buildah store as localhost/secondcron-node-base:<suite>-<arch>-<key>,
# key = the hash of this file's and install-node.sh's code (comments do not count): the image is built
# once per recipe. Other recipes' bases stay (another clone on this machine may build on one right
# now); `rm -rf ~/.cache/secondcron/buildah` reclaims the space.
#   test/image/node-base.sh [amd64|arm64]     (arm64: the target's own dpkg runs under qemu-user)
# Prints the image reference on its last line.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
SUITE=trixie
MIRROR=http://deb.debian.org/debian
SECURITY=http://deb.debian.org/debian-security
# libstdc++6: the official node build links it (and libgcc_s, which it pulls in).
PACKAGES=ca-certificates,libstdc++6
ARCH=${1:-amd64}
case "$ARCH" in amd64) node_arch=x64 ;; arm64) node_arch=arm64 ;; *) echo "node-base: unknown architecture $ARCH" >&2; exit 2 ;; esac
install_node=$here/../cluster/install-node.sh

key=$(grep -hv '^[[:space:]]*#' "$0" "$install_node" | sha256sum | cut -c1-12)
ref=localhost/secondcron-node-base:$SUITE-$ARCH-$key
bah() { "$here/buildah.sh" "$@"; }

if bah inspect --type image "$ref" >/dev/null 2>&1; then
  echo "$ref"
  exit 0
fi

start=$(date +%s)
step() { echo "[node-base $(( $(date +%s) - start ))s] $*" >&2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/secondcron-node-base.XXXXXX")
container=
binfmt=
cleanup() {
  [ -z "$container" ] || bah rm "$container" >/dev/null 2>&1 || true
  [ -z "$binfmt" ] || "$here/binfmt.sh" unregister
  rm -rf "$work"
}
trap cleanup EXIT
if [ "$ARCH" != "$(dpkg --print-architecture)" ]; then
  # The target's dpkg and maintainer scripts run in the chroot: under qemu-user-static.
  step "binfmt: $ARCH executables under qemu-user-static"
  [ "$("$here/binfmt.sh" register)" != registered ] || binfmt=1
fi

step "node (linux-$node_arch) from test/cluster/install-node.sh"
node_dir=$("$install_node" "$node_arch" | tail -n 1)

step "Debian $SUITE/$ARCH: $PACKAGES (mmdebstrap, variant apt) + $(basename "$node_dir")"
# No docs, man pages, locales (also for packages users add later: dpkg keeps these excludes).
# No /dev nodes in the tarball: the container runtime provides /dev.
# npm trusts the system's CA bundle (/usr/local/etc/npmrc, npm's global config): the official node
# build carries its own CA list and ignores /etc/ssl, unlike Debian's nodejs. So `npm ci` in the
# Dockerfile trusts what test/image/build.sh mounts there from the host (an egress proxy's CA).
mmdebstrap --variant=apt --architectures="$ARCH" --include="$PACKAGES" --skip=output/dev \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook="cp -a --no-preserve=ownership '$node_dir/bin' '$node_dir/lib' \"\$1/usr/local/\"" \
  --customize-hook="mkdir -p \"\$1/usr/local/share/doc/node\" && cp '$node_dir/LICENSE' \"\$1/usr/local/share/doc/node/\"" \
  --customize-hook='mkdir -p "$1/usr/local/etc" && echo cafile=/etc/ssl/certs/ca-certificates.crt > "$1/usr/local/etc/npmrc"' \
  --customize-hook='chroot "$1" node --version && chroot "$1" npm --version' \
  "$SUITE" "$work/rootfs.tar" \
  "deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" "deb $SECURITY $SUITE-security main" >&2

step "committing $ref"
container=$(bah from scratch)
bah add "$container" "$work/rootfs.tar" / >/dev/null
bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --cmd '["node"]' --label "io.secondcron.node-base.recipe=$key" \
  --arch "$ARCH" --os linux "$container"
bah commit --rm --quiet "$container" "$ref" >/dev/null
container=
step "done ($(bah images --noheading --format '{{.Size}}' "$ref"))"
echo "$ref"
