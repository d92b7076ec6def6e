#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# An emptied flow stays in the flow table, idle, so that its next packet
# finds it; once idle for over a second (hbm_flow_idle_ns) the garbage
# collector frees it as new flows arrive, up to two per new flow, so the
# table does not fill with flows that ended. Each wave is 1000 flows of
# one 64-byte packet, at a rate far above what the flood sends, so every
# flow empties at once.
. "$(dirname "$0")/lib.sh"

N=1000

hbm_veth_setup || hbm_fatal "veth setup"
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root --rate 10gbit ||
	hbm_done

wave() {
	inA "$HBM_TOOLS/flood" -s "$ADDR_A" -d "$ADDR_B" -f $N -c $N -o "$1" \
		>/dev/null || hbm_fatal "flood"
	sleep 0.3
}

wave 0
idle1=$(hbm_stat idle_flows)
assert_eq "$(hbm_stat flows)" 0 "the queue drained: no backlogged flow"
# A little other traffic (neighbour discovery) may add a flow or two.
assert_between "$idle1" $N $((N + 10)) "the $N emptied flows stay, idle ($idle1)"

# Within the second, the same flows again: found, not added.
wave 0
idle2=$(hbm_stat idle_flows)
assert_between "$idle2" $N $((N + 10)) "the same flows again reuse theirs ($idle2)"

# Over a second later, other flows: each frees up to two of the old ones.
sleep 1.2
wave $N
idle3=$(hbm_stat idle_flows)
assert_between "$idle3" $N $((N + 10)) \
	"$N new flows after a second idle: the old $N freed ($idle3 idle, $((2 * N)) without GC)"
assert_eq "$(hbm_stat drops.total)" 0 "no packet dropped"
inA "$HBM" show "$DEV_A"
hbm_report "idle flows: $idle1 after a wave, $idle2 after the same again, $idle3 after a new wave"

assert_ok "detach" inA "$HBM" detach "$DEV_A"
hbm_done
