#!/usr/bin/env bash
# The Dockerfile's NODE_IMAGE, built here because no registry image can be pulled: Debian trixie
# (its nodejs is 20.19; bookworm's is 18.20, too old for package.json's engines) with nodejs and
# ca-certificates from the Debian mirror, plus npm — which the Dockerfile runs — from the npm
# registry, as the official node images ship it (Debian's own npm package pulls ~360 packages,
# webpack and python among them, +150 MB). Stored in the project's buildah store as
# localhost/secondcron-node-base:<suite>-<key>, key = the hash of this file's code (comments do not
# count): the image is built once per recipe. Other recipes' bases stay (another clone on this
# machine may build on one right now); `rm -rf ~/.cache/secondcron/buildah` reclaims the space.
# Prints the image reference on its last line.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
SUITE=trixie
MIRROR=http://deb.debian.org/debian
SECURITY=http://deb.debian.org/debian-security
PACKAGES=nodejs,ca-certificates
# The last npm 10. Not 10.8.2, which node 20.19 ships: its `npm ci` exits 0 when the registry is
# unreachable ("Exit handler never called!"), so the build went on and the layer cache kept an empty
# node_modules; 10.9.9 exits 1 there (both tried here, with the TLS trust missing).
NPM_VERSION=10.9.9
NPM_INTEGRITY=sha512-1g+6jLQvaIuB4zwvHL7yrXuXcWZwDsCtBX8bbWDqbvJSSr9nPiDDWTHNgwXR27iIcTTW7v3A57hDW9RYv2W4Yg==

key=$(grep -v '^[[:space:]]*#' "$0" | sha256sum | cut -c1-12)
ref=localhost/secondcron-node-base:$SUITE-$key
bah() { "$here/buildah.sh" "$@"; }

if bah inspect --type image "$ref" >/dev/null 2>&1; then
  echo "$ref"
  exit 0
fi

start=$(date +%s)
step() { echo "[node-base $(( $(date +%s) - start ))s] $*" >&2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/secondcron-node-base.XXXXXX")
container=
cleanup() {
  [ -z "$container" ] || bah rm "$container" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

step "npm $NPM_VERSION from the npm registry"
(cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null)
tgz="$work/npm-$NPM_VERSION.tgz"
got=$(node -e 'const c = require("crypto"), f = require("fs");
  process.stdout.write("sha512-" + c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"));' "$tgz")
[ "$got" = "$NPM_INTEGRITY" ] || { echo "node-base: npm-$NPM_VERSION.tgz is $got, expected $NPM_INTEGRITY" >&2; exit 1; }

step "Debian $SUITE: $PACKAGES (mmdebstrap, variant apt)"
# No docs, man pages, locales (also for packages users add later: dpkg keeps these excludes).
# No /dev nodes in the tarball: the container runtime provides /dev.
mmdebstrap --variant=apt --include="$PACKAGES" --skip=output/dev \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook='mkdir -p "$1/usr/lib/node_modules/npm"' \
  --customize-hook="tar -xzf '$tgz' -C \"\$1/usr/lib/node_modules/npm\" --strip-components=1 --no-same-owner" \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/bin/npm"' \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/bin/npx"' \
  --customize-hook='chroot "$1" node --version && chroot "$1" npm --version' \
  "$SUITE" "$work/rootfs.tar" \
  "deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" "deb $SECURITY $SUITE-security main" >&2

step "committing $ref"
container=$(bah from scratch)
bah add "$container" "$work/rootfs.tar" / >/dev/null
bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --cmd '["node"]' --label "io.secondcron.node-base.recipe=$key" "$container"
bah commit --rm --quiet "$container" "$ref" >/dev/null
container=
step "done ($(bah images --noheading --format '{{.Size}}' "$ref"))"
echo "$ref"
