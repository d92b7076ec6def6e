#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A thin flow among 8 bulk flows waits a few quanta, not for the bulk
# backlog: 8 flows queue 500 datagrams of 1400 bytes each, all due at one
# instant; a thin flow queues 100-byte datagrams due every 500 us from
# 200 us after it. Everything is queued before the first departure, so
# that the measurement is the qdisc's alone (a sender woken during the
# drain would be starved by it under TCG, and its datagram reach the qdisc
# late). Between a thin datagram's departure time and its transmission,
# A's device may transmit at most one round of the bulk flows' quanta
# (3 datagrams each, quantum 2 MTU: 24) at the median; in departure order
# it would wait for the whole backlog.
. "$(dirname "$0")/lib.sh"

hbm_sched_attach
tx=/tmp/$HBM_TEST.tx
hbm_sched_sniff 4100 "$tx"
t=$(hbm_sched_at 3000)
for k in 1 2 3 4 5 6 7 8; do
	hbm_sched_send $((7600 + k)) -c 500 -s 1400 -A "$t" &
done
hbm_sched_send 7699 -c 100 -s 100 -A $((t + 200000)) -i 500000 &
wait $HBM_SCHED_RX
wait
assert_eq "$(hbm_sched_late_sends "$tx")" 0 "every stamped datagram was queued before its departure time"

# For each thin datagram due before the last bulk one left: the bulk
# datagrams transmitted between its departure time and its transmission
# (its wait), and its delay past that time in us.
awk '$2 == 7699 { td[++k] = $5; tr[k] = $1; next }
	{ br[++m] = $1; if ($1 > blast) blast = $1 }
	END { for (i = 1; i <= k; i++) { if (td[i] > blast) continue
		c = 0; for (j = 1; j <= m; j++) if (br[j] > td[i] && br[j] < tr[i]) c++
		print c, int((tr[i] - td[i]) / 1000) } }' "$tx" >"$tx.thin"
n=$(wc -l <"$tx")
samples=$(wc -l <"$tx.thin")
med=$(cut -d' ' -f1 "$tx.thin" | hbm_quantile 50)
p90=$(cut -d' ' -f1 "$tx.thin" | hbm_quantile 90)
dmed=$(cut -d' ' -f2 "$tx.thin" | hbm_quantile 50)
backlog=$(awk '$2 != 7699' "$tx" | wc -l)
assert_eq "$n" 4100 "every datagram was transmitted"
assert_ge "$samples" 3 "thin datagrams due while the bulk backlog drained ($samples)"
assert_le "$med" 24 "a thin datagram waited at most one round of the 8 bulk flows' quanta at the median ($med bulk datagrams; 90th percentile $p90; backlog $backlog)"
hbm_report "thin flow among 8 bulk: $samples samples, bulk datagrams ahead median $med, p90 $p90; past its time by ${dmed} us at the median"
hbm_done
