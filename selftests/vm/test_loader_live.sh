#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The loader's commands on a device carrying traffic, as a user sees them:
# (a) after `bpf-hbm load`, a plain `tc qdisc add ... bpf_hbm` under a
#     running sender shapes to the default 1 Gbit/s (bpf-hbm show reports
#     the default config, and a sender that exceeds 1 Gbit/s unshaped is
#     held to it; a VM where no sender does fails: it can't tell);
# (b) `bpf-hbm set --rate` on a TCP transfer, at the defaults otherwise,
#     changes the rate the peer receives within a second, without
#     re-attaching, without a burst of drops and without breaking the
#     connection;
# (c) `bpf-hbm detach` under 4 full TCP flows, with a thousand skbs
#     queued, restores noqueue, traffic keeps flowing, and every skb the
#     qdisc held is freed (skbuff slab back to its baseline).
. "$(dirname "$0")/lib.sh"

PIN=/sys/fs/bpf/bpf_hbm
loaded_before=0
[ -e "$PIN/link" ] && loaded_before=1

root_handle() {
	inA tc -j qdisc show dev "$DEV_A" root | jq -r '.[0].handle // empty'
}
# Nothing for a rate that is not a number: an assertion on it then fails.
pct() {
	hbm_is_num "$1" || return 1
	awk -v g="$1" -v r="$2" 'BEGIN { printf "%.1f", 100 * g / r }'
}

# Under TCG, and more so beside another VM, starting a process takes from
# a fraction of a second to seconds: the steps below wait for what they
# need rather than sleeping a fixed time.

# serve PORT: a one-shot iperf3 server on B, listening when this returns.
serve() {
	local i

	inB iperf3 -s -1 -D -p "$1" >/dev/null 2>&1
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -n "$(inB ss -Hltn "sport = :$1")" ] && return 0
		sleep 0.2
	done
	echo "iperf3 server on port $1 not listening"
	return 1
}

# flowing: wait (10 s at most) until B receives over 4 Mbit/s.
flowing() {
	inB bash -c 'f=/sys/class/net/$1/statistics/rx_bytes
		for i in {1..50}; do
			read -r a <"$f"; sleep 0.2; read -r b <"$f"
			[ $((b - a)) -gt 100000 ] && exit 0
		done
		exit 1' bash "$DEV_B"
}

# rates PORT IPERF3-ARGS...: one iperf3 from A; prints the L2 rate
# (Mbit/s) B receives over 2 s with A's default root qdisc, then over 2 s
# from 0.5 s after a `tc qdisc add root bpf_hbm` made here, mid-transfer,
# and that tc's exit status; "none" for each one not measured (no traffic,
# or a counter that could not be read), which fails the checks on it.
rates() {
	local port=$1 pid un=none sh=none add=none

	shift
	serve "$port" >&2
	# Not through inA: $! must be iperf3 itself, for the SIGINT below.
	ip netns exec "$NS_A" iperf3 -c "$ADDR_B" -p "$port" -t 30 "$@" \
		>/dev/null 2>&1 &
	pid=$!
	if flowing; then
		sleep 0.5
		un=$(hbm_rx_rate 2)
		inA tc qdisc add dev "$DEV_A" root bpf_hbm
		add=$?
		sleep 0.5
		sh=$(hbm_rx_rate 2)
	else
		echo "iperf3 $* to port $port: no traffic reached B" >&2
	fi
	un=${un:-none} sh=${sh:-none}
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	echo "$un $sh $add"
}

section() { echo "== $* (at ${SECONDS}s)"; }

hbm_veth_setup || hbm_fatal "veth setup"
inA sysctl -qw net.ipv4.tcp_congestion_control=cubic

section "(a)"
## (a) tc qdisc add after bpf-hbm load: the default 1 Gbit/s. A UDP
## sender (2 Gbit/s offered) and 2 TCP flows, each measured unshaped, then
## with bpf_hbm added under it. Each shaped rate must be at most 101% of
## 1 Gbit/s, and bpf-hbm show must report the defaults (1 Gbit/s) for the
## qdisc tc added. Only a sender that beats 1 Gbit/s unshaped (by 5%) can
## show the shaper at work: when neither does, the test fails, saying that
## this VM cannot tell the default rate's shaping apart, rather than pass
## on a bound no sender came near. A rate that could not be read fails.
hbm_load
read -r udp_un udp_sh udp_add <<<"$(rates 5301 -u -b 2G -l 1472)"
assert_eq "$udp_add" 0 "tc qdisc add root bpf_hbm under UDP"
inA tc qdisc del dev "$DEV_A" root
read -r tcp_un tcp_sh tcp_add <<<"$(rates 5302 -P 2)"
assert_eq "$tcp_add" 0 "tc qdisc add root bpf_hbm under TCP"
inA "$HBM" show "$DEV_A"
j=$(inA "$HBM" show "$DEV_A" --json |
    jq -c '.devices[0] | {configured, instances, rate: .config.rate_bps}')
assert_ok "show: the default config, 1 Gbit/s ($j)" test \
	"$j" = '{"configured":false,"instances":1,"rate":1000000000}'
assert_gt "$tcp_sh" 10 "TCP passes through the default bpf_hbm ($tcp_sh Mbit/s)"
held=0
for s in "UDP 2G:$udp_un:$udp_sh" "TCP x2:$tcp_un:$tcp_sh"; do
	IFS=: read -r what un sh <<<"$s"
	hbm_report "(a) $what: unshaped $un Mbit/s, default bpf_hbm $sh Mbit/s (L2)"
	assert_le "$sh" 1010 "$what: at most 101% of 1 Gbit/s (unshaped $un)"
	assert_gt "$un" 0 "$what: the unshaped rate was measured ($un Mbit/s)" &&
		awk -v u="$un" 'BEGIN { exit !(u > 1050) }' && held=1
done
if [ "$held" = 1 ]; then
	echo "PASS: (a) a sender beat 1 Gbit/s unshaped: the shaping was seen"
else
	echo "FAIL: (a) no sender beat 1.05 Gbit/s unshaped (UDP $udp_un, TCP $tcp_un Mbit/s): this VM cannot tell the default rate's shaping apart"
	HBM_FAILED=1
fi
assert_ok "tc qdisc del" inA tc qdisc del dev "$DEV_A" root

section "(b)"
## (b) set --rate mid-transfer, at the defaults (no --burst, --mark or
## --drop: what a user runs): one TCP flow at 200 Mbit/s, set to 100 once
## it has run for ~5 s. The L2 rate B receives over the second after the
## first one that follows the set is 90-110% of 100; the first second must
## already be under 125% of 100, and the 2 s before the set 85-110% of 200.
## Drops: the threshold drops from the set until ~1.5 s after it (when the
## sender's window, sized for 200, meets the new 100), per second, are at
## most 3x those of the window just before the set, or 1% of the full
## frames per second 100 Mbit/s carries (83/s), whichever is larger: the
## change costs no burst of losses. The windows are the time between reads
## of the counters, seconds apart under TCG, so both are taken as rates. A
## count that cannot be read fails the test.
R1=200 R2=100
thr() { # THR: threshold drops, THR_T: when they were read
	local j

	j=$(inA "$HBM" show "$DEV_A" --json)
	THR_T=$EPOCHREALTIME
	THR=$(echo "$j" | jq -er '.devices[0].drops.threshold') || THR=
	[[ $THR =~ ^[0-9]+$ ]] || hbm_fatal "show --json gave no threshold drops: '$j'"
}
assert_ok "attach --rate ${R1}mbit" inA "$HBM" attach "$DEV_A" --parent root \
	--rate "${R1}mbit" || hbm_done
h0=$(root_handle)
[[ $h0 =~ ^[0-9a-f]+:$ ]] || hbm_fatal "tc -j qdisc show gave no root handle: '$h0'"
serve 5305
# Long enough for the slowest VM; stopped once measured.
ip netns exec "$NS_A" iperf3 -c "$ADDR_B" -p 5305 -t 60 \
	>"/tmp/$HBM_TEST.b" 2>&1 &
ipb=$!
flowing
sleep 2
thr; d0=$THR t0=$THR_T
r_before=$(hbm_rx_rate 2)
thr; d1=$THR t1=$THR_T
inA "$HBM" set "$DEV_A" --rate "${R2}mbit"
set_rc=$?
r_first=$(hbm_rx_rate 1)
thr; d2=$THR t2=$THR_T
r_after=$(hbm_rx_rate 1)
kill -0 "$ipb" 2>/dev/null
alive=$?
kill -INT "$ipb" 2>/dev/null
wait "$ipb"
h1=$(root_handle)
inA "$HBM" show "$DEV_A"
tail -n 4 "/tmp/$HBM_TEST.b"
assert_eq "$set_rc" 0 "set --rate ${R2}mbit"
assert_between "$(pct "$r_before" $R1)" 85 110 "before the set: $r_before Mbit/s, 85-110% of $R1"
assert_le "$(pct "$r_first" $R2)" 125 "first second after the set: $r_first Mbit/s, under 125% of $R2"
assert_between "$(pct "$r_after" $R2)" 90 110 "next second: $r_after Mbit/s, 90-110% of $R2"
rates=$(awk -v a="$((d1 - d0))" -v b="$((d2 - d1))" -v t0="$t0" -v t1="$t1" \
	-v t2="$t2" 'BEGIN { printf "%.2f %.2f %.1f %.1f", a / (t1 - t0),
		b / (t2 - t1), t1 - t0, t2 - t1 }')
read -r before after w0 w1 <<<"$rates"
floor=$((R2 * 1000000 / (1514 * 8) / 100))
bound=$(awk -v b="$before" -v f="$floor" 'BEGIN { print (3 * b > f ? 3 * b : f) }')
assert_le "$after" "$bound" "threshold drops/s after the set: $after ($((d2 - d1)) in ${w1}s; before $before/s, $((d1 - d0)) in ${w0}s)"
assert_ok "set did not re-attach (handle $h0 -> $h1)" test "$h1" = "$h0"
assert_eq "$alive" 0 "the TCP connection survived the set"
hbm_report "(b) $R1 -> $R2 Mbit/s at the defaults: before $r_before, first second $r_first, next second $r_after Mbit/s; threshold drops $before/s before, $after/s after"
assert_ok "detach" inA "$HBM" detach "$DEV_A"

section "(c)"
## (c) detach under load: 4 TCP flows (200 Mbit/s) at 100, and 1000 UDP
## datagrams that ask (SO_TXTIME) to leave 20 s later. TCP small queues
## keep only a couple of skbs per flow in a qdisc, too few for the slab to
## show; the datagrams wait in bpf_hbm (thresholds, horizon and flow limit
## out of their way) as del_frees has them, so that when bpf_hbm is
## detached under the flows a thousand skbs must be freed: the skbuff slab
## then returns to within hbm_skb_slack of its baseline.
RATE=100
assert_ok "attach --rate ${RATE}mbit" inA "$HBM" attach "$DEV_A" \
	--parent root --rate "${RATE}mbit" --burst "$HBM_VM_BURST" \
	--mark 1s --drop 2s --drop-large 2s --horizon 60s --flow-limit 2000 ||
	hbm_done
IFX_A=$(inA cat "/sys/class/net/$DEV_A/ifindex")
NETNS_A=$(inA stat -L -c %i /proc/self/ns/net)
# The count below must see the instance attach made, or its 0 after the
# detach proves nothing.
n=$(hbm_map_count "$PIN/hbm_instances" "$IFX_A" "$NETNS_A")
assert_eq "$n" 1 "hbm_instances holds $DEV_A's instance while attached (bpftool)"
sleep 0.5
base=$(hbm_skb_objs head)
hbm_figure "skbuff_head_cache in /proc/slabinfo" "$base"
serve 5306
# 4 x 50 Mbit/s: twice the rate, and after the detach not so much that
# the VM's CPUs can do nothing else.
ip netns exec "$NS_A" iperf3 -c "$ADDR_B" -p 5306 -P 4 -b 50M -t 60 \
	>"/tmp/$HBM_TEST.c" 2>&1 &
ipc=$!
flowing
sleep 1
inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 7100 -c 1000 -s 1400 \
	-t 20000000000 -B 8000000 >/dev/null
shaped=$(hbm_rx_rate 1)
st=$(inA tc -s -j qdisc show dev "$DEV_A" root)
[[ $st =~ \"qlen\":([0-9]+) ]] && q=${BASH_REMATCH[1]} || q=
full=$(hbm_skb_objs head)
out=$(inA "$HBM" detach "$DEV_A" 2>&1)
det_rc=$?
kind=$(inA tc -j qdisc show dev "$DEV_A" root)
[[ $kind =~ \"kind\":\"([a-z_]+)\" ]] && kind=${BASH_REMATCH[1]}
unshaped=$(hbm_rx_rate 1)
inA ping -c 3 -i 0.2 -W 2 -q "$ADDR_B" >"/tmp/$HBM_TEST.ping" 2>&1
ping_rc=$?
kill -0 "$ipc" 2>/dev/null
alive=$?
kill -INT "$ipc" 2>/dev/null
wait "$ipc"
sleep 1
after=$(hbm_skb_objs head)
tail -n 4 "/tmp/$HBM_TEST.c"
assert_ok "detach under load: exit $det_rc, silent ('$out')" test "$det_rc" = 0 -a -z "$out"
assert_ge "$q" 1000 "the datagrams (and TCP's skbs) were queued in bpf_hbm ($q)"
assert_ge "$full" "$((base + 500))" "the slab held them ($base -> $full)"
assert_ok "root is noqueue again ($kind)" test "$kind" = noqueue
assert_gt "$unshaped" "$((RATE * 11 / 10))" "traffic flows, unshaped, after detach ($unshaped Mbit/s, shaped $shaped)"
assert_eq "$ping_rc" 0 "ping works after detach"
assert_eq "$alive" 0 "the running transfer survived the detach"
margin=$(hbm_skb_slack)
assert_le "$after" "$((base + margin))" "skbuff slab back to baseline ($base -> $full at detach -> $after, margin $margin)"
r=$(inA "$HBM" show "$DEV_A" 2>&1)
assert_ok "show: no longer attached ($r)" test \
	"$r" = "bpf-hbm: couldn't show $DEV_A: bpf_hbm not attached to $DEV_A"
n=$(hbm_map_count "$PIN/hbm_instances" "$IFX_A" "$NETNS_A")
assert_eq "$n" 0 "no instance of $DEV_A left in hbm_instances (bpftool)"
hbm_report "(c) ${RATE} Mbit/s, 4 x 50 Mbit/s offered: $shaped Mbit/s shaped, qlen $q before detach, then $unshaped Mbit/s; slab $base -> $full -> $after"

if [ "$loaded_before" = 0 ]; then
	assert_ok "unload what this test loaded" "$HBM" unload
fi
hbm_report "$SECONDS s"
hbm_done
