#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where class B's rate goes in issue 12's conformance setup (device 1
# Gbit/s, class A 100 Mbit/s, class B 300 Mbit/s, 4 cubic flows each,
# every load started in its tenant's cgroup): the same B measured beside
# variants of A and of the machine, in one VM boot (`make bench-conform`,
# which runs this inside the VM).
#
#   bench/conform.sh [--out DIR] [--time SECONDS] [--repeat N]
#                    [--variants "VARIANT ..."]
#
# Variants, taking turns, N rounds (3):
#   alone     B alone;
#   hogs      B alone beside two busy loops (one per vCPU of the VM): a
#             machine short of CPU for the senders, with no other packets;
#   conform   A and B at once, at the defaults (test_class_rate's setup);
#   unheld    A's class at 1 Gbit/s and each of A's flows app-limited to
#             23 Mbit/s: A's goodput as in conform, its packets not held;
#   a-deep    A's class with mark 2 ms and drop 5 ms: A held, but with a
#             queue deep enough for a larger window (larger skbs);
#   b-deep    B's class with mark 2 ms and drop 5 ms, A at its defaults:
#             whether B's own drops are what it loses;
#   nocredit  conform with `set --late-credit off`.
# Each run reports B's goodput (% of its ceiling), A's, the VM's idle CPU
# over the middle of the run, the skbs each class sent and their mean
# size (bpf-hbm show), the share of each class's packets that waited
# for their departure time, the dequeue's runs per skb sent (a qdisc run
# ends on a dequeue that finds nothing: the fewer, the larger the
# batches), the run time of bpf_hbm's BPF a skb (enqueue, dequeues and
# the ECN marker; the stats' own clock reads included) and as a share of
# the VM's CPU over the run, B's drops (% of its packets) and TCP
# retransmissions. Writes DIR/conform.csv and DIR/conform.md (medians).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
out=$repo/bench/results T=8 R=3
VARIANTS="alone hogs conform unheld a-deep b-deep nocredit"
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--time) T=$2; shift 2 ;;
	--repeat) R=$2; shift 2 ;;
	--variants) VARIANTS=$2; shift 2 ;;
	*) sed -n '10,11p' "$0" >&2; exit 2 ;;
	esac
done
for v in $VARIANTS; do
	case " alone hogs conform unheld a-deep b-deep nocredit " in
	*" $v "*) ;;
	*) echo "conform.sh: no variant '$v'" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
set --
. "$repo/selftests/vm/lib.sh"
. "$here/arrange.sh"

bench_begin || exit 1
# The BPF run counts and times (their clock reads cost each run: on in
# every variant alike).
bpf_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
hbm_veth_setup || hbm_fatal "veth setup"
inA sysctl -qw net.ipv4.tcp_congestion_control=cubic
CG_A=$(hbm_cg a)
CG_B=$(hbm_cg b)
inA "$HBM" attach "$DEV_A" --parent root --rate 1gbit >/dev/null ||
	hbm_fatal "attach"
inA "$HBM" class add "$DEV_A" --cgroup "$CG_A" --rate 100mbit &&
	inA "$HBM" class add "$DEV_A" --cgroup "$CG_B" --rate 300mbit ||
	hbm_fatal "class add"

# class_counts: "A_PACKETS A_BYTES B_PACKETS B_BYTES B_DROPS A_DELAYED
# B_DELAYED" from show, then from the kernel's BPF stats the dequeue's
# runs and the run time of bpf_hbm's programs (qdisc and marker), ns
class_counts() {
	local deq

	deq=$(bpftool -j prog show | jq -er '[.[] | select(.name | test("^hbm_"))] |
		"\([.[] | select(.name == "hbm_dequeue") | .run_cnt // 0] | add) \([.[] | .run_time_ns // 0] | add)"') ||
		return 1
	inA "$HBM" show "$DEV_A" --json | jq -er --arg a "$CG_A" --arg b "$CG_B" '
		.devices[0].classes as $c
		| ($c[] | select(.cgroup == $a) | .stats) as $sa
		| ($c[] | select(.cgroup == $b) | .stats) as $sb
		| "\($sa.packets) \($sa.bytes) \($sb.packets) \($sb.bytes) \($sb.drops.total) \($sa.delayed) \($sb.delayed) '"$deq"'"'
}
cset() {
	inA "$HBM" class set "$DEV_A" --cgroup "$@" >/dev/null ||
		hbm_fatal "class set $*"
}
# The variant's settings, and back to the defaults after it.
setup() {
	case $1 in
	unheld) cset "$CG_A" --rate 1gbit ;;
	a-deep) cset "$CG_A" --rate 100mbit --mark 2ms --drop 5ms ;;
	b-deep) cset "$CG_B" --rate 300mbit --mark 2ms --drop 5ms ;;
	nocredit) inA "$HBM" set "$DEV_A" --late-credit off >/dev/null ||
		hbm_fatal "set --late-credit off" ;;
	esac
}
reset() {
	cset "$CG_A" --rate 100mbit --mark 50us --drop 500us
	cset "$CG_B" --rate 300mbit --mark 50us --drop 500us
	inA "$HBM" set "$DEV_A" --late-credit on >/dev/null ||
		hbm_fatal "set --late-credit on"
}

# run VARIANT ROUND: one run, a CSV line on stdout
run() {
	local v=$1 rep=$2 hogs=() pids=() aargs=() c0 c1 i0 t0 i1 t1 ga=0 gb rb

	setup "$v"
	if [ "$v" = hogs ]; then
		for _ in 1 2; do
			(while :; do :; done) &
			hogs+=($!)
		done
	fi
	[ "$v" = unheld ] && aargs=(-b 23M)
	read -r -a c0 < <(class_counts) || hbm_fatal "show: no class counters"
	case $v in alone | hogs) ;; *)
		hbm_cg_iperf_start "$CG_A" 5201 "/tmp/conform.a" "$T" -P 4 \
			"${aargs[@]}"
		pids+=($!) ;;
	esac
	hbm_cg_iperf_start "$CG_B" 5202 "/tmp/conform.b" "$T" -P 4
	pids+=($!)
	sleep 2
	read -r i0 t0 < <(cpu_ticks)
	sleep $((T - 4))
	read -r i1 t1 < <(cpu_ticks)
	wait "${pids[@]}"
	[ ${#hogs[@]} -gt 0 ] && { kill "${hogs[@]}"; wait "${hogs[@]}" 2>/dev/null; }
	read -r -a c1 < <(class_counts) || hbm_fatal "show: no class counters"
	reset
	gb=$(hbm_iperf_result /tmp/conform.b) ||
		hbm_fatal "iperf3 of B: $(tail -n 5 /tmp/conform.b)"
	rb=$(jq -er '.end.sum_sent.retransmits' /tmp/conform.b) ||
		hbm_fatal "iperf3 of B: no retransmits"
	if [ ${#pids[@]} = 2 ]; then
		ga=$(hbm_iperf_result /tmp/conform.a) ||
			hbm_fatal "iperf3 of A: $(tail -n 5 /tmp/conform.a)"
	fi
	awk -v v="$v" -v rep="$rep" -v ga="$ga" -v gb="$gb" -v rb="$rb" \
		-v idle=$((100 * (i1 - i0) / (t1 - t0))) -v e="$HBM_TCP_EFF" \
		-v ap=$((c1[0] - c0[0])) -v ab=$((c1[1] - c0[1])) \
		-v bp=$((c1[2] - c0[2])) -v bb=$((c1[3] - c0[3])) \
		-v bd=$((c1[4] - c0[4])) -v ad=$((c1[5] - c0[5])) \
		-v bl=$((c1[6] - c0[6])) -v dq=$((c1[7] - c0[7])) \
		-v bt=$((c1[8] - c0[8])) -v cpus="$(nproc)" -v t="$T" 'BEGIN {
		printf "%s,%d,%.1f,%.1f,%.1f,%.1f,%d,%d,%d,%d,%d,%.2f,%d,%.1f,%.1f,%.2f,%.1f,%.1f\n",
			v, rep, ga, 100 * ga / (100 * e), gb, 100 * gb / (300 * e),
			idle, ap, ap ? ab / ap : 0, bp, bp ? bb / bp : 0,
			bp + bd ? 100 * bd / (bp + bd) : 0, rb,
			ap ? 100 * ad / ap : 0, bp ? 100 * bl / bp : 0,
			ap + bp ? dq / (ap + bp) : 0,
			ap + bp ? bt / (ap + bp) / 1000 : 0,
			100 * bt / (t * cpus * 1e9) }'
}

csv=$out/conform.csv
echo "variant,rep,a_mbps,a_pct,b_mbps,b_pct,cpu_idle_pct,a_skbs,a_skb_bytes,b_skbs,b_skb_bytes,b_drops_pct,b_retrans,a_delayed_pct,b_delayed_pct,dequeues_per_pkt,bpf_us_per_pkt,bpf_cpu_pct" >"$csv"
for ((rep = 1; rep <= R; rep++)); do
	for v in $VARIANTS; do
		line=$(run "$v" "$rep") || exit 1
		echo "$line" >>"$csv"
		echo "conform: $line" >&2
	done
done

col() {
	local m

	m=$(awk -F, -v v="$1" -v c="$2" 'NR > 1 && $1 == v { print $c }' "$csv" | median)
	echo "${m:--}"
}
range() { awk -F, -v v="$1" -v c="$2" 'NR > 1 && $1 == v { if (n++ == 0 || $c < lo) lo = $c; if ($c > hi) hi = $c } END { print lo "-" hi }' "$csv"; }
{
	echo "Medians of $R runs ($T s each; B's goodput: the runs' range too)."
	echo
	echo "| variant | B goodput, % of ceiling | A goodput, % | CPU idle | A skbs (mean bytes) | B skbs (mean bytes) | A, B delayed | dequeues a skb | BPF a skb, us (% of CPU) | B drops | B retransmits |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	for v in $VARIANTS; do
		echo "| $v | $(col "$v" 6) ($(range "$v" 6)) | $(col "$v" 4) | $(col "$v" 7)% | $(col "$v" 8) ($(col "$v" 9)) | $(col "$v" 10) ($(col "$v" 11)) | $(col "$v" 14)%, $(col "$v" 15)% | $(col "$v" 16) | $(col "$v" 17) ($(col "$v" 18)%) | $(col "$v" 12)% | $(col "$v" 13) |"
	done
} >"$out/conform.md"
cat "$out/conform.md"
# The qdisc goes before the load, which unloads only what nothing uses.
inA tc qdisc del dev "$DEV_A" root 2>/dev/null
hbm_cleanup
sysctl -qw kernel.bpf_stats_enabled="$bpf_stats"
bench_end
