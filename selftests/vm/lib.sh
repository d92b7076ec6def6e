# SPDX-License-Identifier: GPL-2.0
#
# Shared by the VM tests (sourced): one pair of network namespaces joined by
# a veth pair per test, assertions that return a status and print what they
# compared, and small probes of what a user would look at (tc -s qdisc,
# bpf-hbm show, interface counters, iperf3).
#
# Addresses come from TEST-NET-1 (RFC 5737) and live only in this VM.

set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../status.sh"

HBM_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# HBM_LOADER: another bpf-hbm to test (an older build, to show that a
# test fails where a fix is missing).
HBM=${HBM_LOADER:-$HBM_REPO/build/bpf-hbm}
HBM_TOOLS=$HBM_REPO/build/tools
HBM_TEST=$(basename "$0" .sh)
HBM_TEST=${HBM_TEST#test_}
NS_A=hbm-$HBM_TEST-a
NS_B=hbm-$HBM_TEST-b
DEV_A=hbm0
DEV_B=hbm1
ADDR_A=192.0.2.1
ADDR_B=192.0.2.2
HBM_FAILED=0

# The burst credit the rate tests configure. TCG's timer and scheduling
# jitter is around a millisecond (idle ping RTT 0.7 ms), and a virtual queue
# forgets idle time beyond its burst: HBM's 100 us default, sized for real
# hosts, would measure the emulator. The tests report both.
HBM_VM_BURST=${HBM_VM_BURST:-2ms}

# TCP goodput ceiling at a given L2 rate: 1448 payload bytes per 1514 bytes
# on the wire (MTU 1500, TCP timestamps), what qdisc_pkt_len counts.
HBM_TCP_EFF=$(awk 'BEGIN { printf "%.6f", 1448 / 1514 }')

inA() { ip netns exec "$NS_A" "$@"; }
inB() { ip netns exec "$NS_B" "$@"; }

hbm_cleanup() {
	local pids cg
	pids=$(jobs -p)
	[ -n "$pids" ] && kill $pids 2>/dev/null
	wait 2>/dev/null
	# The test's cgroups (hbm_cg, by name: it runs in $(...), where it
	# cannot add to a list of ours): their processes first.
	for cg in "${HBM_CGROUPS[@]}" "$HBM_CG_ROOT/hbm-$HBM_TEST-"*; do
		[ -d "$cg" ] || continue
		xargs -r kill -9 <"$cg/cgroup.procs" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			rmdir "$cg" 2>/dev/null && break
			sleep 0.2
		done
	done
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	return 0
}
trap hbm_cleanup EXIT

# The per-cgroup class tests: cgroups of the test's own, under the cgroup2
# mount (/sys/fs/cgroup in the VM), removed by hbm_cleanup.
HBM_CG_ROOT=/sys/fs/cgroup
HBM_CGROUPS=()	# cgroups of other names a test made, also removed

# hbm_cg NAME: create the test's cgroup NAME, print its path.
hbm_cg() {
	local cg=$HBM_CG_ROOT/hbm-$HBM_TEST-$1

	mkdir -p "$cg" || hbm_fatal "mkdir $cg"
	echo "$cg"
}

# hbm_in_cg CGROUP CMD...: run CMD in A's network namespace from a process
# placed in CGROUP first, so that every socket CMD opens belongs to it.
hbm_in_cg() {
	local cg=$1
	shift
	bash -c 'echo $$ >"$1/cgroup.procs" || exit 1; shift
		exec ip netns exec "$0" "$@"' "$NS_A" "$cg" "$@"
}

# iperf3 from CGROUP over PORT, in the background, for the TCP tests of
# several senders at once: hbm_cg_iperf_start CGROUP PORT OUT SECONDS
# [ARGS...], then hbm_iperf_result OUT for the receiver's goodput in
# Mbit/s (first second omitted), empty if iperf3 failed. CGROUP "-" is
# the test's own (unclassified).
hbm_cg_iperf_start() {
	local cg=$1 port=$2 out=$3 t=$4
	shift 4
	inB iperf3 -s -1 -D -p "$port" >/dev/null 2>&1
	sleep 0.3
	if [ "$cg" = - ]; then
		inA iperf3 -c "$ADDR_B" -p "$port" -t "$t" -O 1 -J "$@" \
			>"$out" 2>&1 &
	else
		hbm_in_cg "$cg" iperf3 -c "$ADDR_B" -p "$port" -t "$t" -O 1 \
			-J "$@" >"$out" 2>&1 &
	fi
}
# hbm_rr_p99 CGROUP SECONDS: the P99 latency (us) of netperf TCP_RR with
# 10 KB requests and 1-byte responses from CGROUP to B's netserver on port
# 12865 (the caller starts it); nothing, a reason on stderr and status 1
# where netperf gave no number.
hbm_rr_p99() {
	local v

	v=$(hbm_in_cg "$1" netperf -H "$ADDR_B" -p 12865 -t TCP_RR \
		-l "$2" -P 0 -- -r 10000,1 -o P99_LATENCY | tail -n 1)
	[[ $v =~ ^[0-9]+$ ]] || {
		echo "netperf gave no P99: '$v'" >&2
		return 1
	}
	echo "$v"
}
hbm_iperf_result() {
	local g

	g=$(jq -er '.end.sum_received.bits_per_second / 1e6' "$1" 2>/dev/null) &&
		hbm_is_num "$g" && echo "$g"
}

# hbm_veth_setup [TXQUEUES]: A/hbm0 (192.0.2.1) <-> B/hbm1 (192.0.2.2)
hbm_veth_setup() {
	hbm_ns_setup && hbm_veth_add "${1:-1}"
}

# The two namespaces alone, IPv4 only (no IPv6 autoconfiguration chatter
# in the counters), their loopbacks up.
hbm_ns_setup() {
	ip netns add "$NS_A" && ip netns add "$NS_B" || return 1
	inA sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	inB sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	inA ip link set lo up
	inB ip link set lo up
}

# hbm_veth_add [TXQUEUES]: the veth pair between the namespaces, up and
# addressed, B reachable from A.
hbm_veth_add() {
	local q=${1:-1}

	ip link add "$DEV_A" numtxqueues "$q" numrxqueues "$q" netns "$NS_A" \
		type veth peer name "$DEV_B" numtxqueues "$q" \
		numrxqueues "$q" netns "$NS_B" || return 1
	inA ip addr add "$ADDR_A/24" dev "$DEV_A"
	inB ip addr add "$ADDR_B/24" dev "$DEV_B"
	inA ip link set "$DEV_A" up
	inB ip link set "$DEV_B" up
	# Static neighbours: no ARP in the qdisc's counters.
	inA ip neigh replace "$ADDR_B" dev "$DEV_A" nud permanent lladdr \
		"$(inB cat "/sys/class/net/$DEV_B/address")"
	inB ip neigh replace "$ADDR_A" dev "$DEV_B" nud permanent lladdr \
		"$(inA cat "/sys/class/net/$DEV_A/address")"
	inA ping -c 1 -W 2 "$ADDR_B" >/dev/null
}

hbm_report() { echo "REPORT: $*"; }

# A figure as the probes print them: an integer or a decimal, maybe
# negative (awk, jq, /proc); not empty, "null", "nan" or an error message.
hbm_is_num() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; }

# hbm_figure WHAT VALUE: the test stops here, failed, unless VALUE is a
# number: a figure it could not read proves nothing, and one that
# defaulted to 0 or -1 could pass a bound.
hbm_figure() {
	hbm_is_num "$2" || hbm_fatal "$1: no figure read ('$2')"
}

hbm_check() { # EXPR DESCRIPTION (EXPR for awk, on numbers)
	if awk "BEGIN { exit !($1) }"; then
		echo "PASS: $2 ($1)"
		return 0
	fi
	echo "FAIL: $2 ($1)"
	HBM_FAILED=1
	return 1
}
# The comparisons take numbers, or strings in double quotes (which awk
# compares as strings). Anything else (empty, "null", an error message) is
# a figure the test could not read, which awk would take for a variable
# (0, or a syntax error): the assertion fails, saying so.
hbm_cmp() { # DESCRIPTION EXPR OPERAND...
	local what=$1 expr=$2 v
	shift 2
	for v in "$@"; do
		if ! hbm_is_num "$v" && ! [[ $v =~ ^\"[^\"]*\"$ ]]; then
			echo "FAIL: $what: no figure read ('$v' in: $expr)"
			HBM_FAILED=1
			return 1
		fi
	done
	hbm_check "$expr" "$what"
}
assert_ge() { hbm_cmp "$3" "$1 >= $2" "$1" "$2"; }
assert_le() { hbm_cmp "$3" "$1 <= $2" "$1" "$2"; }
assert_gt() { hbm_cmp "$3" "$1 > $2" "$1" "$2"; }
assert_lt() { hbm_cmp "$3" "$1 < $2" "$1" "$2"; }
assert_eq() { hbm_cmp "$3" "$1 == $2" "$1" "$2"; }
assert_between() { hbm_cmp "$4" "$1 >= $2 && $1 <= $3" "$1" "$2" "$3"; }
assert_same() { # ACTUAL EXPECTED DESCRIPTION: two strings, equal
	if [ -n "$1" ] && [ "$1" = "$2" ]; then
		echo "PASS: $3"
		return 0
	fi
	echo "FAIL: $3: '$1' is not '$2'"
	HBM_FAILED=1
	return 1
}
assert_ok() { # DESCRIPTION CMD...
	local what=$1
	shift
	if "$@"; then
		echo "PASS: $what"
		return 0
	fi
	echo "FAIL: $what: '$*' failed"
	HBM_FAILED=1
	return 1
}
hbm_skip() { echo "$*"; exit "$HBM_SKIP"; }
hbm_done() { [ "$HBM_FAILED" = 0 ] && exit 0; exit 1; }
hbm_fatal() { echo "FAIL: $*"; exit 1; }

hbm_load() { "$HBM" load >/dev/null || hbm_fatal "bpf-hbm load failed"; }

# Counters of the root qdisc of A's device: hbm_qdisc FIELD (bytes,
# packets, drops, overlimits, backlog, qlen), from tc's JSON.
hbm_qdisc() {
	inA tc -s -j qdisc show dev "$DEV_A" root |
		jq -r ".[0].$1 // empty"
}

# A class counter from `bpf-hbm show --json` (as run in A): hbm_stat PATH
hbm_stat() {
	inA "$HBM" show "$DEV_A" --json | jq -r ".devices[0].$1 // empty"
}

# Active skb objects: hbm_skb_objs [head]. Both skbuff caches (TCP's
# clones come from skbuff_fclone_cache), or with "head" skbuff_head_cache
# alone. A leak check compares them before and after, settled.
hbm_skb_objs() {
	local re='^skbuff_(head|fclone)_cache$'

	[ "${1:-}" = head ] && re='^skbuff_head_cache$'
	awk -v re="$re" '$1 ~ re { s += $2; n++ }
		END { if (n) print s; else print "unreadable" }' /proc/slabinfo
}

# How far above its baseline skbuff_head_cache may read once everything
# was freed: slabinfo's active counts include the slab's per-cpu caches
# and the network stack's per-cpu cache of skb heads (up to 64 a CPU,
# NAPI_SKB_CACHE_SIZE), which a freed skb may refill (7.2, 2026-12-04:
# base 257, 369 after a del that freed all). A leak check on the slab
# catches a leak larger than that; an exact check needs another figure
# (a socket's write memory, a qdisc's qlen).
hbm_skb_slack() {
	echo $((64 * $(nproc) + 64))
}

# Entries of one of bpf_hbm's maps, by its pin under /sys/fs/bpf/bpf_hbm
# if pinned, else by the kernel's name (15 characters at most). Prints
# nothing and fails when bpftool can't dump it.
# hbm_map_entries NAME: its entries; for hbm_instances (an array of
# slots), the slots in use.
hbm_map_entries() {
	local m=(name "$1") f=length

	[ -e "/sys/fs/bpf/bpf_hbm/$1" ] && m=(pinned "/sys/fs/bpf/bpf_hbm/$1")
	[ "$1" = hbm_instances ] && f="$HBM_INST_USED | length"
	bpftool -j map dump "${m[@]}" 2>/dev/null |
		jq -e "if type == \"array\" then $f else error end"
}
# jq: hbm_instances' slots in use, each its info (key, counters); an error
# where bpftool printed no BTF-formatted value.
HBM_INST_USED='[.[] | (.formatted.value // error("no formatted value")).info |
	select(.in_use != 0)]'

# A's device passes traffic within 1 s: a TCP connection to B's iperf3
# server (port 5201) opens. Not an ICMP ping: HBM drops non-TCP packets
# over the mark threshold, which bulk flows keep the queue near, so a lost
# ping can be the policy's; a TCP handshake has under 2 packets in flight,
# which the guard never drops.
# The clock runs around the connect alone, inside the namespace: under TCG
# with the load beside it, entering the netns and starting a shell take
# hundreds of milliseconds that say nothing about the device. A lost SYN
# shows as about 1000 ms (the SYN's first retransmission); a dead device as
# no connection within 3 s. HBM_CONNECT_MS holds the time, or "none";
# HBM_CONNECT_MAX the slowest connect so far.
HBM_CONNECT_MAX=0
hbm_tcp_alive() {
	HBM_CONNECT_MS=$(inA timeout 3 bash -c '
		t0=${EPOCHREALTIME/./}
		exec 3<>"/dev/tcp/$1/5201" || exit 1
		t1=${EPOCHREALTIME/./}
		echo $(((t1 - t0) / 1000))' _ "$ADDR_B" 2>/dev/null)
	hbm_is_num "$HBM_CONNECT_MS" || HBM_CONNECT_MS=none
	[ "$HBM_CONNECT_MS" != none ] || return 1
	[ "$HBM_CONNECT_MS" -le "$HBM_CONNECT_MAX" ] || HBM_CONNECT_MAX=$HBM_CONNECT_MS
	[ "$HBM_CONNECT_MS" -lt 1000 ]
}

# Entries of the pinned map PIN whose key is device IFINDEX of the network
# namespace NETNS (its inode number), as bpftool dumps them: the kernel's
# view, not bpf-hbm's. When bpftool fails or its output is not a map dump,
# prints "unreadable" (which fails any assertion on it) and fails. For
# hbm_instances (an array of slots), the slots in use whose key is the
# device's: hbm_map_count PIN IFINDEX NETNS
hbm_map_count() {
	local n keys='[.[] | (.formatted.key // .key) | objects]'

	[ "${1##*/}" = hbm_instances ] && keys="$HBM_INST_USED | map(.key)"
	n=$(bpftool -j map dump pinned "$1" |
		jq --argjson ifx "$2" --argjson ns "$3" \
			"$keys"' | map(select(.ifindex == $ifx and
			  .netns == $ns)) | length') &&
		hbm_is_num "$n" || {
		echo "hbm_map_count: couldn't count $1's entries for ifindex '$2' netns '$3'" >&2
		echo unreadable
		return 1
	}
	echo "$n"
}

# L2 receive rate at B over SECONDS, in Mbit/s. One process reads the
# counter and the clock back to back: under TCG a fork between them costs
# tens of milliseconds, which skews a short interval by percents.
# Prints nothing if the counter could not be read.
hbm_rx_rate() {
	inB bash -c 'f=/sys/class/net/$1/statistics/rx_bytes
		read -r b0 <"$f" || exit 1; t0=$EPOCHREALTIME; sleep "$2"
		read -r b1 <"$f" || exit 1; t1=$EPOCHREALTIME
		echo "$b0 $b1 $t0 $t1"' bash "$DEV_B" "$1" |
		awk 'NF == 4 && $4 > $3 {
			printf "%.2f", ($2 - $1) * 8 / (($4 - $3) * 1e6) }'
}

# iperf3 from A to B: hbm_iperf SECONDS [ARGS...] prints the receiver's
# goodput in Mbit/s (first second omitted: slow start is not the rate);
# nothing, and fails, if iperf3 failed or its JSON has no goodput.
hbm_iperf() {
	local t=$1 json g
	shift
	inB iperf3 -s -1 -D -p 5201 >/dev/null 2>&1
	sleep 0.3
	json=$(inA iperf3 -c "$ADDR_B" -p 5201 -t "$t" -O 1 -J "$@") || {
		echo "iperf3 failed: $json" >&2
		return 1
	}
	g=$(echo "$json" | jq -er '.end.sum_received.bits_per_second / 1e6') &&
		hbm_is_num "$g" || {
		echo "iperf3 gave no goodput: $json" >&2
		return 1
	}
	echo "$g"
}

# Goodput as a percentage of the TCP ceiling at RATE_MBIT; nothing for a
# goodput that is not a number (an assertion on it then fails).
hbm_pct_of_ceiling() { # MBITS RATE_MBIT
	hbm_is_num "$1" || return 1
	awk -v g="$1" -v r="$2" -v e="$HBM_TCP_EFF" \
		'BEGIN { printf "%.1f", 100 * g / (r * e) }'
}

# The scheduler tests (test_sched_*): bpf_hbm at a rate far above what the
# VM forwards and thresholds far above the test's queues, so that the
# virtual clock never delays or drops a datagram and only the order of
# service among due flows is seen. A batch of datagrams stamped
# (SO_TXTIME) to leave at one instant makes flows due together, as a late
# watchdog does.
HBM_SCHED_PORT=9100
hbm_sched_attach() {
	hbm_veth_setup || hbm_fatal "veth setup"
	assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root \
		--rate 100gbit --mark 10s --drop 20s --drop-large 20s \
		--limit 20000 --flow-limit 5000 "$@" || hbm_done
	# A batch is thousands of datagrams due at once: room for them on
	# B's receive path (restored by hbm_sched_restore).
	HBM_SCHED_BACKLOG=$(sysctl -n net.core.netdev_max_backlog)
	sysctl -qw net.core.netdev_max_backlog=20000
	trap 'hbm_sched_restore; hbm_cleanup' EXIT
}
hbm_sched_restore() {
	sysctl -qw net.core.netdev_max_backlog="$HBM_SCHED_BACKLOG"
}

# CLOCK_MONOTONIC now plus MS milliseconds, in ns: hbm_sched_at MS
hbm_sched_at() {
	echo $(( $("$HBM_TOOLS/sched_probe" now) + $1 * 1000000 ))
}

# Record the first COUNT probe datagrams A's device transmits, in its
# order, into FILE (sched_probe sniff: the qdisc's order of service and
# release times, without B's receive backlog in between), with a sink for
# them on B; wait until both are bound: hbm_sched_sniff COUNT FILE
hbm_sched_sniff() {
	inB "$HBM_TOOLS/sched_probe" recv -p "$HBM_SCHED_PORT" -c "$1" \
		-T 5000 >/dev/null 2>"$2.sink" &
	inA "$HBM_TOOLS/sched_probe" sniff -i "$DEV_A" -p "$HBM_SCHED_PORT" \
		-c "$1" -T 5000 >"$2" 2>"$2.err" &
	HBM_SCHED_RX=$!
	for _ in $(seq 1 50); do
		grep -q ready "$2.err" 2>/dev/null &&
			grep -q ready "$2.sink" 2>/dev/null && return 0
		sleep 0.1
	done
	hbm_fatal "sniffer or sink not ready"
}

# One flow from A: hbm_sched_send SPORT [sched_probe send options]
hbm_sched_send() {
	local sport=$1
	shift
	inA "$HBM_TOOLS/sched_probe" send -d "$ADDR_B" -p "$HBM_SCHED_PORT" \
		-S "$sport" -B 16000000 "$@" >/dev/null
}

# The P-th percentile (0-100, nearest rank) of the numbers on stdin, or -1
# for none (mawk has no sort of its own): hbm_quantile P
hbm_quantile() {
	sort -n | awk -v p="$1" '{ a[NR] = $1 }
		END { if (!NR) { print -1; exit }
		      r = int(NR * p / 100 + 0.999999); if (r < 1) r = 1
		      print a[r] }'
}

# Stamped datagrams of FILE queued after their departure time (the test's
# senders were too slow for its margin: what it measures did not happen).
hbm_sched_late_sends() {
	awk '$5 && $4 > $5' "$1" | wc -l
}
