#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A sender's own departure time is honoured: a UDP datagram sent with
# SO_TXTIME 5 ms in the future never arrives before 5 ms, and arrives on
# time: the median of five probes within 1.5 ms of it, none later than
# 10 ms (TCG's timers and scheduling add up to a millisecond or so to a
# single probe: CI once saw 6.2 ms). One stamped 20 s out is beyond the
# 10 s horizon, dropped and counted.
. "$(dirname "$0")/lib.sh"

hbm_veth_setup || hbm_fatal "veth setup"
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root || hbm_done

# probe TXTIME_NS: prints the one-way delay in us (kernel stamps), or
# nothing if the datagram did not arrive.
probe() {
	inB "$HBM_TOOLS/udp_probe" recv -p 7000 -c 1 -T 3000 \
		>"/tmp/$HBM_TEST.rx" 2>/dev/null &
	sleep 0.2
	sent=$(inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 7000 -t "$1" |
	       awk '/^first_send_ns/ { print $2 }')
	wait
	arr=$(head -n 1 "/tmp/$HBM_TEST.rx")
	[ -n "$arr" ] && echo $(( (arr - sent) / 1000 ))
}

base=$(probe 0)
assert_lt "${base:-99999}" 5000 "without a txtime, not held (${base} us)"
delays=()
for i in 1 2 3 4 5; do
	us=$(probe 5000000)
	[ -n "$us" ] || { assert_ok "probe $i arrived" false; continue; }
	assert_between "$us" 5000 10000 "probe $i: not before its time, not held"
	delays+=("$us")
done
med=$(printf '%s\n' "${delays[@]}" | sort -n | awk '{ a[NR] = $1 }
	END { print NR ? a[int((NR + 1) / 2)] : 99999 }')
assert_le "$med" 6500 "median delivery within 1.5 ms of the txtime"
hbm_report "SO_TXTIME +5 ms: arrived after ${delays[*]} us, median $med (no txtime: $base us)"

h0=$(hbm_stat drops.horizon)
inB "$HBM_TOOLS/udp_probe" recv -p 7001 -c 1 -T 1500 >"/tmp/$HBM_TEST.rx" \
	2>/dev/null &
sleep 0.2
inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 7001 -t 20000000000 >/dev/null
wait
assert_eq "$(wc -l <"/tmp/$HBM_TEST.rx")" 0 "a 20 s tstamp is not delivered"
assert_eq "$(( $(hbm_stat drops.horizon) - h0 ))" 1 "counted as a horizon drop"
assert_eq "$(hbm_qdisc qlen)" 0 "and not left queued"
hbm_done
