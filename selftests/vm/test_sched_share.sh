#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Backlogged flows share the link by bytes, not by packets (deficit round
# robin): four flows fall due together, two of 200 datagrams of 1400 bytes
# and two of 1000 of 280 bytes (280 KB each). Until the first of them
# drains, each must have had its equal share of the bytes on the wire
# (what the quantum counts: payload plus 42 bytes of UDP, IP and
# Ethernet headers), within 10%.
# Served a packet at a time, the small-packet flows would get a fifth of
# what the others get.
. "$(dirname "$0")/lib.sh"

hbm_sched_attach
tx=/tmp/$HBM_TEST.tx
hbm_sched_sniff 2400 "$tx"
t=$(hbm_sched_at 3000)
hbm_sched_send 7501 -c 200 -s 1400 -A "$t" &
hbm_sched_send 7502 -c 200 -s 1400 -A "$t" &
hbm_sched_send 7503 -c 1000 -s 280 -A "$t" &
hbm_sched_send 7504 -c 1000 -s 280 -A "$t" &
wait $HBM_SCHED_RX
wait
assert_eq "$(hbm_sched_late_sends "$tx")" 0 "every stamped datagram was queued before its departure time"

# Bytes per flow in arrival order until one flow's last datagram.
read -r n lo hi mean shares < <(awk '
	{ b[$2] += $6 + 42; last = ($2 < 7503 ? 199 : 999) }
	$3 == last && !done { done = 1; for (f in b) { s += b[f]; k++ }
		m = s / k; lo = 1e18; hi = 0
		for (f in b) { if (b[f] < lo) lo = b[f]; if (b[f] > hi) hi = b[f]
			sh = sh sprintf("%d:%.0fKB,", f, b[f] / 1000) } }
	END { if (!done) { print NR, "none", "none", 0, "-"; exit }
	      printf "%d %d %d %d %s\n", NR, lo, hi, m, sh }' "$tx")
assert_eq "$n" 2400 "every datagram was transmitted"
assert_ge "$lo" "$(( mean * 9 / 10 ))" "the least served flow within 10% of the mean ($shares)"
assert_le "$hi" "$(( mean * 11 / 10 ))" "the most served flow within 10% of the mean"
hbm_report "bytes per flow until the first drained: $shares"
hbm_done
