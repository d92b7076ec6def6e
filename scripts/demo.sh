#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo` (runs inside the VM): the same TCP transfer over a veth pair
# unshaped, through bpf_hbm at 100 Mbit/s, and after `bpf-hbm set` to
# 200 Mbit/s mid-run, with bpf-hbm show's counters at the end.
set -uo pipefail
. "$(dirname "$0")/../selftests/vm/lib.sh"

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
modprobe -q veth
hbm_veth_setup || hbm_fatal "veth setup"

echo "== unshaped veth"
echo "   $(hbm_iperf 3) Mbit/s"
echo "== bpf-hbm attach $DEV_A --rate 100mbit"
inA "$HBM" attach "$DEV_A" --rate 100mbit --parent root || exit 1
echo "   $(hbm_iperf 3) Mbit/s (ceiling for TCP: $(awk -v e="$HBM_TCP_EFF" 'BEGIN { printf "%.1f", 100 * e }'))"
echo "== bpf-hbm set $DEV_A --rate 200mbit"
inA "$HBM" set "$DEV_A" --rate 200mbit
echo "   $(hbm_iperf 3 -P 4) Mbit/s with 4 flows"
echo "== ping under load (4 bulk flows)"
inB iperf3 -s -1 -D -p 5299 >/dev/null 2>&1
sleep 0.3
inA iperf3 -c "$ADDR_B" -p 5299 -P 4 -t 4 >/dev/null 2>&1 &
sleep 1
inA ping -c 20 -i 0.1 -q "$ADDR_B" | tail -n 1
wait
echo "== bpf-hbm show $DEV_A"
inA "$HBM" show "$DEV_A"
echo "== tc -s qdisc show dev $DEV_A"
inA tc -s qdisc show dev "$DEV_A"
inA "$HBM" detach "$DEV_A"
