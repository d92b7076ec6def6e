#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The HBM-EDT result table for bpf_hbm vs htb vs fq+EDT, side by side in one
# VM boot (`make bench`, which runs this inside the VM).
#
#   bench/run.sh [--quick] [--out DIR] [--time SECONDS] [--repeat N]
#                [--arrs "ARR ..."] [--ccs "CC ..."] [--flows "N ..."]
#                [--rates "MBPS ..."] [--cost-arrs "ARR ..."]
#                [--progress FILE] [--dry-run]
#
# The options after --repeat narrow the run to some rows or arrangements
# (bench/arrange.sh names, e.g. hbm:nocn); an empty --cost-arrs skips the
# cost runs. After each run, a line on how far it is (bench/progress.sh:
# "bench: [12/48] fqedt cubic 2 flows 200mbit rep 3/3: 14s, 5m in, ~9m
# left") goes to stderr, or to FILE (make bench follows it from the host:
# scripts/follow.sh). --dry-run runs nothing and writes nothing but those
# lines, for every run the options make (no VM needed).
#
# Workload, as in HBM's tables: back-to-back RPCs from A to B over a veth
# pair, one 10 KB RPC flow plus (flows - 1) 1 MB RPC flows (bench/rpc.c,
# per-RPC latency from the sender's first byte to the receiver's answer).
# Arrangements: bpf_hbm; htb (one class, rate = ceil = limit); fq with
# bench/edt_stamp.bpf.c at tc egress (HBM-EDT's aggregate clock, the seed's
# "-edt"); and the unshaped veth, whose capacity is measured first. The
# repeats of a configuration alternate between arrangements, so that what
# else the host does falls on all of them alike.
# Then the cost: the packet rate each arrangement forwards with its limit
# far above capacity (64-byte UDP frames from bench/flood.c over 1, 1k and
# 10k flows), against plain fq; "floor", a BPF qdisc that does next to
# nothing (bench/floor_qdisc.bpf.c), is what any BPF qdisc pays.
# Writes DIR/results.csv and DIR/cost.csv (every run), DIR/table.md
# (medians, min-max spread, ratios), DIR/*.png (bench/plot.sh) and
# DIR/meta.txt (command, kernel, VM, date).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
quick=0 out=$repo/bench/results T=6 R=3 dry=0 progress=
declare -A narrow=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--out) out=$2; shift 2 ;;
	--time) T=$2; shift 2 ;;
	--repeat) R=$2; shift 2 ;;
	--progress) progress=$2; shift 2 ;;
	--dry-run) dry=1; shift ;;
	--arrs|--ccs|--flows|--rates|--cost-arrs)
		[ $# -ge 2 ] || { sed -n '7,10p' "$0" >&2; exit 2; }
		narrow[$1]=$2; shift 2 ;;
	*) sed -n '7,10p' "$0" >&2; exit 2 ;;
	esac
done
if [ $quick = 1 ]; then
	T=2 R=1
	ARRS="hbm htb fqedt" CCS="cubic" FLOWS="2" RATES="200"
	COST_ARRS="fq hbm" COST_FLOWS="1000" COST_T=2
else
	ARRS="hbm htb fqedt" CCS="cubic dctcp" FLOWS="2 4" RATES="200 1000"
	COST_ARRS="fq hbm htb fqedt none floor" COST_FLOWS="1 1000 10000" COST_T=3
fi
[ -v "narrow[--arrs]" ] && ARRS=${narrow[--arrs]}
[ -v "narrow[--ccs]" ] && CCS=${narrow[--ccs]}
[ -v "narrow[--flows]" ] && FLOWS=${narrow[--flows]}
[ -v "narrow[--rates]" ] && RATES=${narrow[--rates]}
[ -v "narrow[--cost-arrs]" ] && COST_ARRS=${narrow[--cost-arrs]}
COST_RATE=100000	# Mbit/s: far above what the VM forwards
set -- # lib.sh reads $0 only
. "$repo/selftests/vm/lib.sh"
NS_A=hbm-bench-a NS_B=hbm-bench-b
. "$here/arrange.sh"
. "$here/progress.sh"

meta=$out/meta.txt csv=$out/results.csv cost_csv=$out/cost.csv
if [ $dry = 1 ]; then
	PROGRESS_DRY=1 meta=/dev/null csv=/dev/null cost_csv=/dev/null
else
	mkdir -p "$out"
	bench_begin || exit 1
fi
# Where the host cannot see FILE (OUTPUT outside the repository), stderr.
if [ -n "$progress" ] && ! touch "$progress" 2>/dev/null; then
	echo "bench: cannot write $progress: progress on stderr" >&2
	progress=
fi
PROGRESS_FILE=$progress
nwords() { echo $#; }
progress_begin
progress_kind rpc $(( R + $(nwords $RATES) * $(nwords $FLOWS) * \
	$(nwords $CCS) * R * $(nwords $ARRS) )) "$T"
progress_kind cost $(( $(nwords $COST_FLOWS) * R * $(nwords $COST_ARRS) )) \
	"$COST_T"

kv() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

# one ARR CC FLOWS RATE REP: a run, one CSV row
one() {
	local arr=$1 cc=$2 flows=$3 rate=$4 rep=$5 ecn=0 i c0 c1 res
	[ "$cc" = dctcp ] && ecn=1
	hbm_veth_setup || return 1
	inA sysctl -qw net.ipv4.tcp_ecn=$ecn
	inB sysctl -qw net.ipv4.tcp_ecn=$ecn
	# The server's listener takes B's default: a DCTCP SYN is ECN-capable,
	# and only a listener that needs ECN (dctcp) negotiates it for it.
	inB sysctl -qw net.ipv4.tcp_congestion_control="$cc" ||
		{ echo "bench: couldn't set $cc in B" >&2; errors=$((errors + 1)); }
	rm -f /tmp/bench.*
	arrange "$arr" "$rate" || { echo "bench: couldn't arrange $arr" >&2; hbm_cleanup; return 1; }
	inB "$HBM_TOOLS/rpc" server -p 7300 &
	sleep 0.3
	c0=$(counters "$arr")
	inA "$HBM_TOOLS/rpc" client -d "$ADDR_B" -p 7300 -s 10000 -t "$T" \
		-c "$cc" >"/tmp/bench.0" &
	for i in $(seq 1 $((flows - 1))); do
		inA "$HBM_TOOLS/rpc" client -d "$ADDR_B" -p 7300 -s 1000000 \
			-t "$T" -c "$cc" >"/tmp/bench.$i" &
	done
	wait $(jobs -p | tail -n "$flows")
	c1=$(counters "$arr")
	if ! [[ "$c0 $c1" =~ ^[0-9]+\ [0-9]+\ [0-9]+\ [0-9]+\ [0-9]+\ [0-9]+$ ]]; then
		echo "bench: bad counters from $arr: '$c0' -> '$c1'" >&2
		errors=$((errors + 1))
	fi
	small=$(cat /tmp/bench.0)
	big=$(cat /tmp/bench.[1-9] 2>/dev/null)
	awk -v arr="$arr" -v cc="$cc" -v fl="$flows" -v rate="$rate" \
	    -v rep="$rep" -v c0="$c0" -v c1="$c1" -v small="$small" \
	    -v big="$big" '
	function kv(s, k,   n, i, a, b) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) { split(a[i], b, "="); if (b[1] == k) return b[2] }
		return 0
	}
	BEGIN {
		split(c0, x, " "); split(c1, y, " ")
		pk = y[1] - x[1]; dr = y[2] - x[2]; ce = y[3] - x[3]
		nb = split(big, lines, "\n")
		bm = 0; b90 = 0; b99 = 0; rtt = kv(small, "srtt_us"); nr = 1
		for (i = 1; i <= nb; i++) {
			if (lines[i] == "") continue
			bm += kv(lines[i], "mbps"); b90 += kv(lines[i], "p90_us")
			b99 += kv(lines[i], "p99_us"); rtt += kv(lines[i], "srtt_us"); nr++
		}
		nbig = nr - 1
		aggr = kv(small, "mbps") + bm
		printf "%s,%s,%d,%d,%d,%.1f,%.1f,%.3f,%.2f,%d,%.1f,%d,%d,%d,%.1f,%.2f,%.2f\n",
			arr, cc, fl, rate, rep, aggr, 100 * aggr / rate,
			pk + dr ? 100 * dr / (pk + dr) : 0, pk ? 100 * ce / pk : 0,
			rtt / nr, kv(small, "mbps"), kv(small, "p50_us"),
			kv(small, "p90_us"), kv(small, "p99_us"),
			nbig ? bm / nbig : 0, nbig ? b90 / nbig / 1000 : 0,
			nbig ? b99 / nbig / 1000 : 0
	}'
	hbm_cleanup
	unarrange
}

{
	echo "command: make bench${QUICK:+ QUICK=1} (bench/run.sh $([ $quick = 1 ] && echo --quick) --time $T --repeat $R${narrow[*]:+, narrowed to arrangements '$ARRS', cc '$CCS', flows '$FLOWS', rates '$RATES', cost '$COST_ARRS'})"
	echo "kernel: $(uname -r)"
	echo "vm: $(nproc) vCPUs, $(awk '/MemTotal/ { print $2 " kB" }' /proc/meminfo), $(grep -qw hypervisor /proc/cpuinfo && echo "QEMU ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'))")"
	echo "date: $(date -u +%FT%TZ)"
} >"$meta"

errors=0
echo "arrangement,cc,flows,limit_mbps,rep,aggr_mbps,pct_of_limit,drops_pct,ce_pct,rtt_us,rpc10k_mbps,rpc10k_p50_us,rpc10k_p90_us,rpc10k_p99_us,rpc1m_mbps,rpc1m_p90_ms,rpc1m_p99_ms" >"$csv"

# Capacity first: the same workload unshaped, at the largest rate.
for rep in $(seq 1 "$R"); do
	progress_run rpc "none cubic 4 flows ${RATES##* }mbit rep $rep/$R (capacity)" \
		one none cubic 4 "${RATES##* }" "$rep" >>"$csv"
done
echo "capacity (unshaped, 4 RPC flows): $(awk -F, '$1 == "none" { print $6 }' "$csv" | sort -n | tr '\n' ' ')Mbit/s" >>"$meta"

for rate in $RATES; do
	for flows in $FLOWS; do
		for cc in $CCS; do
			for rep in $(seq 1 "$R"); do
				for arr in $ARRS; do
					progress_run rpc "$arr $cc $flows flows ${rate}mbit rep $rep/$R" \
						one "$arr" "$cc" "$flows" "$rate" "$rep" >>"$csv"
				done
			done
		done
	done
done

# cost ARR FLOWS REP: one flood through ARR, one cost.csv row
cost() {
	local arr=$1 flows=$2 rep=$3 rx0 rx1 c0 c1 res
	hbm_veth_setup || return 1
	arrange "$arr" "$COST_RATE" || {
		echo "bench: couldn't arrange $arr" >&2
		errors=$((errors + 1))
		hbm_cleanup
		return 1
	}
	rx0=$(inB cat "/sys/class/net/$DEV_B/statistics/rx_packets")
	c0=$(counters "$arr")
	res=$(inA "$HBM_TOOLS/flood" -s "$ADDR_A" -d "$ADDR_B" -f "$flows" \
		-t "$COST_T")
	sleep 0.2	# what was queued arrives
	rx1=$(inB cat "/sys/class/net/$DEV_B/statistics/rx_packets")
	c1=$(counters "$arr")
	set -- $c0 $c1
	if ! [[ "$res" =~ pps=([0-9]+) ]] || [ $# != 6 ]; then
		echo "bench: flood through $arr: '$res', counters '$c0' -> '$c1'" >&2
		errors=$((errors + 1))
	fi
	echo "$arr,$flows,$rep,${BASH_REMATCH[1]:-0},$(( (rx1 - rx0) / COST_T )),$(($5 - $2))"
	hbm_cleanup
	unarrange
}

echo "arrangement,flows,rep,sent_pps,rx_pps,drops" >"$cost_csv"
for flows in $COST_FLOWS; do
	for rep in $(seq 1 "$R"); do
		for arr in $COST_ARRS; do
			progress_run cost "cost $arr $flows flows rep $rep/$R" \
				cost "$arr" "$flows" "$rep" >>"$cost_csv"
		done
	done
done
progress_end
[ $dry = 1 ] && exit 0

bench_end || { echo "bench: couldn't unload bpf_hbm" >&2; errors=$((errors + 1)); }
"$here/table.sh" "$csv" "$cost_csv" >"$out/table.md"
if [ -n "$COST_ARRS" ]; then
	"$here/plot.sh" "$out" || errors=$((errors + 1))
fi
cat "$out/meta.txt" "$out/table.md"
[ "$errors" = 0 ] || { echo "bench: $errors runs had errors" >&2; exit 1; }
