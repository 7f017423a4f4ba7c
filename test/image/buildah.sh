#!/usr/bin/env bash
# buildah on the project's own image store: a private root outside the clone (shared by reruns,
# the layer cache lives there), never the machine's /var/lib/containers.
set -euo pipefail
store=${SECONDCRON_CACHE:-$HOME/.cache/secondcron}/buildah
exec buildah --root "$store/storage" --runroot "$store/run" --storage-driver overlay "$@"
