#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A reset (link down) frees the queued packets and gives back what each was
# charged to the device's clock, at the rate it was charged: after a
# backlog of 11 s queued at 1 Mbit/s and `set --rate 1gbit`, the clock is
# back at now, and a ping after the link comes up is not held behind
# packets that were freed. (Refunded at the new rate, the clock would stay
# seconds ahead, and the ping wait that long.)
. "$(dirname "$0")/lib.sh"

hbm_veth_setup || hbm_fatal "veth setup"
# Thresholds of seconds, so that a UDP backlog of 11 s is accepted.
assert_ok "attach --rate 1mbit, 20 s mark" inA "$HBM" attach "$DEV_A" \
	--rate 1mbit --mark 20s --drop 30s --flow-limit 2000 --parent root ||
	hbm_done

# 1000 datagrams of 1442 bytes on the wire: 11.5 ms each at 1 Mbit/s (a
# socket buffer for all of them, or the sender would wait for the queue).
inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 9 -S 7401 -c 1000 -s 1400 \
	-B 8000000 >/dev/null
q=$(hbm_qdisc qlen)
vq=$(hbm_stat stats.vq_delay_ns)
assert_gt "${q:-0}" 500 "a backlog queued at 1 Mbit/s (qlen $q)"
assert_gt "${vq:-0}" 5000000000 "the clock runs ahead by its charge (${vq} ns)"

assert_ok "set --rate 1gbit" inA "$HBM" set "$DEV_A" --rate 1gbit
inA ip link set "$DEV_A" down
assert_eq "$(hbm_qdisc qlen)" 0 "the reset freed the backlog"
inA ip link set "$DEV_A" up
sleep 1

rtt=$(inA ping -c 3 -i 0.2 -W 2 -q "$ADDR_B" | awk -F/ '/^rtt/ { print $5 }')
inA "$HBM" show "$DEV_A"
assert_lt "${rtt:-99999}" 100 "ping after the reset not held (avg ${rtt:-lost} ms)"
vq=$(hbm_stat stats.vq_delay_ns)
assert_lt "${vq:-99999999999}" 10000000 "the clock is back at now (vq delay ${vq} ns)"
hbm_done
