#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A full flow table: 75000 UDP flows of one packet each, more than
# bpf_hbm's 65536 flow slots, queued at once (1 Mbit/s and 1 KB packets
# release about 120 a second; thresholds far out, so nothing is dropped
# for delay). The flows that find no slot share the instance's overflow
# flow instead of being dropped: no packet is lost, the backlogged flows
# stay within the table, and the overflow flow holds the rest. Detach
# frees all of it.
. "$(dirname "$0")/lib.sh"

N=75000

hbm_veth_setup || hbm_fatal "veth setup"
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root --rate 1mbit \
	--mark 1000s --drop 2000s --drop-large 2000s --limit 200000 || hbm_done

rx0=$(inB cat "/sys/class/net/$DEV_B/statistics/rx_packets")
res=$(inA "$HBM_TOOLS/flood" -s "$ADDR_A" -d "$ADDR_B" -f $N -c $N -l 1000)
# One snapshot of the qdisc's sent and queued packets: they move on.
read -r out qlen < <(inA tc -s -j qdisc show dev "$DEV_A" root |
	jq -r '"\(.[0].packets) \(.[0].qlen)"')
rx=$(( $(inB cat "/sys/class/net/$DEV_B/statistics/rx_packets") - rx0 ))
flows=$(hbm_stat flows)
inA "$HBM" show "$DEV_A"

sent=${res#sent=}
assert_eq "${sent%% *}" $N "flood sent $N packets ($res)"
assert_eq "$(hbm_stat drops.total)" 0 "no packet dropped"
assert_eq "$((out + qlen))" $N "every packet sent on or queued ($out + $qlen)"
assert_ge "$rx" "$out" "and what was sent on arrived ($rx)"
assert_le "$flows" 65536 "backlogged flows within the table"
# One packet per flow: what the flows beyond one each hold is the
# overflow flow's (a hash collision would add one or two).
assert_gt "$((qlen - flows))" 1000 "the overflow flow holds the rest ($((qlen - flows)) packets)"
hbm_report "$N flows: $flows backlogged flows for $qlen queued packets, $out sent on"

assert_ok "detach" inA "$HBM" detach "$DEV_A"
assert_eq "\"$(hbm_qdisc kind)\"" '"noqueue"' "back to the default qdisc"
hbm_done
