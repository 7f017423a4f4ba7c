#!/usr/bin/env bash
# Installs the named Debian packages that are not installed yet (no recommends), and starts no
# service while doing so: a policy-rc.d that forbids it is put in place for the install when the
# machine has none. Idempotent: with everything installed it only asks dpkg and exits.
#   test/cluster/apt-install.sh buildah mmdebstrap
set -euo pipefail

missing=()
for pkg in "$@"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)" = installed ] || missing+=("$pkg")
done
[ ${#missing[@]} -gt 0 ] || exit 0

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
policy=/usr/sbin/policy-rc.d
own_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# secondcron: no service starts during this install\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  own_policy=1
fi
trap '[ -z "$own_policy" ] || $sudo rm -f "$policy"' EXIT

echo "[apt-install] ${missing[*]}" >&2
# Other installs may hold the dpkg lock (shared machines, CI images warming up): wait for it.
apt_install() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >&2; }
apt_install || { $sudo apt-get update -o DPkg::Lock::Timeout=600 >&2 && apt_install; }
