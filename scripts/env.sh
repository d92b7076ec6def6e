#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the pinned environment bpf_hbm is built and tested in: a Debian
# trixie rootfs with a modern BPF toolchain, virtme-ng, QEMU and the kernels
# the VM tests boot. Prints the rootfs path on stdout.
#
# The host only needs debootstrap (installed here if missing) and root. The
# rootfs is cached under $BPF_HBM_CACHE (default ~/.cache/bpf-hbm), keyed by a
# hash of the package list and this script, so a second run is instant and a
# changed list rebuilds. It is built in a temporary directory and renamed into
# place only when complete, so a half-built rootfs is never used; all mounts
# live in a private mount namespace and vanish with it, even on SIGKILL.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${BPF_HBM_CACHE:-$HOME/.cache/bpf-hbm}
mirror=${BPF_HBM_MIRROR:-http://deb.debian.org/debian}
pkgs=$here/packages.txt

log() { echo "env: $*" >&2; }
t0=$(date +%s)
# Each phase of a build says which it is and when it started.
phase() { log "phase $1 (+$(( $(date +%s) - t0 ))s)"; }
die() { echo "env: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"

key=$(cat "$pkgs" "$here/env.sh" | sha256sum | cut -c1-12)
final=$cache/rootfs-$key
if [ -e "$final/.complete" ]; then
	echo "$final"
	exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9
# Another run may have finished it while we waited for the lock.
if [ -e "$final/.complete" ]; then
	echo "$final"
	exit 0
fi

if ! command -v debootstrap >/dev/null; then
	log "installing debootstrap on the host"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >&2
fi

tmp=$cache/rootfs-$key.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
log "building $final (about 5-10 minutes, once per package list)"

# Everything that mounts runs in a private mount namespace.
unshare --mount --propagation private -- bash -euo pipefail -s -- \
	"$tmp" "$mirror" "$pkgs" "$t0" >&2 <<'STAGE'
root=$1 mirror=$2 pkgs=$3 t0=$4
phase() { echo "env: phase $1 (+$(( $(date +%s) - t0 ))s)"; }
phase "1/4: debootstrap trixie (minbase) from $mirror"
debootstrap --variant=minbase --include=ca-certificates trixie "$root" "$mirror"

# The reachable mirror can serve Release files past their Valid-Until date.
cat >"$root/etc/apt/apt.conf.d/99bpf-hbm" <<EOF
Acquire::Check-Valid-Until "false";
Acquire::Check-Date "false";
APT::Install-Recommends "false";
APT::Install-Suggests "false";
EOF
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror trixie main
deb $mirror trixie-backports main
deb $mirror sid main
EOF
# sid only where asked for by name.
cat >"$root/etc/apt/preferences.d/sid" <<EOF
Package: *
Pin: release n=sid
Pin-Priority: 100
EOF

mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --rbind /dev "$root/dev"
export DEBIAN_FRONTEND=noninteractive LC_ALL=C
phase "2/4: apt-get update (trixie, trixie-backports, sid)"
chroot "$root" apt-get update -qq
for suite in trixie trixie-backports sid; do
	list=$(awk -v s="$suite" '$1 == s { print $2 }' "$pkgs" | tr '\n' ' ')
	[ -n "$list" ] || continue
	phase "3/4: installing from $suite: $list"
	chroot "$root" apt-get install -y -qq -t "$suite" $list
done
phase "4/4: apt-get clean"
chroot "$root" apt-get clean
STAGE

date -u +%FT%TZ >"$tmp/.complete"
mv "$tmp" "$final"
# Old environments are 1.5 GB each: keep only the current one.
for old in "$cache"/rootfs-*; do
	[ "$old" = "$final" ] || rm -rf "$old"
done
log "ready: $final"
echo "$final"
