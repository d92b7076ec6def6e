#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate vmlinux/vmlinux.h from the BTF of the kernel the VM tests boot
# (default 7.3; KERNEL=7.2 for the other). The header is committed so the
# BPF object builds without a VM; run this after changing the kernel in
# scripts/packages.txt.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)

if [ -z "${HBM_IN_VM:-}" ]; then
	exec "$here/vmrun.sh" -t 300 env HBM_IN_VM=1 "$here/gen-vmlinux.sh"
fi
out=$repo/vmlinux
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$out/vmlinux.h.tmp"
mv "$out/vmlinux.h.tmp" "$out/vmlinux.h"
uname -r >"$out/VERSION"
echo "gen-vmlinux: vmlinux.h from $(cat "$out/VERSION")"
