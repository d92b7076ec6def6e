#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's log of this VM boot, read last: a WARN, a BUG or an Oops,
# an RCU stall, a soft or hard lockup, a hung task, a sanitizer's report,
# a list or refcount corruption, or a BPF/BTF error fails the run, naming
# the test after which it appeared. selftests/vm/run.sh collects the log
# (HBM_KLOG: "== NAME" before each test's messages, "== boot" first) and
# selftests/run.sh runs this test after all the others, in every boot.
# Run alone it reads the log since boot.
. "$(dirname "$0")/lib.sh"

# What fails a run. An extended regular expression, matched against each
# line by hbm_klog_bad; checked first, through the same function, against
# lines it must and must not match, so that a pattern broken by an edit
# fails here rather than passing everything.
HBM_KLOG_BAD='WARNING:|BUG:|kernel BUG|Oops|general protection fault|'
HBM_KLOG_BAD+='Call Trace:|rcu: INFO|rcu_(sched|preempt) (self-)?detected stall|'
HBM_KLOG_BAD+='detected stalls on CPUs|soft lockup|hard LOCKUP|hung_task|'
HBM_KLOG_BAD+='blocked for more than|UBSAN:|KASAN:|refcount_t:|'
HBM_KLOG_BAD+='list_(add|del) corruption|[]] BPF: |bpf: .*(leak|error|fail)'

# How much of the kernel's report to show after its first line.
HBM_KLOG_AFTER=60

# hbm_klog_bad: the lines of a log on stdin that fail a run, each after
# the name of the section ("== NAME") it is in.
hbm_klog_bad() {
	awk -v re="$HBM_KLOG_BAD" '/^== / { s = $2; next } $0 ~ re { print s ": " $0 }'
}

bad_samples=(
	'[   12.345678] WARNING: CPU: 1 PID: 310 at net/sched/sch_generic.c:525 dev_watchdog+0x1f0/0x200'
	'[    3.000001] BUG: kernel NULL pointer dereference, address: 0000000000000008'
	'[   99.100000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'
	'[  120.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 26s! [bpf-hbm:812]'
	'[  240.000000] INFO: task bpf-hbm:900 blocked for more than 120 seconds.'
	'[   50.000000] refcount_t: underflow; use-after-free.'
	'[   51.000000] BPF: [112] STRUCT hbm_config size=64 vlen=9 Invalid member'
)
good_samples=(
	'[    5.000000] IPv6: ADDRCONF(NETDEV_CHANGE): hbm0: link becomes ready'
	'[    6.000000] hbm1: entered promiscuous mode'
	'[    7.000000] clocksource: Switched to clocksource tsc'
	'[    8.000000] NET: Registered PF_PACKET protocol family'
)
missed=0
for l in "${bad_samples[@]}"; do
	[ -n "$(hbm_klog_bad <<<"$l")" ] || { echo "not matched: $l"; missed=$((missed + 1)); }
done
for l in "${good_samples[@]}"; do
	[ -n "$(hbm_klog_bad <<<"$l")" ] && { echo "matched: $l"; missed=$((missed + 1)); }
done
assert_eq "$missed" 0 "the pattern finds each of ${#bad_samples[@]} bad sample lines and none of ${#good_samples[@]} benign ones" ||
	hbm_done

log=${HBM_KLOG:-}
if [ -z "$log" ]; then
	log=/tmp/hbm-kernel.log
	{ echo "== boot"; dmesg; } >"$log" 2>&1
else
	# Cleared as run.sh clears it, which then finds nothing new to add.
	{ echo "== kernel_log"; dmesg -c; } >>"$log" 2>&1
fi
[ -r "$log" ] || hbm_fatal "no kernel log at $log"
# A log that could not be read is no evidence: the boot always logs.
boot=$(awk '/^== / { s = $2; next } s == "boot" { n++ } END { print n + 0 }' "$log")
assert_ge "$boot" 20 "the boot's kernel messages were read ($boot lines)" ||
	hbm_done
lines=$(grep -vc '^== ' "$log")
found=$(hbm_klog_bad <"$log")
n=0
[ -n "$found" ] && n=$(wc -l <<<"$found")
if [ -n "$found" ]; then
	head -n 40 <<<"$found"
	# The report the first one opens (a stall names its CPU or task and
	# the stack it was in): what a run that cannot be repeated leaves.
	echo "-- the first, with the ${HBM_KLOG_AFTER} lines after it:"
	awk -v re="$HBM_KLOG_BAD" -v n="$HBM_KLOG_AFTER" \
		'/^== / { s = $2; next }
		 !left && !done && $0 ~ re { left = n + 1; done = 1 }
		 left { print s ": " $0; left-- }' "$log"
fi
hbm_report "$lines kernel log lines read, $n of them warnings or errors${found:+, first after $(head -n 1 <<<"$found" | cut -d: -f1)}"
assert_eq "$n" 0 "no WARN, BUG, Oops, stall, lockup, hung task or BPF error in the kernel log"
hbm_done
