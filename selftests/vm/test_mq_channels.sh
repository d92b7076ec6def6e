#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Under mq, raising the tx queues in use after attach (`ethtool -L`) must
# not leave the new queues unshaped: mq made a default child for every
# queue the device has, and those start carrying traffic. Attached with 2
# of 8 queues in use, raised to 8: every queue's child is bpf_hbm, flows
# spread over the new queues too, and the rate still holds.
. "$(dirname "$0")/lib.sh"

RATE=100
hbm_veth_setup 8 || hbm_fatal "veth setup"
inA ethtool -L "$DEV_A" tx 2 rx 2 || hbm_fatal "ethtool -L $DEV_A tx 2"
inB ethtool -L "$DEV_B" tx 2 rx 2 || hbm_fatal "ethtool -L $DEV_B tx 2"
children() { # shown children of kind $1
	inA tc -j qdisc show dev "$DEV_A" |
		jq -e --arg k "$1" '[.[] | select(.kind == $k)] | length'
}
assert_ok "attach --parent mq, 2 of 8 queues in use" \
	inA "$HBM" attach "$DEV_A" --parent mq --rate "${RATE}mbit" || hbm_done
# One per queue the device has, the 6 not in use included (tc shows them:
# they were grafted by a command, not made by mq).
assert_eq "$(children bpf_hbm)" 8 "2 of 8 queues in use: bpf_hbm on all 8"

inA ethtool -L "$DEV_A" tx 8 rx 8 || hbm_fatal "ethtool -L $DEV_A tx 8"
inB ethtool -L "$DEV_B" tx 8 rx 8 || hbm_fatal "ethtool -L $DEV_B tx 8"
inA tc qdisc show dev "$DEV_A"
assert_eq "$(children bpf_hbm)" 8 "raised to 8 queues: eight bpf_hbm"
n=$(inA tc -j qdisc show dev "$DEV_A" |
    jq -e '[.[] | select(.kind != "bpf_hbm" and .kind != "mq")] | length')
assert_eq "$n" 0 "no other qdisc on any queue"

g=$(hbm_iperf 5 -P 16)
hbm_figure "goodput" "$g"
pct=$(hbm_pct_of_ceiling "$g" "$RATE")
inA tc -s qdisc show dev "$DEV_A"
# Queues 3-8 carry packets: the raised queues are in use, and shaped.
new=$(inA tc -s -j qdisc show dev "$DEV_A" |
      jq -e '[.[] | select(.kind == "bpf_hbm" and .packets > 100 and
		((.parent | split(":")[1] | tonumber? // 0) > 2))] | length')
assert_ge "$new" 1 "traffic on the raised queues ($new of 6 busy)"
assert_between "$pct" 90 101 "aggregate at the device's rate after the raise (${pct}% of ceiling)"
hbm_report "mq, 2 -> 8 queues after attach, 16 flows: $g Mbit/s = ${pct}% of ceiling, $new raised queues busy"
hbm_done
