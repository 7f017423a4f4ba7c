#!/usr/bin/env bash
# oci-archive.sh REF ARCHIVE ROOTFS-DIR ENTRYPOINT-JSON: packs ROOTFS-DIR as the one layer of an
# image in an OCI image-layout tar (what `ctr images import` reads), reproducibly (sorted names,
# uid 0, mtime 0). Only for the test node's pause image; the operator image comes from `make image`.
set -euo pipefail
ref=$1 archive=$2 rootfs=$3 entrypoint=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/oci/blobs/sha256"

# blob FILE: moves FILE into the layout under its digest; prints "<sha256> <size>".
blob() {
  local sha size
  sha=$(sha256sum "$1" | cut -d' ' -f1)
  size=$(stat -c %s "$1")
  mv "$1" "$work/oci/blobs/sha256/$sha"
  echo "$sha $size"
}

tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$work/layer.tar" .
diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
gzip -n -c "$work/layer.tar" > "$work/layer.tar.gz"
read -r layer_sha layer_size < <(blob "$work/layer.tar.gz")
printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":%s,"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$entrypoint" "$diff_id" > "$work/config.json"
read -r config_sha config_size < <(blob "$work/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
  "$config_sha" "$config_size" "$layer_sha" "$layer_size" > "$work/manifest.json"
read -r manifest_sha manifest_size < <(blob "$work/manifest.json")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest_sha" "$manifest_size" "$ref" "${ref##*:}" > "$work/oci/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' > "$work/oci/oci-layout"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work/oci" -cf "$archive" .
