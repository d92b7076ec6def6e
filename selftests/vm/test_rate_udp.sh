#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A UDP sender at twice the configured rate is delivered at no more than the
# rate (L2 bytes received by the peer), the excess is counted as drops, and
# a ping through the same qdisc meanwhile sees under 1 ms of added delay.
#
# The lower bound is 10%, not 97%: HBM drops a non-TCP packet over the mark
# threshold (50 us, a tenth of one 1400-byte packet's time at this rate)
# instead of queueing it, so a sender that falls silent (descheduled) loses
# that link time beyond the idle credit, where htb or fq would have drained
# their queue meanwhile and blocked the sender on its socket buffer. Under
# TCG on a 2-core host iperf3's sender swings from 4 to 40 Mbit/s from
# second to second, and this test has measured 29.9-62% here (87.9-99.4%
# alone on a quieter machine); with the sender saturating the VM (-b 0),
# bpf_hbm delivered 37% of the rate where htb delivered 91% without a drop.
# The README's known limits say so. A shaper that stopped pacing would
# exceed 101%; one whose watchdog stalled would deliver next to nothing, and
# every packet the qdisc sent must have arrived.
. "$(dirname "$0")/lib.sh"

# 20 Mbit/s: at 100 Mbit/s a 2x UDP sender already saturates the VM's
# emulated CPUs (htb then delivers 82% of its rate, bpf_hbm 96%).
RATE=${RATE:-20}	# Mbit/s

hbm_veth_setup || hbm_fatal "veth setup"
assert_ok "attach --rate ${RATE}mbit" inA "$HBM" attach "$DEV_A" \
	--rate "${RATE}mbit" --burst "$HBM_VM_BURST" --parent root || hbm_done

idle=$(inA ping -c 20 -i 0.05 -q "$ADDR_B" | awk -F/ '/^rtt/ { print $5 }')
rx0=$(inB cat "/sys/class/net/$DEV_B/statistics/rx_packets")
sent0=$(hbm_qdisc packets)
hbm_figure "$DEV_B's rx_packets" "$rx0"
hbm_figure "tc -s qdisc: packets" "$sent0"

inB iperf3 -s -1 -D -p 5202 >/dev/null 2>&1
sleep 0.3
inA iperf3 -u -c "$ADDR_B" -p 5202 -b "$((2 * RATE))M" -l 1400 -t 7 \
	>"/tmp/$HBM_TEST.iperf" 2>&1 &
sleep 2
inA ping -c 80 -i 0.05 -q "$ADDR_B" >"/tmp/$HBM_TEST.ping" 2>&1 &
d0=$(hbm_qdisc drops)
got=$(hbm_rx_rate 4)
d1=$(hbm_qdisc drops)
wait
hbm_figure "tc -s qdisc: drops before" "$d0"
hbm_figure "tc -s qdisc: drops after" "$d1"

pct=$(awk -v g="$got" -v r="$RATE" 'BEGIN { printf "%.1f", 100 * g / r }')
loaded=$(awk -F/ '/^rtt/ { print $5 }' "/tmp/$HBM_TEST.ping")
loss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' "/tmp/$HBM_TEST.ping")
cat "/tmp/$HBM_TEST.iperf"
inA "$HBM" show "$DEV_A"

sleep 0.5
rx=$(( $(inB cat "/sys/class/net/$DEV_B/statistics/rx_packets") - rx0 ))
sent=$(hbm_qdisc packets)
hbm_figure "tc -s qdisc: packets" "$sent"
sent=$((sent - sent0))
assert_between "$pct" 10 101 "UDP delivered at 10-101% of ${RATE} Mbit/s (L2)"
assert_gt "$sent" 1000 "the qdisc sent packets ($sent)"
assert_eq "$rx" "$sent" "every packet the qdisc sent arrived (peer rx $rx)"
assert_eq "$(hbm_qdisc qlen)" 0 "none left queued"
assert_gt "$((d1 - d0))" 0 "excess counted as drops by the qdisc"
assert_gt "$(hbm_stat drops.nontcp)" 0 "drops attributed to non-TCP over mark"
hbm_figure "idle ping's average RTT" "$idle"
hbm_figure "ping's average RTT under load" "$loaded"
added=$(awk -v l="$loaded" -v i="$idle" 'BEGIN { printf "%.3f", l - i }')
assert_lt "$added" 1 "ping added delay under 1 ms (idle $idle ms, loaded $loaded ms)"
hbm_report "udp 2x${RATE}M -> ${got} Mbit/s L2 (${pct}% of rate); ping idle ${idle} ms, loaded ${loaded} ms (+${added}), loss ${loss}%"
hbm_done
