#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Under mq, each tx queue gets its own bpf_hbm child with its own queues,
# but the rate is the device's: 4 flows spread over 4 queues together stay
# at the configured rate, not 4x.
. "$(dirname "$0")/lib.sh"

RATE=100
hbm_veth_setup 4 || hbm_fatal "veth setup"
assert_ok "attach --parent mq" inA "$HBM" attach "$DEV_A" --parent mq \
	--rate "${RATE}mbit" --burst "$HBM_VM_BURST" || hbm_done
inA tc qdisc show dev "$DEV_A"
n=$(inA tc -j qdisc show dev "$DEV_A" | jq '[.[] | select(.kind == "bpf_hbm")] | length')
assert_eq "$n" 4 "one bpf_hbm per tx queue"

g=$(hbm_iperf 5 -P 8)
pct=$(hbm_pct_of_ceiling "$g" "$RATE")
inA tc -s qdisc show dev "$DEV_A"
busy=$(inA tc -s -j qdisc show dev "$DEV_A" |
       jq '[.[] | select(.kind == "bpf_hbm" and .packets > 1000)] | length')
assert_ge "$busy" 2 "traffic spread over several children"
assert_between "$pct" 90 101 "aggregate at the device's rate (${pct}% of ceiling)"
hbm_report "mq x4, ${RATE} Mbit/s, 8 flows on $busy queues: $g Mbit/s = ${pct}% of ceiling"
hbm_done
