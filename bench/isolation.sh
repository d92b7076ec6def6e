#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where class B's 10 KB RPC tail goes while A is loaded, in issue 12's
# isolation setup (device 1 Gbit/s, B's class 100 Mbit/s, netperf TCP_RR
# with 10 KB requests and 1-byte answers started in B's cgroup), in one VM
# boot (`make bench-isolation`, which runs this inside the VM):
#
#   bench/isolation.sh [--out DIR] [--time SECONDS] [--repeat N]
#
# Variants of A's load, 8 cubic flows started in A's cgroup, each one
# preceded by a run with A idle, N rounds (3):
#   held     A's class at 200 Mbit/s holds them (test_class_rate's setup);
#   unheld   A without a class, each flow app-limited to 25 Mbit/s: the
#            same packets through the same qdisc, not held for their time;
#   lo       the same app-limited flows over loopback inside A's
#            namespace: the same load on the VM's TCP stacks and CPU, no
#            veth and no qdisc on its path.
# Each run reports B's RR P99 (us), A's goodput and the VM's idle CPU over
# the RR's run. Writes DIR/isolation.csv (every run) and DIR/isolation.md
# (medians, and each variant's P99 over the median P99 with A idle).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
out=$repo/bench/results T=7 R=3
VARIANTS="held unheld lo"
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--time) T=$2; shift 2 ;;
	--repeat) R=$2; shift 2 ;;
	*) sed -n '9p' "$0" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
set --
. "$repo/selftests/vm/lib.sh"
. "$here/arrange.sh"

bench_begin || exit 1
hbm_veth_setup || hbm_fatal "veth setup"
inA sysctl -qw net.ipv4.tcp_congestion_control=cubic
inA ip link set lo up
CG_A=$(hbm_cg a)
CG_B=$(hbm_cg b)
inA "$HBM" attach "$DEV_A" --parent root --rate 1gbit >/dev/null ||
	hbm_fatal "attach"
inA "$HBM" class add "$DEV_A" --cgroup "$CG_B" --rate 100mbit ||
	hbm_fatal "class add B"
inB netserver -p 12865 >/dev/null 2>&1

# a_start VARIANT: A's 8 flows for the RR's run and a little more
a_start() {
	local t=$((T + 2))

	case $1 in
	held)
		inA "$HBM" class add "$DEV_A" --cgroup "$CG_A" --rate 200mbit \
			>/dev/null || hbm_fatal "class add A"
		hbm_cg_iperf_start "$CG_A" 5201 /tmp/isolation.a "$t" -P 8 ;;
	unheld)
		hbm_cg_iperf_start "$CG_A" 5201 /tmp/isolation.a "$t" -P 8 \
			-b 25M ;;
	lo)
		inA iperf3 -s -1 -D -p 5301 >/dev/null 2>&1
		sleep 0.3
		hbm_in_cg "$CG_A" iperf3 -c 127.0.0.1 -p 5301 -t "$t" -O 1 -J \
			-P 8 -b 25M >/tmp/isolation.a 2>&1 & ;;
	esac
}

# run VARIANT ROUND: one run (idle: A idle), a CSV line on stdout
run() {
	local v=$1 rep=$2 p i0 t0 i1 t1 ga=0

	[ "$v" = idle ] || { a_start "$v"; sleep 1.5; }
	read -r i0 t0 < <(cpu_ticks)
	p=$(hbm_rr_p99 "$CG_B" "$T") || exit 1
	read -r i1 t1 < <(cpu_ticks)
	if [ "$v" != idle ]; then
		wait
		ga=$(hbm_iperf_result /tmp/isolation.a) ||
			hbm_fatal "iperf3 of A: $(tail -n 5 /tmp/isolation.a)"
		ga=$(printf '%.1f' "$ga")
		[ "$v" = held ] && { inA "$HBM" class del "$DEV_A" \
			--cgroup "$CG_A" >/dev/null || hbm_fatal "class del A"; }
	fi
	echo "$v,$rep,$p,$ga,$((100 * (i1 - i0) / (t1 - t0)))"
}

csv=$out/isolation.csv
echo "variant,rep,b_rr_p99_us,a_mbps,cpu_idle_pct" >"$csv"
for ((rep = 1; rep <= R; rep++)); do
	for v in $VARIANTS; do
		for w in idle "$v"; do
			line=$(run "$w" "$rep") || exit 1
			echo "$line" >>"$csv"
			echo "isolation: $line" >&2
		done
	done
done

col() { awk -F, -v v="$1" -v c="$2" 'NR > 1 && $1 == v { print $c }' "$csv" | median; }
runs() { awk -F, -v v="$1" 'NR > 1 && $1 == v { printf "%s%s", n++ ? ", " : "", $3 }' "$csv"; }
idle=$(col idle 3)
{
	echo "Medians of $R runs of each load and of the runs with A idle before each ($T s each); the ratio is the median P99 over the median with A idle ($idle us)."
	echo
	echo "| A's load | B's RR P99, us (runs) | over A idle | A goodput, Mbit/s | CPU idle |"
	echo "|---|---|---|---|---|"
	echo "| idle | $idle ($(runs idle)) | 1.00x | - | $(col idle 5)% |"
	for v in $VARIANTS; do
		echo "| $v | $(col "$v" 3) ($(runs "$v")) | $(awk -v p="$(col "$v" 3)" -v i="$idle" 'BEGIN { printf "%.2fx", p / i }') | $(col "$v" 4) | $(col "$v" 5)% |"
	done
} >"$out/isolation.md"
cat "$out/isolation.md"
inA tc qdisc del dev "$DEV_A" root 2>/dev/null
hbm_cleanup
bench_end
