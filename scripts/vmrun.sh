#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the test kernel under virtme-ng and run CMD in it as root, in the
# repository at the same path; exit with CMD's status.
#
#   scripts/vmrun.sh [-k KERNEL] [-t TIMEOUT_S] [-m MEM] CMD [ARG...]
#
# KERNEL is a version prefix of a kernel installed in the environment
# (default 7.3, also from $KERNEL). Uses KVM when /dev/kvm exists, TCG
# otherwise (VM_ACCEL=kvm|tcg forces one). Gives up after TIMEOUT_S seconds (default 1200, or $VM_TIMEOUT)
# with exit 124 rather than hang.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
kernel=${KERNEL:-7.3}
tmo=${VM_TIMEOUT:-1200}
mem=${VM_MEMORY:-2G}

usage() { sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "k:t:m:h" o; do
	case $o in
	k) kernel=$OPTARG ;;
	t) tmo=$OPTARG ;;
	m) mem=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage

if [ -z "${HBM_IN_ENV:-}" ]; then
	exec "$here/inenv.sh" env KERNEL="$kernel" VM_TIMEOUT="$tmo" \
		VM_MEMORY="$mem" VM_ACCEL="${VM_ACCEL:-auto}" \
		"$here/vmrun.sh" "$@"
fi

vmlinuz=$(ls /boot/vmlinuz-"$kernel"* 2>/dev/null | sort -V | tail -n 1)
[ -n "$vmlinuz" ] || { echo "vmrun: no kernel $kernel in the environment" \
	"(have: $(ls /boot | sed -n 's/^vmlinuz-//p' | tr '\n' ' '))" >&2; exit 2; }

# /dev/kvm can exist without working virtualization (these machines have
# it, but the CPU lacks vmx/svm and KVM dies on the first instruction it
# cannot emulate): use KVM only when both are there. VM_ACCEL=kvm|tcg forces.
accel=--disable-kvm
case ${VM_ACCEL:-auto} in
kvm) accel= ;;
tcg) ;;
*) [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && accel= ;;
esac
# RCU reports a CPU stalled after 21 s without a quiescent state, a figure
# for hardware. Under TCG the guest's code runs some 20-50 times slower,
# so a section that holds a CPU for half a second on hardware (a qdisc
# graft over 1030 tx queues, say) can cross it, or a host busy for a while.
# 60 s under TCG is still 1-3 s on hardware, well inside what the kernel
# would report there, and test_kernel_log fails a run on any stall report.
append=()
[ -n "$accel" ] && append=(--append rcupdate.rcu_cpu_stall_timeout=60)
mkdir -p "$repo/build"
rcfile=$(mktemp "$repo/build/.vmrc.XXXXXX")
trap 'rm -f "$rcfile"' EXIT

# CMD's status travels back through a file: it does not depend on how a
# given vng version reports the guest's exit code.
q() { printf '%q ' "$@"; }
inner="cd $(q "$PWD") && { $(q "$@"); echo \$? > $(q "$rcfile"); }"
echo "vmrun: booting $(basename "$vmlinuz") (${accel:+TCG, }timeout ${tmo}s)" >&2
set +e
timeout -k 15 "$tmo" vng --run "$vmlinuz" $accel --user root --cpus 2 \
	"${append[@]}" --memory "$mem" --rw --exec "$inner" </dev/null
vrc=$?
set -e
if [ "$vrc" = 124 ] || [ "$vrc" = 137 ]; then
	echo "vmrun: gave up after ${tmo}s: the VM or the command hung" >&2
	exit 124
fi
if [ ! -s "$rcfile" ]; then
	echo "vmrun: the VM exited ($vrc) without running the command to the end" >&2
	exit 125
fi
exit "$(cat "$rcfile")"
