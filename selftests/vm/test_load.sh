#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# After `bpf-hbm load`, plain `tc qdisc add ... bpf_hbm` works on this kernel
# (the verifier accepted every program), passes traffic, and its own
# counters (tc -s qdisc) account for exactly what the peer received; a
# ping, due at an empty qdisc, takes the fast path.
. "$(dirname "$0")/lib.sh"

hbm_veth_setup || hbm_fatal "veth setup"
hbm_load
assert_ok "tc qdisc add root bpf_hbm" inA tc qdisc add dev "$DEV_A" root bpf_hbm
assert_eq "\"$(hbm_qdisc kind)\"" '"bpf_hbm"' "root qdisc is bpf_hbm"

# Non-GSO packets only: tc counts GSO segments, the peer counts skbs.
rx0=$(inB cat /sys/class/net/$DEV_B/statistics/rx_packets)
hbm_figure "$DEV_B's rx_packets" "$rx0"
inA ping -c 50 -i 0.02 -q "$ADDR_B" >/dev/null
inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 9 -c 200 -s 100 >/dev/null
sleep 0.2
rx=$(( $(inB cat /sys/class/net/$DEV_B/statistics/rx_packets) - rx0 ))
sent=$(hbm_qdisc packets)
assert_ge "$sent" 250 "qdisc counted the pings and datagrams it sent"
assert_eq "$sent" "$rx" "every packet the qdisc sent arrived (sent vs peer rx)"
assert_eq "$(hbm_qdisc drops)" 0 "none dropped at 1 Gbit/s"
fast=$(hbm_stat stats.fastpath)
assert_ge "${fast:--1}" 50 "each ping, due at an empty qdisc, took the fast path ($fast)"

inB iperf3 -s -1 -D >/dev/null 2>&1
sleep 0.3
inA iperf3 -c "$ADDR_B" -t 1 >/dev/null 2>&1
bytes=$(hbm_qdisc bytes)
assert_gt "$bytes" 10000000 "qdisc counted the iperf3 bytes"
assert_eq "$(hbm_qdisc qlen)" 0 "nothing left queued"
assert_ok "tc qdisc del" inA tc qdisc del dev "$DEV_A" root
hbm_report "$(uname -r): $sent packets, $bytes bytes through bpf_hbm"
hbm_done
