#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The queue limits: one flow queues at most flow-limit packets, the
# instance at most limit, the excess is dropped and counted by reason, and
# what was queued is all delivered in the end. Datagrams ask to leave 30 s
# out (SO_TXTIME) so they are all queued when the limits are checked: the
# checks take 10-15 s under a slow TCG host, and with 8 s the first flow
# left before the last of them. The horizon goes out to 60 s with it.
. "$(dirname "$0")/lib.sh"

hbm_veth_setup || hbm_fatal "veth setup"
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root --rate 1gbit \
	--mark 10s --drop 20s --drop-large 20s --limit 120 --flow-limit 50 \
	--horizon 60s ||
	hbm_done

rx0=$(inB cat /sys/class/net/$DEV_B/statistics/rx_packets)
hbm_figure "$DEV_B's rx_packets" "$rx0"
# One flow, 80 datagrams: 50 queue, 30 hit the flow limit.
t0=$SECONDS
inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 9 -S 7201 -c 80 \
	-t 30000000000 >/dev/null
assert_eq "$(hbm_qdisc qlen)" 50 "one flow holds flow-limit packets"
assert_eq "$(hbm_stat drops.flow_limit)" 30 "the rest counted as flow-limit drops"
assert_eq "$(hbm_stat flows)" 1 "one backlogged flow"

# Three more flows of 40: 40 + 30 more fit under the instance limit of
# 120, the third flow finds the queue full.
for p in 7202 7203 7204; do
	inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 9 -S $p -c 40 \
		-t 30000000000 >/dev/null
done
assert_eq "$(hbm_qdisc qlen)" 120 "the instance holds limit packets"
assert_eq "$(hbm_stat drops.limit)" 50 "the rest counted as limit drops"
assert_eq "$(hbm_qdisc drops)" 80 "tc counts all 80 drops"
assert_eq "$(hbm_stat flows)" 3 "three backlogged flows"

# Released when due, and not before, whatever the checks took.
for i in $(seq 1 100); do
	[ "$(hbm_qdisc qlen)" = 0 ] && break
	sleep 0.5
done
empty=$((SECONDS - t0))
# t0 is taken before the first send, in whole seconds: 29 at the least.
assert_ge "$empty" 29 "nothing left before its txtime: queue empty ${empty}s after the first send (30 s)"
rx=$(( $(inB cat /sys/class/net/$DEV_B/statistics/rx_packets) - rx0 ))
assert_eq "$(hbm_qdisc qlen)" 0 "all released when due"
assert_eq "$rx" 120 "every queued packet delivered"
assert_eq "$(hbm_stat flows)" 0 "emptied flows freed"
hbm_done
