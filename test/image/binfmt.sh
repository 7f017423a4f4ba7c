#!/usr/bin/env bash
# arm64 programs on this amd64 machine: Debian's qemu-user-static registered with the kernel's
# binfmt_misc under the project's own name, so that mmdebstrap (an arm64 base's maintainer scripts)
# and buildah (the Dockerfile's RUN steps for linux/arm64) run arm64 executables under emulation.
# The "F" flag opens the emulator now, so it also works inside chroots that do not have it.
#   test/image/binfmt.sh register     prints "registered" when it did (the caller then unregisters),
#                                     "present" when an aarch64 handler was already there
#   test/image/binfmt.sh unregister   removes the project's handler, and unmounts binfmt_misc if
#                                     this script mounted it
# Machine-wide while registered (the kernel's table); callers unregister in their cleanup.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=/proc/sys/fs/binfmt_misc
name=secondcron-qemu-aarch64
marker=${SECONDCRON_CACHE:-$HOME/.cache/secondcron}/binfmt-mounted-by-secondcron
# The ELF header of an aarch64 executable, and the mask (Debian's qemu-aarch64.conf).
magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'

case "${1:-}" in
  register)
    # arch-test: mmdebstrap checks with it that the foreign architecture runs.
    "$here/../cluster/apt-install.sh" qemu-user-static arch-test
    if [ ! -e "$dir/register" ]; then
      mount -t binfmt_misc binfmt_misc "$dir"
      mkdir -p "$(dirname "$marker")" && touch "$marker"
    fi
    # Another aarch64 handler (binfmt-support's, ours from a run beside this one) serves as well.
    for f in "$dir"/*; do
      [ -f "$f" ] && grep -q '^enabled' "$f" 2>/dev/null && grep -q "magic 7f454c460201010000000000000000000200b700" "$f" && { echo present; exit 0; }
    done
    printf ':%s:M::%s:%s:/usr/bin/qemu-aarch64-static:F\n' "$name" "$magic" "$mask" > "$dir/register"
    echo registered
    ;;
  unregister)
    [ ! -e "$dir/$name" ] || echo -1 > "$dir/$name"
    if [ -e "$marker" ]; then
      # Unmount only when no other handler remains (someone else may have registered one since).
      if [ -z "$(find "$dir" -maxdepth 1 -type f ! -name register ! -name status -print -quit)" ]; then umount "$dir"; fi
      rm -f "$marker"
    fi
    ;;
  *) echo "usage: $0 register|unregister" >&2; exit 2 ;;
esac
