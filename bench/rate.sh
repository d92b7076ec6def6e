#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the rate goes: bulk TCP goodput through each arrangement at its
# defaults and with the variants that isolate one cause each, side by side
# in one VM boot (`make bench-rate`, which runs this inside the VM).
#
#   bench/rate.sh [--out DIR] [--time SECONDS] [--repeat N]
#                 [--rates "100 200 500"] [--arrs "ARR ..."]
#                 [--dctcp-arrs "ARR ..."]
#
# For each rate (Mbit/s), flow count (1, 4) and arrangement (bench/arrange.sh
# names, e.g. hbm:fixed:nocn), one iperf3 run of SECONDS from A to B with a
# ping beside it: goodput as a percentage of the TCP ceiling (rate x
# 1448/1514), the median ping RTT under load and idle, and for bpf_hbm its
# own counters: drops, CN, the mean skb size (TSO sizing), and
# the release lateness of its watchdog (p50/p90/p99 from its histogram, and
# the idle credit it ended with). cubic for every arrangement, then DCTCP
# with ECN at both ends for the --dctcp-arrs. Each configuration runs N
# times (1), the arrangements taking turns; the table shows medians.
# Writes DIR/rate.csv (every run) and DIR/rate.md (the table).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
out=$repo/bench/results T=5 R=1 RATES="100 200 500"
ARRS="hbm hbm:fixed hbm:fixed:nocn hbm:fixed:burst=2ms fqedt htb"
DCTCP_ARRS="hbm hbm:fixed fqedt htb"
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--time) T=$2; shift 2 ;;
	--repeat) R=$2; shift 2 ;;
	--rates) RATES=$2; shift 2 ;;
	--arrs) ARRS=$2; shift 2 ;;
	--dctcp-arrs) DCTCP_ARRS=$2; shift 2 ;;
	*) sed -n '7,9p' "$0" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
set --
. "$repo/selftests/vm/lib.sh"
NS_A=hbm-rate-a NS_B=hbm-rate-b
. "$here/arrange.sh"

bench_begin || exit 1

# ping_ms COUNT: median RTT of COUNT pings 0.2 s apart, in ms
ping_ms() {
	inA ping -n -i 0.2 -c "$1" "$ADDR_B" 2>/dev/null |
		sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' | median
}

errors=0
# run ARR CC FLOWS RATE REP: one CSV row
run() {
	local arr=$1 cc=$2 flows=$3 rate=$4 rep=$5 ecn=0 idle g pid load j
	local st="" pk=0 dr=0 cn=0 ce=0 skb=0 p50="" p90="" p99="" credit=""

	[ "$cc" = dctcp ] && ecn=1
	hbm_veth_setup || return 1
	inA sysctl -qw net.ipv4.tcp_ecn=$ecn
	inB sysctl -qw net.ipv4.tcp_ecn=$ecn
	inA sysctl -qw net.ipv4.tcp_congestion_control="$cc"
	inB sysctl -qw net.ipv4.tcp_congestion_control="$cc"
	arrange "$arr" "$rate" ||
		{ echo "rate: couldn't arrange $arr" >&2; hbm_cleanup; return 1; }
	idle=$(ping_ms 5)
	inA ping -n -i 0.2 -c $((T * 5)) "$ADDR_B" >/tmp/rate.ping 2>&1 &
	pid=$!
	g=$(hbm_iperf "$T" -P "$flows")
	wait "$pid"
	load=$(sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' /tmp/rate.ping | median)
	if [ "${arr%%:*}" = hbm ]; then
		j=$(inA "$HBM" show "$DEV_A" --json)
		st=$(echo "$j" | jq -r '.devices[0] | [.stats.packets,
			.drops.total, .stats.cn, .stats.ce,
			(if .stats.packets > 0 then .stats.bytes / .stats.packets
			 | floor else 0 end), .lateness.p50_ns / 1000,
			.lateness.p90_ns / 1000, .lateness.p99_ns / 1000,
			.lateness.credit_ns / 1000] | @tsv')
		read -r pk dr cn ce skb p50 p90 p99 credit <<<"$st"
		[ -n "$credit" ] || { echo "rate: no counters from $arr" >&2; errors=$((errors + 1)); }
	else
		read -r pk dr ce <<<"$(counters "$arr")"
	fi
	if [ -z "$g" ] || [ "$g" = 0 ] || [ -z "$load" ]; then
		echo "rate: $arr $cc ${rate}M x$flows: no goodput ('$g') or ping ('$load')" >&2
		errors=$((errors + 1))
	fi
	printf '%s,%s,%s,%s,%s,%.1f,%s,%s,%s,%.2f,%s,%s,%s,%s,%s,%s,%s\n' \
		"$arr" "$cc" "$rate" "$flows" "$rep" "${g:-0}" \
		"$(hbm_pct_of_ceiling "${g:-0}" "$rate")" "$idle" "$load" \
		"$(awk -v d="$dr" -v p="$pk" 'BEGIN { print p + d ? 100 * d / (p + d) : 0 }')" \
		"$cn" "$ce" "$skb" "$p50" "$p90" "$p99" "$credit"
	hbm_cleanup
	unarrange
}

csv=$out/rate.csv
echo "arrangement,cc,rate_mbps,flows,rep,goodput_mbps,pct_of_ceiling,ping_idle_ms,ping_load_ms,drops_pct,cn,ce,skb_bytes,late_p50_us,late_p90_us,late_p99_us,credit_us" >"$csv"
for rate in $RATES; do
	for flows in 1 4; do
		for rep in $(seq 1 "$R"); do
			for arr in $ARRS; do
				run "$arr" cubic "$flows" "$rate" "$rep" >>"$csv"
			done
		done
		for rep in $(seq 1 "$R"); do
			for arr in $DCTCP_ARRS; do
				run "$arr" dctcp "$flows" "$rate" "$rep" >>"$csv"
			done
		done
	done
done
bench_end || { echo "rate: couldn't unload bpf_hbm" >&2; errors=$((errors + 1)); }

# The table: goodput % of ceiling (ping under load), one column per
# arrangement; then bpf_hbm's own view of each of its runs.
{
	echo "command: make bench-rate (bench/rate.sh --time $T --repeat $R), kernel $(uname -r), $(date -u +%FT%TZ)"
	echo
	echo "Goodput, % of the TCP ceiling (median ping RTT under load; idle: $(awk -F, 'NR > 1 { print $8 }' "$csv" | median) ms), medians of $R:"
	echo
	awk -F, "$(<"$here/stats.awk")"'NR > 1 {
		row = $2 " " $3 "M x" $4
		if (!(row in seen)) { seen[row] = 1; rows[++nr] = row }
		if (!(($1) in cseen)) { cseen[$1] = 1; cols[++nc] = $1 }
		k = row SUBSEP $1
		n[k]++; pct[k, n[k]] = $7; png[k, n[k]] = $9
	} END {
		for (k in n) {
			for (i = 1; i <= n[k]; i++) { a[i] = pct[k, i]; b[i] = png[k, i] }
			cell[k] = sprintf("%.1f%% (%.2f ms)", median_of(a, n[k]), median_of(b, n[k]))
			delete a; delete b
		}
		printf "| cc, rate, flows |"
		for (c = 1; c <= nc; c++) printf " %s |", cols[c]
		printf "\n|---|"
		for (c = 1; c <= nc; c++) printf "---|"
		printf "\n"
		for (r = 1; r <= nr; r++) {
			printf "| %s |", rows[r]
			for (c = 1; c <= nc; c++)
				printf " %s |", ((rows[r], cols[c]) in cell) ? cell[rows[r], cols[c]] : "-"
			printf "\n"
		}
	}' "$csv"
	echo
	echo "| arrangement | cc, rate, flows | run | goodput | drops | CN | skb bytes | lateness p50/p90/p99 (us, bucket bounds) | credit at end (us) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	awk -F, 'NR > 1 && $1 ~ /^hbm/ {
		printf "| %s | %s %sM x%s | %s | %s%% | %s%% | %s | %s | %s/%s/%s | %.0f |\n",
			$1, $2, $3, $4, $5, $7, $10, $11, $13, $14, $15, $16, $17
	}' "$csv"
} >"$out/rate.md"
cat "$out/rate.md"
[ "$errors" = 0 ] || { echo "rate: $errors runs had errors" >&2; exit 1; }
