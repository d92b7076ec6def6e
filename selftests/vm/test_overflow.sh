#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A full flow table: 75000 UDP flows of one packet each, more than
# bpf_hbm's 65536 flow slots, queued at once (1 Mbit/s and 1 KB packets
# release about 120 a second; thresholds far out, so nothing is dropped
# for delay). The flows that find no slot share the instance's overflow
# flow instead of being dropped: no packet is lost, the backlogged flows
# stay within the table, and the overflow flow holds the rest. A reset
# (link down) frees all of it and gives the device's clock back the
# backlog's 10 minutes, so traffic passes at once after it. The table
# then fills again, and with the rate raised every packet drains, the
# overflow flow's included: after a reset it must count empty, or the
# packets it takes later would never leave.
. "$(dirname "$0")/lib.sh"

N=75000

hbm_veth_setup || hbm_fatal "veth setup"
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root --rate 1mbit \
	--mark 1000s --drop 2000s --drop-large 2000s --limit 200000 || hbm_done

rx0=$(inB cat "/sys/class/net/$DEV_B/statistics/rx_packets")
hbm_figure "$DEV_B's rx_packets" "$rx0"
res=$(inA "$HBM_TOOLS/flood" -s "$ADDR_A" -d "$ADDR_B" -f $N -c $N -l 1000)
# One snapshot of the qdisc's sent and queued packets: they move on.
read -r out qlen < <(inA tc -s -j qdisc show dev "$DEV_A" root |
	jq -r '"\(.[0].packets) \(.[0].qlen)"')
rx=$(( $(inB cat "/sys/class/net/$DEV_B/statistics/rx_packets") - rx0 ))
flows=$(hbm_stat flows)
inA "$HBM" show "$DEV_A"
hbm_figure "tc -s qdisc: packets" "$out"
hbm_figure "tc -s qdisc: qlen" "$qlen"
hbm_figure "show --json: flows" "$flows"

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

inA ip link set dev "$DEV_A" down
assert_eq "$(hbm_qdisc qlen)" 0 "link down: the reset freed every queued packet"
assert_eq "$(hbm_stat flows)" 0 "and every flow"
inA ip link set dev "$DEV_A" up
# The backlog's slots went back to the clock with it: traffic passes at
# once (this ping also resolves the neighbour the link down flushed).
assert_ok "traffic passes after the reset" inA ping -c 1 -W 2 "$ADDR_B"

# A rate at which the table still fills but the backlog drains within a
# few minutes: packets keep the departure times they were given, so
# raising the rate later would not hurry them. 8 Mbit/s releases about
# 960 of these packets a second; the flood sends 4-10 thousand a second
# here, so 66-90 thousand are queued when it ends (at 30 Mbit/s a slow TCG
# host's flood, 3.8 thousand a second, was drained as fast as it came).
N2=100000
assert_ok "rate 8mbit" inA "$HBM" set "$DEV_A" --rate 8mbit
res=$(inA "$HBM_TOOLS/flood" -s "$ADDR_A" -d "$ADDR_B" -f $N2 -c $N2 -l 1000)
qlen=$(hbm_qdisc qlen)
flows=$(hbm_stat flows)
hbm_figure "tc -s qdisc: qlen" "$qlen"
hbm_figure "show --json: flows" "$flows"
assert_gt "$((qlen - flows))" 1000 "the table full again: the overflow flow in use ($qlen queued, $res)"
t0=$SECONDS
for _ in $(seq 360); do
	qlen=$(hbm_qdisc qlen)
	[ "$qlen" = 0 ] && break
	sleep 0.5
done
assert_eq "$qlen" 0 "every packet leaves in time ($((SECONDS - t0)) s, at most 180 s + reads), the overflow flow's too"
assert_eq "$(hbm_stat drops.total)" 0 "still no packet dropped"

assert_ok "detach" inA "$HBM" detach "$DEV_A"
assert_eq "\"$(hbm_qdisc kind)\"" '"noqueue"' "back to the default qdisc"
hbm_done
