#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The loader's commands on a device carrying traffic, as a user sees them:
# (a) after `bpf-hbm load`, a plain `tc qdisc add ... bpf_hbm` shapes to
#     the default 1 Gbit/s (bpf-hbm show reports the default config, and a
#     sender that exceeds 1 Gbit/s unshaped is held to it);
# (b) `bpf-hbm set --rate` on a TCP transfer changes the rate the peer
#     receives within a second, without re-attaching, without a burst of
#     drops and without breaking the connection;
# (c) `bpf-hbm detach` under 4 full TCP flows restores noqueue, traffic
#     keeps flowing, and every skb the qdisc held is freed (skbuff slab
#     back to its baseline).
. "$(dirname "$0")/lib.sh"

PIN=/sys/fs/bpf/bpf_hbm
loaded_before=0
[ -e "$PIN/link" ] && loaded_before=1

slab_skbs() { awk '$1 == "skbuff_head_cache" { print $2 }' /proc/slabinfo; }
root_kind() { inA tc -j qdisc show dev "$DEV_A" root | jq -r '.[0].kind'; }
root_handle() { inA tc -j qdisc show dev "$DEV_A" root | jq -r '.[0].handle'; }
pct() { awk -v g="$1" -v r="$2" 'BEGIN { printf "%.1f", 100 * g / r }'; }

# load_rate PORT IPERF3-ARGS...: the L2 rate (Mbit/s) B receives over 2 s
# in the middle of a 5 s iperf3 from A.
load_rate() {
	local port=$1 pid

	shift
	inB iperf3 -s -1 -D -p "$port" >/dev/null 2>&1
	sleep 0.3
	inA iperf3 -c "$ADDR_B" -p "$port" -t 5 "$@" >/dev/null 2>&1 &
	pid=$!
	sleep 1.5
	hbm_rx_rate 2
	wait "$pid"
}

hbm_veth_setup || hbm_fatal "veth setup"
inA sysctl -qw net.ipv4.tcp_congestion_control=cubic

## (a) tc qdisc add after bpf-hbm load: the default 1 Gbit/s.
udp_un=$(load_rate 5301 -u -b 2G -l 1472)
tcp_un=$(load_rate 5302 -P 2)
hbm_load
assert_ok "tc qdisc add root bpf_hbm" inA tc qdisc add dev "$DEV_A" root bpf_hbm
udp_sh=$(load_rate 5303 -u -b 2G -l 1472)
tcp_sh=$(load_rate 5304 -P 2)
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
	# Only a sender that beats 1 Gbit/s unshaped can show the shaper.
	if awk -v u="$un" 'BEGIN { exit !(u > 1050) }'; then
		assert_le "$sh" 1010 "$what: at most 101% of 1 Gbit/s (unshaped $un)"
		held=1
	fi
done
[ "$held" = 1 ] || hbm_report "(a) no sender beat 1 Gbit/s unshaped in this VM: checked the default config only"
assert_ok "tc qdisc del" inA tc qdisc del dev "$DEV_A" root

## (b) set --rate mid-transfer: one TCP flow at 20 Mbit/s, set to 10 after
## 3 s. The L2 rate B receives in the second before the set is 90-110% of
## 20, and in the second starting 1 s after it 90-110% of 10. Drops: the
## threshold drops in the second right after the set (when the sender's
## window, sized for 20, meets the new 10) are at most 3x those of the
## second before it, or 1% of the packets 10 Mbit/s carries in a second
## (8), whichever is larger: the sender is slowed by CN, not by losses.
thr() { inA "$HBM" show "$DEV_A" --json | jq '.devices[0].drops.threshold'; }
assert_ok "attach --rate 20mbit" inA "$HBM" attach "$DEV_A" --parent root \
	--rate 20mbit --burst "$HBM_VM_BURST" || hbm_done
h0=$(root_handle)
inB iperf3 -s -1 -D -p 5305 >/dev/null 2>&1
sleep 0.3
inA iperf3 -c "$ADDR_B" -p 5305 -t 8 -J >"/tmp/$HBM_TEST.b.json" 2>&1 &
ipb=$!
sleep 2
d0=$(thr)
r20=$(hbm_rx_rate 1)
d1=$(thr)
inA "$HBM" set "$DEV_A" --rate 10mbit
set_rc=$?
r_first=$(hbm_rx_rate 1)
d2=$(thr)
r10=$(hbm_rx_rate 1)
d3=$(thr)
wait "$ipb"
ipb_rc=$?
inA "$HBM" show "$DEV_A"
assert_eq "$set_rc" 0 "set --rate 10mbit"
assert_between "$(pct "$r20" 20)" 90 110 "before the set: $r20 Mbit/s, 90-110% of 20"
assert_between "$(pct "$r10" 10)" 90 110 "1-2 s after the set: $r10 Mbit/s, 90-110% of 10"
assert_le "$(pct "$r_first" 10)" 125 "0-1 s after the set: $r_first Mbit/s, already near 10"
before=$((d1 - d0))
after=$((d2 - d1))
bound=$((3 * before > 8 ? 3 * before : 8))
assert_le "$after" "$bound" "threshold drops, 1 s after the set: $after (1 s before: $before)"
h1=$(root_handle)
assert_ok "set did not re-attach (handle $h0 -> $h1)" test "$h1" = "$h0"
assert_eq "$ipb_rc" 0 "the TCP transfer completed"
rtx=$(jq -r '.end.sum_sent.retransmits // "?"' "/tmp/$HBM_TEST.b.json")
hbm_report "(b) 20 -> 10 Mbit/s: before $r20, first second $r_first, next second $r10 Mbit/s; threshold drops $before before, $after after, $((d3 - d2)) the second after; $rtx retransmits"
assert_ok "detach" inA "$HBM" detach "$DEV_A"

## (c) detach under load: 4 TCP flows at 100 Mbit/s. Thresholds are
## relaxed (mark 10 ms, drop 50 ms) so a standing queue of skbs sits in
## bpf_hbm when it is detached.
RATE=100
assert_ok "attach --rate ${RATE}mbit" inA "$HBM" attach "$DEV_A" \
	--parent root --rate "${RATE}mbit" --burst "$HBM_VM_BURST" \
	--mark 10ms --drop 50ms --drop-large 50ms || hbm_done
sleep 0.5
base=$(slab_skbs)
inB iperf3 -s -1 -D -p 5306 >/dev/null 2>&1
sleep 0.3
inA iperf3 -c "$ADDR_B" -p 5306 -P 4 -t 6 -i 1 -J >"/tmp/$HBM_TEST.c.json" 2>&1 &
ipc=$!
sleep 2.5
shaped=$(hbm_rx_rate 1)
q=$(hbm_qdisc qlen)
backlog=$(hbm_qdisc backlog)
full=$(slab_skbs)
out=$(inA "$HBM" detach "$DEV_A" 2>&1)
det_rc=$?
kind=$(root_kind)
unshaped=$(hbm_rx_rate 1)
inA ping -c 3 -i 0.2 -W 2 -q "$ADDR_B" >"/tmp/$HBM_TEST.ping" 2>&1
ping_rc=$?
wait "$ipc"
ipc_rc=$?
sleep 1
after=$(slab_skbs)
assert_ok "detach under load: exit $det_rc, silent ('$out')" test "$det_rc" = 0 -a -z "$out"
assert_gt "$q" 0 "packets were queued in bpf_hbm at detach ($q, ${backlog} bytes)"
assert_ok "root is noqueue again ($kind)" test "$kind" = noqueue
assert_gt "$unshaped" 0 "traffic flows after detach ($unshaped Mbit/s)"
assert_eq "$ping_rc" 0 "ping works after detach"
assert_eq "$ipc_rc" 0 "the running transfer completed"
last=$(jq -r '.intervals[-1].sum.bytes // 0' "/tmp/$HBM_TEST.c.json")
assert_gt "$last" 0 "the transfer's last second carried data ($last bytes)"
assert_le "$after" "$((base + 100))" "skbuff slab back to baseline ($base -> $full at detach -> $after)"
g=$(hbm_iperf 2)
assert_gt "$g" 0 "a new transfer works ($g Mbit/s)"
r=$(inA "$HBM" show "$DEV_A" 2>&1)
assert_ok "show: no longer attached ($r)" test \
	"$r" = "bpf-hbm: couldn't show $DEV_A: bpf_hbm not attached to $DEV_A"
hbm_report "(c) ${RATE} Mbit/s x4: $shaped Mbit/s shaped, qlen $q ($backlog bytes) at detach, then $unshaped Mbit/s; slab $base -> $full -> $after"

if [ "$loaded_before" = 0 ]; then
	assert_ok "unload what this test loaded" "$HBM" unload
fi
hbm_done
