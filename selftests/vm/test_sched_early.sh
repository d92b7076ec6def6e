#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# No datagram leaves before its departure time, whatever the order of
# service: four flows at once, each with 50 datagrams stamped (SO_TXTIME)
# over 10 ms and out of order within the flow (the per-flow queue sorts
# them; a flow waiting on a later head must not release an earlier one
# early, nor hold it forever). The moment A's device transmits each (a
# packet socket's stamp) is compared with its departure time on the same
# clock.
. "$(dirname "$0")/lib.sh"

hbm_sched_attach
tx=/tmp/$HBM_TEST.tx
hbm_sched_sniff 200 "$tx"
t=$(hbm_sched_at 3000)
for k in 0 1 2 3; do
	hbm_sched_send $((7300 + k)) -c 50 -s 600 -A $((t + k * 50000)) \
		-i 200000 -j &
done
wait $HBM_SCHED_RX
wait
assert_eq "$(hbm_sched_late_sends "$tx")" 0 "every stamped datagram was queued before its departure time"

n=$(wc -l <"$tx")
early=$(awk '$1 - $5 < -5000' "$tx" | wc -l)
worst=$(awk '{ print int(($1 - $5) / 1000) }' "$tx" | hbm_quantile 0)
med=$(awk '{ print int(($1 - $5) / 1000) }' "$tx" | hbm_quantile 50)
assert_eq "$n" 200 "every datagram was transmitted"
assert_eq "$early" 0 "none before its departure time (earliest: ${worst} us after it)"
assert_lt "$med" 50000 "released on time, not held (median ${med} us late)"
hbm_report "4 flows x 50 out-of-order SO_TXTIME datagrams: earliest ${worst} us after its time, median ${med} us"
assert_eq "$(hbm_qdisc qlen)" 0 "nothing left queued"
hbm_done
