#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The 2-packet guard: a request/response TCP flow (never more than one
# packet in flight) competing with 4 bulk cubic flows loses no packet to
# the thresholds: it retransmits nothing, and the qdisc counts the drops it
# spared (guard saves) while the bulk flows do get dropped.
. "$(dirname "$0")/lib.sh"

hbm_veth_setup || hbm_fatal "veth setup"
inA sysctl -qw net.ipv4.tcp_congestion_control=cubic
assert_ok "attach" inA "$HBM" attach "$DEV_A" --rate 100mbit \
	--burst "$HBM_VM_BURST" --parent root || hbm_done

inB netserver -p 12865 >/dev/null 2>&1
inB iperf3 -s -1 -D -p 5203 >/dev/null 2>&1
sleep 0.3
inA iperf3 -c "$ADDR_B" -p 5203 -P 4 -t 8 >"/tmp/$HBM_TEST.iperf" 2>&1 &
sleep 1
rr=$(inA netperf -H "$ADDR_B" -p 12865 -t TCP_RR -l 6 -P 0 -- -r 64,64 \
	-o THROUGHPUT,LOCAL_TRANSPORT_RETRANS,REMOTE_TRANSPORT_RETRANS)
wait
tail -n 4 "/tmp/$HBM_TEST.iperf"
echo "netperf: $rr"
inA "$HBM" show "$DEV_A"
tps=$(echo "$rr" | tail -n 1 | cut -d, -f1)
retrans=$(echo "$rr" | tail -n 1 | cut -d, -f2)
assert_gt "$tps" 0 "the RR flow made progress"
assert_eq "$retrans" 0 "the RR flow retransmitted nothing"
assert_gt "$(hbm_stat stats.guard_saves)" 0 "guard saves counted"
assert_gt "$(hbm_stat drops.threshold)" 0 "bulk flows were dropped by the threshold"
hbm_report "RR ${tps} trans/s, retrans ${retrans}; guard saves $(hbm_stat stats.guard_saves), threshold drops $(hbm_stat drops.threshold)"
hbm_done
