#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A new flow is served before the old ones (sch_fq's new list): flow A
# queues 5000 datagrams that all fall due within 500 us; 200 us after the
# first of them, while A's batch drains (for tens of milliseconds), flow B
# sends one datagram, due on arrival. In the order A's device transmits
# them, B's datagram must overtake at least a fifth of A's due backlog; in
# departure order it would wait for all of A's. (When B reaches the qdisc
# is the sender's: under TCG the drain starves it, seen for up to 16 ms of
# a 98 ms drain. So how many of A's leave between B's send and its
# transmission is reported, not asserted.)
. "$(dirname "$0")/lib.sh"

hbm_sched_attach
tx=/tmp/$HBM_TEST.tx
hbm_sched_sniff 5001 "$tx"
t=$(hbm_sched_at 3000)
hbm_sched_send 7401 -c 5000 -s 200 -A "$t" -i 100 &
hbm_sched_send 7402 -c 1 -s 100 -W $((t + 200000)) &
wait $HBM_SCHED_RX
wait
assert_eq "$(hbm_sched_late_sends "$tx")" 0 "every stamped datagram was queued before its departure time"

# B's rank in transmit order, A's datagrams transmitted after it, and
# those transmitted between B's send and B's own transmission.
read -r n rank between after < <(awk '
	$2 == 7402 { rank = NR; sent = $4; txb = $1; next }
	{ a_tx[NR] = $1 }
	END { for (i = 1; i <= NR; i++) { if (!(i in a_tx)) continue
		if (a_tx[i] > sent && a_tx[i] < txb) between++
		if (rank && i > rank) after++ }
	      printf "%d %d %d %d\n", NR, rank, between, after }' "$tx")
assert_eq "$n" 5001 "every datagram was transmitted"
assert_gt "$rank" 0 "B's datagram was transmitted"
assert_ge "${after:-0}" 1000 "B overtook A's due backlog (${after:-0} of A's 5000 after it, rank $rank)"
hbm_report "new flow: rank $rank of 5001, ${between:-0} of A's datagrams between its send and its transmission, $(awk '$2 == 7402 { print int(($1 - $4) / 1000) }' "$tx") us after its send; A's batch from $(awk 'NR == 1 { f = $1 } END { print int(($1 - f) / 1000) }' "$tx") us"
hbm_done
