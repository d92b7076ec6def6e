#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# An emptied flow stays in the flow table, idle, so that its next packet
# finds it; once idle for longer than the flow idle time (`load
# --flow-idle`, 8 s here: wide of TCG's stalls, and of the seconds a
# wave and its reads take under it) the garbage collector
# frees it as new flows arrive, up to two per new flow, and on a timer
# whether or not the instance has packets queued, so the table does not
# fill with flows that ended. Each wave is 1000 flows of one 64-byte
# packet, queued at 1 Mbit/s (0.5 ms a packet, against a fixed 100 us of
# burst) with thresholds no queue reaches, so that the packets queue in
# their flows. The first of a wave, and any that comes after a stall of the
# flood long enough to drain the queue, finds the qdisc empty and due and
# takes the fast path, which has no flow: a wave of N flows leaves N less
# those (counted as fastpath) idle. A wave drains in half a second.
. "$(dirname "$0")/lib.sh"

N=1000

"$HBM" unload >/dev/null || hbm_fatal "unload before the test"
IDLE=8
assert_ok "load --flow-idle ${IDLE}s" "$HBM" load --flow-idle ${IDLE}s || hbm_done
"$HBM" load --flow-idle 2s >"/tmp/$HBM_TEST.out" 2>&1
st=$?
cat "/tmp/$HBM_TEST.out"
assert_eq "$st" 1 "load --flow-idle when loaded: refused"
assert_ok "... saying why" grep -q \
	"already loaded: --flow-idle applies to a fresh load" "/tmp/$HBM_TEST.out"

hbm_veth_setup || hbm_fatal "veth setup"
# A horizon of a minute, for the last phase's packet stamped 50 s out.
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root --rate 1mbit \
	--late-credit off --mark 1000s --drop 2000s --drop-large 2000s \
	--horizon 60s || hbm_done

# wave FIRST [LEFT]: N flows from flow FIRST on, drained down to LEFT
# packets; sets fast to how many of them took the fast path
fast_total=0
wave() {
	local i f

	inA "$HBM_TOOLS/flood" -s "$ADDR_A" -d "$ADDR_B" -f $N -c $N -o "$1" \
		>/dev/null || hbm_fatal "flood"
	for i in $(seq 40); do
		[ "$(hbm_qdisc qlen)" = "${2:-0}" ] && break
		sleep 0.1
	done
	[ "$(hbm_qdisc qlen)" = "${2:-0}" ] ||
		hbm_fatal "wave $1 not drained: qlen $(hbm_qdisc qlen)"
	f=$(hbm_stat stats.fastpath)
	hbm_figure "show --json: stats.fastpath" "$f"
	fast=$((f - fast_total))
	fast_total=$f
}

wave 0
idle1=$(hbm_stat idle_flows)
assert_eq "$(hbm_stat flows)" 0 "the queue drained: no backlogged flow"
# A little other traffic (neighbour discovery) may add a flow or two.
assert_between "$fast" 1 $((N / 10)) "the first packet of the wave took the fast path, few others ($fast)"
assert_between "$idle1" $((N - fast)) $((N + 10)) "the $N emptied flows stay, idle ($idle1, $fast without a flow)"

# Within the idle time, the same flows again: found, not added.
wave 0
idle2=$(hbm_stat idle_flows)
assert_between "$idle2" "$idle1" $((N + 10)) "the same flows again reuse theirs ($idle2)"

# Past the idle time, other flows: each frees up to two of the old ones.
sleep $IDLE.2
wave $N
idle3=$(hbm_stat idle_flows)
assert_between "$idle3" $((N - fast)) $((N + 10)) \
	"$N new flows after $IDLE s idle: the old $N freed ($idle3 idle, $((2 * N)) without GC)"
assert_eq "$(hbm_stat drops.total)" 0 "no packet dropped"

# Then quiet: no new flow comes to collect them, the watchdog does.
sleep $((IDLE - 1))	# the idle time, less what the wave and the probes took
t=0
for t in $(seq 20); do
	sleep 0.5
	idle4=$(hbm_stat idle_flows)
	[ "$idle4" = 0 ] && break
done
assert_eq "$idle4" 0 "quiet: a timer frees the idle flows ($((IDLE - 1)) s + $((t * 5))00 ms after the wave)"
inA "$HBM" show "$DEV_A"
q=$t

# Backlogged: one packet stamped 50 s out keeps the instance from ever
# going quiet, and no new flow comes. The watchdog, set for that packet,
# still fires for the GC's passes.
inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 9 -S 7601 -t 50000000000 \
	>/dev/null
wave $((2 * N)) 1
idle5=$(hbm_stat idle_flows)
assert_between "$idle5" $N $((N + 10)) "backlogged: a new wave's flows idle ($idle5)"
sleep $((IDLE - 1))
for t in $(seq 20); do
	sleep 0.5
	idle6=$(hbm_stat idle_flows)
	q6=$(hbm_qdisc qlen)
	[ "$idle6" = 0 ] || [ "$q6" = 0 ] && break
done
assert_eq "$q6" 1 "the stamped packet still waits"
assert_eq "$idle6" 0 "backlogged: the watchdog frees the idle flows ($((IDLE - 1)) s + $((t * 5))00 ms after the wave)"
hbm_report "idle flows: $idle1 after a wave, $idle2 after the same again, $idle3 after a new wave, 0 at $((IDLE - 1)) s + $((q * 5))00 ms of quiet, 0 at $((IDLE - 1)) s + $((t * 5))00 ms backlogged"

assert_ok "detach" inA "$HBM" detach "$DEV_A"
assert_ok "unload (later tests load the default)" "$HBM" unload
hbm_done
