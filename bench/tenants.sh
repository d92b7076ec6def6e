#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Tenant isolation with per-cgroup classes: bpf_hbm's classes against htb
# classes chosen by cgroup (bench/cgroup_cls.bpf.c), side by side in one VM
# boot (`make bench-tenants`, which runs this inside the VM).
#
#   bench/tenants.sh [--out DIR] [--time SECONDS] [--repeat N]
#
# Two tenants, A and B, are cgroups; every load is started by a process
# placed in its tenant's cgroup (cubic TCP from A's namespace to B's):
#   iso    device 1 Gbit/s, A 200 Mbit/s with 8 bulk flows, B 100 Mbit/s
#          with 1 bulk flow: only the classes limit;
#   share  device 300 Mbit/s, A = B = 200 Mbit/s, 4 bulk flows each: the
#          device limits the sum;
#   conform  device 1 Gbit/s, A 100 Mbit/s and B 300 Mbit/s, 4 bulk flows
#          each and nothing else: issue 12's conformance setup
#          (test_class_rate), the rate each class gets.
# In iso and share, B also runs 10 KB requests with 1-byte answers
# (netperf TCP_RR) beside its bulk flow(s), first alone (nothing else
# running) and then with the bulk load: its P99 latency, the bulk goodput
# of each tenant and the drops (% of the packets the qdisc handled).
# Arrangements:
#   hbm  bpf-hbm attach --rate D, then class add A and B at their rates;
#        every other setting at its default.
#   htb  a root class at D (rate = ceil), a leaf per tenant with ceil = its
#        rate and rate = its share of D (its rate, scaled down when the
#        tenants' rates add up to more than D: the guarantees an operator
#        can honour), a default leaf for the rest; the leaves keep htb's
#        default queue. The classifier maps cgroup ids to leaves.
# Each configuration runs N times (3), the arrangements taking turns; the
# table shows medians. Writes DIR/tenants.csv and DIR/tenants.md.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
out=$repo/bench/results T=6 R=3 ARRS="hbm htb"
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--time) T=$2; shift 2 ;;
	--repeat) R=$2; shift 2 ;;
	--arrs) ARRS=$2; shift 2 ;;
	*) sed -n '8p' "$0" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
set --
. "$repo/selftests/vm/lib.sh"
. "$here/arrange.sh"

# bpffs names may not contain dots.
CLS=/sys/fs/bpf/hbm_bench_cls
CLS_MAPS=/sys/fs/bpf/hbm_bench_cls_maps

bench_begin || exit 1
CG_A=$(hbm_cg a)
CG_B=$(hbm_cg b)
inB_netserver() { inB netserver -p 12865 >/dev/null 2>&1; }

# cpu_idle SECONDS: the VM's idle CPU over SECONDS, in % of all its CPUs
# (the load's cost: a shaper that keeps queues short makes TCP send
# smaller skbs, more of them)
cpu_idle() {
	local i0 t0 i1 t1

	read -r i0 t0 < <(cpu_ticks)
	sleep "$1"
	read -r i1 t1 < <(cpu_ticks)
	echo $((100 * (i1 - i0) / (t1 - t0)))
}


# le_hex VALUE BYTES: VALUE as little-endian hex bytes, as bpftool takes them
le_hex() {
	local i s=""

	for ((i = 0; i < $2; i++)); do
		s+=$(printf '%02x ' $((($1 >> (8 * i)) & 0xff)))
	done
	echo "$s"
}

# tenants ARR D RA RB: shape A's egress for the two tenants
tenants() {
	local d=$2 ra=$3 rb=$4 sa sb cg id cid

	case $1 in
	hbm)
		inA "$HBM" attach "$DEV_A" --parent root --rate "${d}mbit" \
			>/dev/null &&
		inA "$HBM" class add "$DEV_A" --cgroup "$CG_A" \
			--rate "${ra}mbit" &&
		inA "$HBM" class add "$DEV_A" --cgroup "$CG_B" \
			--rate "${rb}mbit" ;;
	htb)
		read -r sa sb <<<"$(awk -v d="$d" -v a="$ra" -v b="$rb" 'BEGIN {
			f = (a + b > d) ? d / (a + b) : 1
			printf "%d %d", a * f, b * f }')"
		rm -rf "$CLS" "$CLS_MAPS"
		inA tc qdisc add dev "$DEV_A" root handle 1: htb default 30 &&
		inA tc class add dev "$DEV_A" parent 1: classid 1:1 htb \
			rate "${d}mbit" ceil "${d}mbit" 2>/dev/null &&
		inA tc class add dev "$DEV_A" parent 1:1 classid 1:10 htb \
			rate "${sa}mbit" ceil "${ra}mbit" 2>/dev/null &&
		inA tc class add dev "$DEV_A" parent 1:1 classid 1:20 htb \
			rate "${sb}mbit" ceil "${rb}mbit" 2>/dev/null &&
		inA tc class add dev "$DEV_A" parent 1:1 classid 1:30 htb \
			rate 1mbit ceil "${d}mbit" 2>/dev/null &&
		bpftool prog load "$repo/build/cgroup_cls.bpf.o" "$CLS" \
			type classifier pinmaps "$CLS_MAPS" || return 1
		# The classifier writes the minor (tc_classid is 16 bits); the
		# filter's classid gives the major, htb's 1:.
		for cg in "$CG_A:$((0x10))" "$CG_B:$((0x20))"; do
			id=$(stat -c %i "${cg%:*}") cid=${cg##*:}
			bpftool map update pinned "$CLS_MAPS/hbm_cg_classes" \
				key hex $(le_hex "$id" 8) value hex $(le_hex "$cid" 4) ||
				return 1
		done
		# nsenter, not ip netns exec: that hides /sys/fs/bpf.
		nsenter --net="/run/netns/$NS_A" tc filter add dev "$DEV_A" \
			parent 1: bpf object-pinned "$CLS" direct-action \
			classid 1:1 ;;
	*) echo "tenants: unknown arrangement '$1'" >&2; return 1 ;;
	esac
}

# rr SECONDS: "P99 TPS" of B's 10 KB request/response flow: its P99
# latency (us) and transactions per second
rr() {
	hbm_in_cg "$CG_B" netperf -H "$ADDR_B" -p 12865 -t TCP_RR -l "$1" \
		-P 0 -- -r 10000,1 -o P99_LATENCY,THROUGHPUT | tail -n 1 |
		tr ',' ' '
}

errors=0
# run SCENARIO ARR D RA FA RB FB REP [RR]: one CSV row (FA, FB: bulk
# flows); RR 0 runs no request/response flow (its columns stay empty)
run() {
	local sc=$1 arr=$2 d=$3 ra=$4 fa=$5 rb=$6 fb=$7 rep=$8 with_rr=${9:-1}
	local alone="" loaded="" tps0 tps="" ga gb pk dr rx idle

	hbm_veth_setup || return 1
	inA sysctl -qw net.ipv4.tcp_congestion_control=cubic
	inB_netserver
	tenants "$arr" "$d" "$ra" "$rb" ||
		{ echo "tenants: couldn't arrange $arr" >&2; hbm_cleanup_veth; unarrange_cls; return 1; }
	[ "$with_rr" = 1 ] && read -r alone tps0 <<<"$(rr "$T")"
	hbm_cg_iperf_start "$CG_A" 5201 /tmp/tenants.a $((T + 3)) -P "$fa"
	hbm_cg_iperf_start "$CG_B" 5202 /tmp/tenants.b $((T + 3)) -P "$fb"
	sleep 1.5
	# The wire rate while everything runs (the runs' own averages cover
	# slightly different seconds).
	hbm_rx_rate $((T - 2)) >/tmp/tenants.rx &
	cpu_idle $((T - 2)) >/tmp/tenants.idle &
	if [ "$with_rr" = 1 ]; then
		read -r loaded tps <<<"$(rr "$T")"
	else
		sleep "$T"
	fi
	wait
	rx=$(cat /tmp/tenants.rx)
	idle=$(cat /tmp/tenants.idle)
	ga=$(hbm_iperf_result /tmp/tenants.a)
	gb=$(hbm_iperf_result /tmp/tenants.b)
	if [ "$arr" = hbm ]; then
		read -r pk dr <<<"$(inA "$HBM" show "$DEV_A" --json |
			jq -r '.devices[0] | "\(.stats.packets) \(.drops.total)"')"
	else
		read -r pk dr <<<"$(inA tc -s -j qdisc show dev "$DEV_A" root |
			jq -r '.[0] | "\(.packets // 0) \(.drops // 0)"')"
	fi
	if { [ "$with_rr" = 1 ] &&
	     ! [[ $alone =~ ^[0-9]+$ && $loaded =~ ^[0-9]+$ ]]; } ||
	   [ -z "$ga" ] || [ -z "$gb" ] || [ -z "$pk" ] ||
	   ! [[ $idle =~ ^[0-9]+$ ]]; then
		echo "tenants: $sc $arr rep $rep: missing figures (P99 '$alone' '$loaded', goodput '$ga' '$gb', packets '$pk', idle '$idle')" >&2
		errors=$((errors + 1))
	fi
	[ -n "$tps" ] && tps=$(printf %.0f "$tps")
	printf '%s,%s,%s,%s,%s,%s,%s,%s,%.1f,%.1f,%s,%s,%s,%.1f,%.2f,%s\n' "$sc" \
		"$arr" "$d" "$ra" "$fa" "$rb" "$fb" "$rep" "${ga:-0}" "${gb:-0}" \
		"$alone" "$loaded" "$tps" "${rx:-0}" \
		"$(awk -v d="${dr:-0}" -v p="${pk:-0}" 'BEGIN { print p + d ? 100 * d / (p + d) : 0 }')" \
		"$idle"
	hbm_cleanup_veth
	unarrange_cls
}
# The veth pair and the load go; the cgroups stay for the next run.
hbm_cleanup_veth() {
	local pids
	pids=$(jobs -p)
	[ -n "$pids" ] && kill $pids 2>/dev/null
	wait 2>/dev/null
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
}
unarrange_cls() { rm -rf "$CLS" "$CLS_MAPS"; }

csv=$out/tenants.csv
echo "scenario,arrangement,device_mbps,a_mbps,a_flows,b_mbps,b_flows,rep,a_goodput_mbps,b_goodput_mbps,b_rr_p99_alone_us,b_rr_p99_loaded_us,b_rr_tps_loaded,wire_mbps,drops_pct,cpu_idle_pct" >"$csv"
for rep in $(seq 1 "$R"); do
	for arr in $ARRS; do
		run iso "$arr" 1000 200 8 100 1 "$rep" >>"$csv"
	done
done
for rep in $(seq 1 "$R"); do
	for arr in $ARRS; do
		run share "$arr" 300 200 4 200 4 "$rep" >>"$csv"
	done
done
for rep in $(seq 1 "$R"); do
	for arr in $ARRS; do
		run conform "$arr" 1000 100 4 300 4 "$rep" 0 >>"$csv"
	done
done
bench_end || { echo "tenants: couldn't unload bpf_hbm" >&2; errors=$((errors + 1)); }

{
	echo "command: make bench-tenants (bench/tenants.sh --time $T --repeat $R), kernel $(uname -r), $(date -u +%FT%TZ)"
	echo
	echo "Medians of $R. Bulk goodput in Mbit/s and % of the tenant's ceiling (its rate x 1448/1514); B's 10 KB RR runs in B's class beside its bulk flow(s): its transactions per second (and their request payload in Mbit/s) with the bulk load, and its P99 alone and with the bulk load; on the wire: B's L2 receive rate while all of it runs, as % of the device's rate; drops as % of the packets the qdisc handled; the VM's idle CPU while the bulk load runs (conform runs no RR: its RR columns are -):"
	echo
	echo "| scenario | arrangement | A bulk goodput | B bulk goodput | B's RR beside it | on the wire, % of device | B RR P99 alone | B RR P99 loaded | drops | CPU idle |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	awk -F, -v eff="$HBM_TCP_EFF" "$(<"$here/stats.awk")"'NR > 1 {
		k = $1 SUBSEP $2
		if (!(k in n)) { keys[++nk] = k; dev[k] = $3; ra[k] = $4; rb[k] = $6 }
		i = ++n[k]
		ga[k, i] = $9; gb[k, i] = $10; p0[k, i] = $11; p1[k, i] = $12
		tp[k, i] = $13; sm[k, i] = $14; dp[k, i] = $15; id[k, i] = $16
	} END {
		for (j = 1; j <= nk; j++) {
			k = keys[j]; split(k, kk, SUBSEP)
			for (i = 1; i <= n[k]; i++) {
				a[i] = ga[k, i]; b[i] = gb[k, i]; c[i] = p0[k, i]
				e[i] = p1[k, i]; f[i] = dp[k, i]; s[i] = sm[k, i]
				t[i] = tp[k, i]; u[i] = id[k, i]
			}
			ma = median_of(a, n[k]); mb = median_of(b, n[k])
			mt = median_of(t, n[k])
			if (c[1] == "") {
				rrs = "-"; p0s = "-"; p1s = "-"
			} else {
				rrs = sprintf("%d/s (%.1f Mbit/s)", mt, mt * 10000 * 8 / 1e6)
				p0s = sprintf("%d us", median_of(c, n[k]))
				p1s = sprintf("%d us", median_of(e, n[k]))
			}
			printf "| %s (%sM: A %sM, B %sM) | %s | %.1f (%.1f%%) | %.1f (%.1f%%) | %s | %.1f%% | %s | %s | %.2f%% | %d%% |\n",
				kk[1], dev[k], ra[k], rb[k], kk[2],
				ma, 100 * ma / (ra[k] * eff), mb, 100 * mb / (rb[k] * eff),
				rrs, 100 * median_of(s, n[k]) / dev[k],
				p0s, p1s, median_of(f, n[k]), median_of(u, n[k])
			delete a; delete b; delete c; delete e; delete f; delete s
			delete t; delete u
		}
	}' "$csv"
} >"$out/tenants.md"
cat "$out/tenants.md"
[ "$errors" = 0 ]
