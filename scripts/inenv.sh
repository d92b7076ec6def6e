#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command inside the pinned environment (see env.sh) with the
# repository bind-mounted at the same path and the same working directory,
# so build outputs land in the host's tree. Mounts live in a private mount
# namespace: nothing is left mounted when the command ends or is killed.
#
#   scripts/inenv.sh make -C /path/to/repo
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARG...]" >&2; exit 2; }
root=$("$here/env.sh")

exec unshare --mount --propagation private -- bash -euo pipefail -c '
root=$1 repo=$2 cwd=$3
shift 3
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"
mkdir -p "$root/$repo"
mount --bind "$repo" "$root/$repo"
case "$cwd/" in "$repo"/*) ;; *) cwd=$repo ;; esac
exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root TERM="${TERM:-dumb}" HBM_IN_ENV=1 V="${V:-}" \
	bash -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
' bash "$root" "$repo" "$PWD" "$@"
