#!/usr/bin/env bash
# The project's Node.js: 24 LTS ("Krypton"), the official nodejs.org build for linux, as the npm
# registry's node-linux-<arch> package ships it (the `node` package's own installer resolves to the
# same package), plus npm from the npm registry. Both tarballs are checked against the sha512 pinned
# here before they are unpacked. Installed once per version into ~/.cache/secondcron/nodejs/ (outside
# the clone, shared by reruns); prints the install directory (with bin/node, bin/npm, bin/npx) on
# its last line. The Makefile runs every target with it, the image base (test/image/node-base.sh)
# copies the same build, and the plugin's single executable is built from it.
#   test/cluster/install-node.sh [x64|arm64]
# Why not Debian's nodejs: trixie (stable) has 20.19, end of life since 2026-04-30; forky has a 24
# but forky is Debian testing, a moving target no release is pinned to, and an image scanner reports
# it as such. The official build is the one upstream supports and carries the single-executable fuse.
# Bootstrap: any npm on PATH downloads the two tarballs (npm pack); nothing else of it is used.
set -euo pipefail

NODE_VERSION=24.22.3
NPM_VERSION=11.21.3
NPM_INTEGRITY=sha512-5Cf+jE+XctbhH/zjOOqXC+ity7eec/Tkk4Ql38tf6w+1htp2wYPHmE4c1R1Es3DY227Ac14+SLrlYJwkBicbTg==
arch=${1:-x64}
case "$arch" in
  x64) NODE_INTEGRITY=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA== ;;
  arm64) NODE_INTEGRITY=sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw== ;;
  *) echo "install-node: unknown architecture $arch (x64 or arm64)" >&2; exit 2 ;;
esac

cache_root=${SECONDCRON_CACHE:-$HOME/.cache/secondcron}
out=$cache_root/nodejs/node-v$NODE_VERSION-npm-$NPM_VERSION-linux-$arch
if [ -x "$out/bin/node" ] && [ -e "$out/bin/npm" ]; then
  echo "$out"
  exit 0
fi

command -v npm >/dev/null || { echo "install-node: an npm on PATH is needed once to download node $NODE_VERSION (apt-get install npm)" >&2; exit 1; }
mkdir -p "$cache_root/nodejs"
work=$(mktemp -d "$cache_root/nodejs/.partial.XXXXXX")
trap 'rm -rf "$work"' EXIT
sri() { printf 'sha512-%s' "$(openssl dgst -sha512 -binary "$1" | base64 -w0)"; }
fetch() { # name version integrity → path of the checked tarball
  (cd "$work" && npm pack --silent --registry "$(npm config get registry)" "$1@$2" >/dev/null)
  local tgz="$work/${1##*/}-$2.tgz" got
  got=$(sri "$tgz")
  [ "$got" = "$3" ] || { echo "install-node: $1-$2.tgz is $got, expected $3" >&2; exit 1; }
  echo "$tgz"
}
echo "[install-node] node $NODE_VERSION (linux-$arch) and npm $NPM_VERSION from the npm registry" >&2
node_tgz=$(fetch "node-linux-$arch" "$NODE_VERSION" "$NODE_INTEGRITY")
npm_tgz=$(fetch npm "$NPM_VERSION" "$NPM_INTEGRITY")
root=$work/root
mkdir -p "$root/lib/node_modules/npm"
# Only the runtime: bin/node and the licence (include/ is for native addons, none is used).
tar -xzf "$node_tgz" -C "$root" --strip-components=1 --no-same-owner package/bin/node package/LICENSE
tar -xzf "$npm_tgz" -C "$root/lib/node_modules/npm" --strip-components=1 --no-same-owner
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/bin/npx"
if [ "$arch" = x64 ] && [ "$(uname -m)" = x86_64 ]; then
  [ "$("$root/bin/node" --version)" = "v$NODE_VERSION" ] || { echo "install-node: the unpacked node does not say v$NODE_VERSION" >&2; exit 1; }
  PATH="$root/bin:$PATH" "$root/bin/npm" --version >/dev/null
fi
rm -rf "$out"
mv "$root" "$out"
echo "$out"
