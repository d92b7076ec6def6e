# SPDX-License-Identifier: GPL-2.0
#
# The arrangements the benchmarks compare, on A's egress (sourced by
# bench/run.sh, rate.sh, tenants.sh and conform.sh after
# selftests/vm/lib.sh), and the helpers they share..
#
# An arrangement is a name, optionally followed by variants, each after a
# colon. Every one runs at its defaults unless a variant says otherwise:
#   hbm       bpf-hbm attach --rate R (burst 100us, late credit, CN, ECN)
#   htb       one htb class, rate = ceil = R
#   fq        plain sch_fq, no limit
#   fqedt     bench/edt_stamp.bpf.c at tcx egress stamping departures from
#             the HBM-EDT clock (include/hbm_edt.h), sch_fq waiting; HBM's
#             defaults: burst 100us, mark 50us, drop 500us / 480us
#   none      the veth as it is
#   floor     bench/floor_qdisc.bpf.c, a BPF FIFO that does next to nothing:
#             what any BPF qdisc pays per packet (for the cost runs only)
# Variants: burst=T (hbm, fqedt), fixed (hbm: --late-credit off), nocn
# (hbm: --cn off), noecn (hbm: --ecn off, no marker). Example:
# hbm:fixed:burst=2ms.

# bpffs names may not contain dots.
STAMP=/sys/fs/bpf/hbm_bench_stamp
STAMP_MAPS=/sys/fs/bpf/hbm_bench_maps
FLOOR=/sys/fs/bpf/hbm_bench_floor

# ns_of TIME: a time as bench variants write it (us, ms), in ns.
ns_of() {
	case $1 in
	*ms) echo $((${1%ms} * 1000000)) ;;
	*us) echo $((${1%us} * 1000)) ;;
	*) echo "bench: bad time '$1'" >&2; return 1 ;;
	esac
}

# arrange ARR[:VARIANT...] RATE_MBIT: shape A's egress
arrange() {
	local r=$(($2 * 1000000)) base=${1%%:*} v burst_ns=100000
	local -a opts=()

	for v in $(echo "$1" | tr ':' ' ' | cut -d' ' -f2- -s); do
		case $v in
		burst=*) burst_ns=$(ns_of "${v#burst=}") || return 1
			opts+=(--burst "${v#burst=}") ;;
		fixed) opts+=(--late-credit off) ;;
		nocn) opts+=(--cn off) ;;
		noecn) opts+=(--ecn off) ;;
		*) echo "bench: unknown variant '$v' of $base" >&2; return 1 ;;
		esac
	done
	case $base in
	hbm)
		inA "$HBM" attach "$DEV_A" --parent root --rate "${2}mbit" \
			"${opts[@]}" >/dev/null ;;
	htb)
		inA tc qdisc add dev "$DEV_A" root handle 1: htb default 1 &&
		inA tc class add dev "$DEV_A" parent 1: classid 1:1 htb \
			rate "${2}mbit" ceil "${2}mbit" 2>/dev/null ;;
	fq)
		inA tc qdisc add dev "$DEV_A" root fq ;;
	fqedt)
		rm -rf "$STAMP" "$STAMP_MAPS"
		inA tc qdisc add dev "$DEV_A" root fq &&
		bpftool prog load "$repo/build/edt_stamp.bpf.o" "$STAMP" \
			type classifier pinmaps "$STAMP_MAPS" &&
		"$repo/build/tools/stamp_config" \
			"$STAMP_MAPS/hbm_stamp_state" "$r" "$burst_ns" &&
		# nsenter, not ip netns exec: that hides /sys/fs/bpf.
		nsenter --net="/run/netns/$NS_A" bpftool net attach \
			tcx_egress pinned "$STAMP" dev "$DEV_A" ;;
	floor)
		# Registered once per boot (bench_end unregisters it). It
		# takes one instance, and the last run's may outlive its
		# namespace for a moment (netns cleanup is deferred).
		if [ ! -e "$FLOOR/hbm_floor" ]; then
			rm -rf "$FLOOR"
			mkdir "$FLOOR" &&
			bpftool struct_ops register \
				"$repo/build/floor_qdisc.bpf.o" "$FLOOR" \
				>/dev/null || { rm -rf "$FLOOR"; return 1; }
		fi
		for v in $(seq 20); do
			inA tc qdisc add dev "$DEV_A" root hbm_floor \
				2>/dev/null && return 0
			sleep 0.1
		done
		inA tc qdisc add dev "$DEV_A" root hbm_floor ;;
	none) ;;
	*) echo "bench: unknown arrangement '$base'" >&2; return 1 ;;
	esac
}

# counters ARR: "packets drops ce" of the arrangement
counters() {
	local j
	case ${1%%:*} in
	hbm)
		inA "$HBM" show "$DEV_A" --json | jq -r '.devices[0] |
			"\(.stats.packets) \(.drops.total) \(.stats.ce)"' ;;
	htb|fq|none|floor)
		inA tc -s -j qdisc show dev "$DEV_A" root |
			jq -r '.[0] | "\(.packets // 0) \(.drops // 0) 0"' ;;
	fqedt)
		j=$(bpftool map dump pinned "$STAMP_MAPS/hbm_stamp_state" -j)
		echo "$(echo "$j" | jq -r '.[0].formatted.value.packets') \
$(( $(echo "$j" | jq -r '.[0].formatted.value.drops') + $(inA tc -s -j qdisc show dev "$DEV_A" root | jq -r '.[0].drops // 0') )) \
$(echo "$j" | jq -r '.[0].formatted.value.ce')" ;;
	esac
}

# median: the median of the numbers on stdin, one a line (nothing if none)
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print "" }'; }

# cpu_ticks: "IDLE TOTAL" ticks of all the VM's CPUs, from /proc/stat
cpu_ticks() { # idle includes iowait
	awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat
}

# unarrange: what arrange left outside the namespaces
unarrange() { rm -rf "$STAMP" "$STAMP_MAPS"; }

# bench_begin: bpffs, the modules, dctcp allowed in namespaces other than
# the first (they may default only to an allowed one), bpf_hbm loaded.
bench_begin() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
	for m in veth sch_fq sch_htb tcp_dctcp; do modprobe -q "$m"; done
	grep -qw dctcp /proc/sys/net/ipv4/tcp_allowed_congestion_control ||
		sysctl -qw net.ipv4.tcp_allowed_congestion_control="$(sysctl -n net.ipv4.tcp_allowed_congestion_control) dctcp"
	bench_loaded_here=0
	[ -e /sys/fs/bpf/bpf_hbm/link ] || bench_loaded_here=1
	"$HBM" load >/dev/null
}

# bench_end: unload what bench_begin loaded: with it go the markers of the
# namespaces the runs deleted, whose pins a later namespace could reuse.
bench_end() {
	rm -rf "$FLOOR"
	[ "$bench_loaded_here" = 0 ] || "$HBM" unload --force >/dev/null
}
