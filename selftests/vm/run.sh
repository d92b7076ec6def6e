#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM (selftests/run.sh boots it): prepares the guest once,
# then runs each named VM test (selftests/vm/test_NAME.sh) with its own
# timeout, its output in OUT/NAME.log, and appends "STATUS NAME SECONDS
# [NOTE]" to RESULTS as it ends (0 pass, 4 skip, anything else fail; how
# long it took), one whole line at a time: the host reports it from there.
# The kernel's log goes to OUT/kernel.log, under a "== NAME" line for each
# test after it ends ("== boot" first), cleared each time so that each
# test's messages are its own; test_kernel_log.sh (HBM_KLOG) judges it.
#
#   run.sh --out DIR --results FILE NAME...
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../status.sh"
out= results=
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	*) break ;;
	esac
done
[ -n "$out" ] && [ -n "$results" ] || { echo "run.sh: --out and --results required" >&2; exit 2; }
mkdir -p "$out"

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
for m in veth sch_fq sch_htb tcp_dctcp; do
	modprobe -q "$m" || echo "run.sh: no module $m" >&2
done
ip link set lo up
echo "vm: $(uname -r), $(nproc) cpus, RCU stall warning after" \
	"$(cat /sys/module/rcupdate/parameters/rcu_cpu_stall_timeout) s"
export HBM_KLOG=$out/kernel.log
{ echo "== boot"; dmesg -c; } >"$HBM_KLOG" 2>&1

for t in "$@"; do
	log=$out/$t.log
	start=$(date +%s)
	# In the kernel's log too, so that its timestamps place a message
	# within the test's own ("at Ns" in its output, from this line).
	echo "hbm-test: $t starts" >/dev/kmsg
	timeout -k 5 "${TEST_TIMEOUT:-600}" bash "$here/test_$t.sh" >"$log" 2>&1 </dev/null
	st=$?
	secs=$(( $(date +%s) - start ))
	note=
	[ $st = 124 ] && note="timed out after ${TEST_TIMEOUT:-600}s"
	[ "$st" = "$HBM_SKIP" ] && note=$(tail -n 1 "$log")
	echo "$st $t $secs $note" >>"$results"
	echo "vm: test $t: status $st (${secs}s)"
	{ echo "== $t"; dmesg -c; } >>"$HBM_KLOG" 2>&1
	# A test must leave nothing behind for the next one.
	for ns in $(ip netns list | awk '/^hbm-/ { print $1 }'); do
		ip netns del "$ns"
	done
done
exit 0
