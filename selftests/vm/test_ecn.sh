#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# ECN: with --ecn on (attach's default) the marker on the device's tcx
# egress hook sets CE in ECN-capable packets while the virtual queue is
# over the mark threshold, and the receiver sees them (IpExtInCEPkts).
# Two flows at 500 Mbit/s for 5 s each, bpf_hbm at its defaults:
#  - DCTCP (at both ends) keeps its goodput on CE marks, and drops next to
#    nothing once the drop thresholds exceed TCG's jitter;
#  - cubic with ECN on both ends is CE-marked too;
#  - cubic without ECN is never CE-marked: it gets CN signals, few drops,
#    and keeps its goodput;
#  - DCTCP over IPv6 is CE-marked on a share of its packets like IPv4's.
# The same three with `bpf-hbm set DEV --ecn off`: no CE mark anywhere; the
# ECN senders get CN or drops instead (DCTCP ignores CN: it is dropped), and
# cubic without ECN is treated as before. The marker is on the hook only
# while ECN is on, show says which, and a failure to attach it rolls the
# whole attach back. Counters are deltas around each run; the qdisc counts
# skbs (TSO), the receiver's IpExtInCEPkts counts segments.
. "$(dirname "$0")/lib.sh"

RATE=${RATE:-500}	# Mbit/s
SECS=${HBM_ECN_SECS:-5}	# seconds per run
# Goodput floor, % of the ceiling: at 500 Mbit/s a 2-core TCG host measured
# 79-85% (DCTCP) and 78-82% (cubic) with a 2 ms burst, before the defaults
# had the allowance for the watchdog's lateness, and 82-86% at the defaults
# since; a quieter one 95% or more. At this rate the VM's two CPUs limit
# every arrangement (htb 64-80%, fq+EDT 46-62% in bench/results/rate.md),
# so the floor is test_rate_tcp's for 500 Mbit/s: it catches a stall or a
# halved rate, not the emulator's load.
FLOOR=${HBM_RATE_FLOOR_500:-60}
# Drop bound for cubic, % of packets: 1.1-1.7% on that host at HBM's fixed
# thresholds, which the allowance for the lateness leaves as they are.
CUBIC_DROPS=${HBM_CUBIC_DROPS:-3}

hbm_veth_setup || hbm_fatal "veth setup"

# The marker's tcx link(s) on A's device, from bpftool.
hbm_markers() {
	inA bpftool -j net show dev "$DEV_A" |
		jq '[.[0].tc[]? | select(.name == "hbm_ce")] | length'
}

# config.ecn (hbm_stat's `// empty` would hide a false)
hbm_ecn() { inA "$HBM" show "$DEV_A" --json | jq -r '.devices[0].config.ecn'; }

# A failed marker attach undoes the qdisc and the configuration: a
# directory where the marker's pin goes makes it fail after the qdisc.
hbm_load
pin=/sys/fs/bpf/bpf_hbm/ce-$(inA stat -L -c %i /proc/self/ns/net)-$(inA cat "/sys/class/net/$DEV_A/ifindex")
# A pin of that name is a marker whose device went with an earlier test's
# namespace (inode numbers are reused): attach would sweep it, but the
# directory has to go in first.
rm -f "$pin"
mkdir "$pin"
inA "$HBM" attach "$DEV_A" --parent root --rate 1gbit 2>"/tmp/$HBM_TEST.err"
st=$?
cat "/tmp/$HBM_TEST.err"
rmdir "$pin"
assert_eq "$st" 1 "attach fails when the marker can't be pinned"
assert_eq "\"$(hbm_qdisc kind)\"" '"noqueue"' "... and its qdisc is gone"
assert_eq "$(hbm_markers)" 0 "... no marker left on the hook"

assert_ok "attach --rate ${RATE}mbit (ECN on by default)" inA "$HBM" attach \
	"$DEV_A" --rate "${RATE}mbit" --parent root ||
	hbm_done
assert_eq "\"$(hbm_ecn)\"" '"true"' "show: config.ecn is true"
assert_eq "$(hbm_markers)" 1 "the marker is on the tcx egress hook"
assert_ok "set --ecn off" inA "$HBM" set "$DEV_A" --ecn off
assert_eq "\"$(hbm_ecn)\"" '"false"' "show: config.ecn is false"
assert_eq "$(hbm_markers)" 0 "the marker left the hook"
assert_ok "set --ecn on" inA "$HBM" set "$DEV_A" --ecn on
assert_eq "$(hbm_markers)" 1 "the marker is back"

ce_rx() { inB nstat -saz IpExtInCEPkts | awk '$1 == "IpExtInCEPkts" { print $2 }'; }

# counters: "packets drops cn ce marks ce_rx"
snap() {
	echo "$(hbm_stat stats.packets) $(hbm_stat drops.total)" \
		"$(hbm_stat stats.cn) $(hbm_stat stats.ce)" \
		"$(hbm_stat stats.marks) $(ce_rx)"
}

# run NAME ECN: one measured run; sets pkts drops cn ce marks cerx g pct
run() {
	local name=$1 ecn=$2 s0 s1 json v
	inA "$HBM" set "$DEV_A" --ecn "$ecn" || hbm_fatal "set --ecn $ecn"
	s0=$(snap)
	inB iperf3 -s -1 -D -p 5201 >/dev/null 2>&1
	sleep 0.3
	json=$(inA iperf3 -c "$ADDR_B" -p 5201 -t "$SECS" -O 1 -P 2 -J)
	s1=$(snap)
	g=$(echo "$json" | jq -r '.end.sum_received.bits_per_second / 1e6')
	retr=$(echo "$json" | jq -r '.end.sum_sent.retransmits')
	hbm_figure "$name, ecn $ecn: iperf3 goodput" "$g"
	set -- $s0 $s1
	[ $# = 12 ] || hbm_fatal "$name, ecn $ecn: counters unreadable ('$s0' -> '$s1')"
	for v in "$@"; do
		hbm_figure "$name, ecn $ecn: counters ('$s0' -> '$s1')" "$v"
	done
	pkts=$(($7 - $1)) drops=$(($8 - $2)) cn=$(($9 - $3))
	ce=$((${10} - $4)) marks=$((${11} - $5)) cerx=$((${12} - $6))
	pct=$(hbm_pct_of_ceiling "$g" "$RATE")
	dpct=$(awk -v d="$drops" -v p="$pkts" \
		'BEGIN { printf "%.4f", p ? 100 * d / (d + p) : 0 }')
	hbm_report "$name, ecn $ecn: $g Mbit/s = ${pct}% of ceiling; packets $pkts, drops $drops (${dpct}%), cn $cn, ce $ce (receiver $cerx), marks $marks, retransmits $retr"
}

# A network namespace other than the first may only pick an allowed
# congestion control (dctcp is not by default): allow it while this runs.
allowed=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
trap 'sysctl -qw net.ipv4.tcp_allowed_congestion_control="$allowed"; hbm_cleanup' EXIT
sysctl -qw net.ipv4.tcp_allowed_congestion_control="$allowed dctcp" ||
	hbm_fatal "allow dctcp"

# DCTCP sends an ECT SYN, which a listener negotiates ECN for only if its
# own congestion control needs ECN: B runs dctcp too, as DCTCP requires.
ecn_sysctls() { # CC ECN_A ECN_B
	inA sysctl -qw net.ipv4.tcp_congestion_control="$1" ||
		hbm_fatal "congestion control $1"
	inB sysctl -qw net.ipv4.tcp_congestion_control="$1" ||
		hbm_fatal "congestion control $1 in B"
	inA sysctl -qw net.ipv4.tcp_ecn="$2"
	inB sysctl -qw net.ipv4.tcp_ecn="$3"
}

declare -A on_drops on_cn

ecn_sysctls dctcp 1 1
run dctcp on
assert_ge "$pct" "$FLOOR" "dctcp: goodput >= $FLOOR% of the ceiling"
assert_gt "$ce" 0 "dctcp: CE marks set"
assert_gt "$cerx" 0 "dctcp: CE marks seen by the receiver"
on_drops[dctcp]=$drops on_cn[dctcp]=$cn
ce4=$ce pkts4=$pkts	# IPv6's marks are judged against these, below
# HBM's 0.01% is out of reach at the default drop thresholds here: TCG's
# ~1 ms of jitter bunches ACKs, and each bunch releases a window at once
# (TSO skbs of ~1 ms at this rate), past 480 us of virtual queue before any
# CE mark is read; measured 1.6% (4-5% while other VMs loaded the host).
# With 2 ms drop thresholds the drops go away: measured 0.02-0.07% under
# load. The --ecn off run below shows the rest.
inA "$HBM" set "$DEV_A" --drop 2ms || hbm_fatal "set --drop 2ms"
run "dctcp, drop 2ms" on
assert_gt "$ce" 0 "dctcp, drop 2ms: CE marks set"
assert_lt "$dpct" 0.1 "dctcp, drop thresholds above TCG's jitter: drops under 0.1% of packets"
inA "$HBM" set "$DEV_A" --drop 500us || hbm_fatal "set --drop 500us"

# cubic cuts its window (x0.7) on CE as on CN: its drops are those of the
# bursts (HBM's 0.05% is out of reach here too: measured 0.5%, 0.9-1.2%
# under load), and ECN must not make them worse than without it.
ecn_sysctls cubic 1 1
run cubic-ecn on
assert_gt "$ce" 0 "cubic+ECN: CE marks set"
assert_gt "$cerx" 0 "cubic+ECN: CE marks seen by the receiver"
assert_lt "$dpct" "$CUBIC_DROPS" "cubic+ECN: drops under $CUBIC_DROPS% of packets"
on_drops[cubic-ecn]=$drops on_cn[cubic-ecn]=$cn

ecn_sysctls cubic 0 1
run cubic on
assert_eq "$ce" 0 "cubic without ECN: no CE marks (not ECN-capable)"
assert_eq "$cerx" 0 "cubic without ECN: receiver saw no CE"
assert_gt "$cn" 0 "cubic without ECN: CN signals counted"
assert_lt "$dpct" "$CUBIC_DROPS" "cubic without ECN: drops under $CUBIC_DROPS% of packets"
assert_ge "$pct" "$FLOOR" "cubic without ECN: goodput >= $FLOOR% of the ceiling"

# IPv6: the marker finds the ECN bits in the traffic class, not in a TOS
# byte. DCTCP over IPv6, 3 s: CE set by the marker and seen by B, on a
# share of the packets like IPv4's above, at least half of it. The flow
# label is 0: bits read from the wrong place in the header (the label's,
# random per flow) would otherwise mark some flows right by chance.
ce6_rx() { inB nstat -saz Ip6InCEPkts | awk '$1 == "Ip6InCEPkts" { print $2 }'; }
# (hbm_ns_setup disables IPv6: enabled on the veth alone, addresses
# without duplicate detection, so that they work at once.)
inA sysctl -qw "net.ipv6.conf.$DEV_A.disable_ipv6=0" &&
	inB sysctl -qw "net.ipv6.conf.$DEV_B.disable_ipv6=0" &&
	inA ip -6 addr add fd00:db8::1/64 dev "$DEV_A" nodad &&
	inB ip -6 addr add fd00:db8::2/64 dev "$DEV_B" nodad ||
	hbm_fatal "IPv6 addresses"
inA sysctl -qw net.ipv6.auto_flowlabels=0 || hbm_fatal "no flow labels"
ecn_sysctls dctcp 1 1
ce0=$(hbm_stat stats.ce) p0=$(hbm_stat stats.packets) rx0=$(ce6_rx)
inB iperf3 -s -1 -D -p 5202 >/dev/null 2>&1
sleep 0.3
g6=$(inA iperf3 -6 -c fd00:db8::2 -p 5202 -t 3 -P 2 -J |
	jq -r '.end.sum_received.bits_per_second / 1e6')
ce1=$(hbm_stat stats.ce) p1=$(hbm_stat stats.packets) rx1=$(ce6_rx)
for v in "$ce0" "$p0" "$rx0" "$g6" "$ce1" "$p1" "$rx1"; do
	hbm_figure "IPv6 dctcp: counters and goodput" "$v"
done
ce6=$((ce1 - ce0)) pkts6=$((p1 - p0))
hbm_report "IPv6 dctcp: $g6 Mbit/s; packets $pkts6, ce $ce6 (receiver +$((rx1 - rx0))); IPv4: packets $pkts4, ce $ce4"
assert_gt "$ce6" 0 "IPv6 dctcp: CE marks set"
assert_gt "$((rx1 - rx0))" 0 "IPv6 dctcp: CE marks seen by the receiver (Ip6InCEPkts)"
hbm_check "$pkts6 > 0 && $pkts4 > 0 && $ce6 / $pkts6 >= 0.5 * $ce4 / $pkts4" \
	"IPv6 dctcp: CE on at least half IPv4's share of packets ($ce6 of $pkts6; $ce4 of $pkts4)"

# --ecn off: nothing sets CE; ECN senders get CN (or drops) instead.
ecn_sysctls dctcp 1 1
run dctcp off
assert_eq "$ce" 0 "dctcp, ecn off: no CE marks"
assert_eq "$cerx" 0 "dctcp, ecn off: receiver saw no CE"
assert_gt "$((drops + cn))" "$((on_drops[dctcp] + on_cn[dctcp]))" \
	"dctcp, ecn off: more drops + CN than with ecn on"
assert_gt "$drops" "${on_drops[dctcp]}" \
	"dctcp, ecn off: more drops than with ecn on (DCTCP ignores CN)"

ecn_sysctls cubic 1 1
run cubic-ecn off
assert_eq "$ce" 0 "cubic+ECN, ecn off: no CE marks"
assert_eq "$cerx" 0 "cubic+ECN, ecn off: receiver saw no CE"
assert_gt "$((drops + cn))" "$((on_drops[cubic-ecn] + on_cn[cubic-ecn]))" \
	"cubic+ECN, ecn off: more drops + CN than with ecn on"

# Not ECN-capable: the marker changes nothing for it, on or off.
ecn_sysctls cubic 0 1
run cubic off
assert_eq "$ce" 0 "cubic without ECN, ecn off: no CE marks"
assert_gt "$cn" 0 "cubic without ECN, ecn off: CN signals, as with ecn on"

inA "$HBM" show "$DEV_A"
assert_ok "detach" inA "$HBM" detach "$DEV_A"
assert_eq "$(hbm_markers)" 0 "detach took the marker off the hook"
hbm_done
