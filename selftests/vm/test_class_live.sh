#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Per-cgroup classes changed while traffic runs, and cgroups going away.
# - class set mid-flow: one cubic flow in A's cgroup at 100 Mbit/s, then
#   200 Mbit/s: in the second after the first B's receive rate is above
#   the old one, and over the next 3 s it is the new rate's (a window, not
#   each second: one cubic flow backs off by 30% at a drop, so a second
#   may dip well below);
# - class del mid-flow: the flow goes back to the device's rate
#   (400 Mbit/s) with no stall (B's rate in every second after the change
#   is above the class's old rate), and nothing is left queued;
# - the ECN marker marks a class's ECN-capable packets from the class's
#   own queue: CE counted for the class while the device is not congested;
# - a child cgroup gets its parent's class until it has its own;
# - removing a classified cgroup removes its class (by the next loader
#   command), and a cgroup created again at the same path does not
#   inherit it.
. "$(dirname "$0")/lib.sh"

hbm_veth_setup || hbm_fatal "veth setup"
inA sysctl -qw net.ipv4.tcp_congestion_control=cubic
CG_A=$(hbm_cg a)
assert_ok "attach at the defaults, 400mbit" inA "$HBM" attach "$DEV_A" \
	--rate 400mbit --parent root || hbm_done
assert_ok "class add A 100mbit" inA "$HBM" class add "$DEV_A" \
	--cgroup "$CG_A" --rate 100mbit || hbm_done

# L2 rate at B in Mbit/s over one second, N times: rates N ("none" for a
# second not read, which fails its check rather than drop out of the list).
# Each second is what "no stall" is about.
rates() {
	local i r

	for i in $(seq 1 "$1"); do
		r=$(hbm_rx_rate 1)
		printf '%s ' "${r:-none}"
	done
}

# Longer than the three phases and the commands between them however
# slow the emulator is (CI saw it end during the last phase): it is
# stopped after them, the receive rates being the measure.
hbm_cg_iperf_start "$CG_A" 5201 "/tmp/$HBM_TEST.a" 120 -P 1
sleep 2
r100=$(hbm_rx_rate 3)
assert_ok "class set A 200mbit mid-flow" inA "$HBM" class set "$DEV_A" \
	--cgroup "$CG_A" --rate 200mbit
sleep 1
r200s=$(hbm_rx_rate 1)
r200=$(hbm_rx_rate 3)
assert_ok "class del A mid-flow" inA "$HBM" class del "$DEV_A" \
	--cgroup "$CG_A"
rdel=$(rates 3)
flow="iperf3 -c $ADDR_B -p 5201 "
pgrep -f "$flow" >/dev/null ||
	hbm_fatal "iperf3 ended before the measurement: $(tail -n 5 "/tmp/$HBM_TEST.a")"
pkill -f "$flow"
wait
hbm_report "B's rate (Mbit/s): class 100M: $r100 over 3 s; 200M: $r200s in the second after the first, then $r200 over 3 s; deleted (device 400M), per second: $rdel"
# rx_bytes counts L2 bytes as the qdisc does: the class's rate is the cap.
assert_between "${r100:-none}" 85 101 "at 100 Mbit/s: 85-101 Mbit/s over 3 s"
assert_gt "${r200s:-none}" 101 "class set 200mbit: above the old rate in the second after the first"
assert_between "${r200:-none}" 170 202 "after class set 200mbit: 170-202 Mbit/s over 3 s"
for r in $rdel; do
	assert_gt "$r" 202 "after class del: above the class's rate (no stall)"
	assert_le "$r" 404 "after class del: within the device's rate"
done
sleep 0.5
assert_eq "$(hbm_stat qlen)" 0 "nothing left queued"
n=$(inA "$HBM" class list "$DEV_A" --json | jq -er '.classes | length') ||
	hbm_fatal "class list --json unreadable"
assert_eq "$n" 0 "class list: no class left"
e=$(hbm_stat stats.enqueued) p=$(hbm_stat stats.packets)
assert_eq "${e:--1}" "${p:--2}" "every packet enqueued was sent"

# The marker marks from the class's queue.
assert_ok "class add A 100mbit again" inA "$HBM" class add "$DEV_A" \
	--cgroup "$CG_A" --rate 100mbit
inA sysctl -qw net.ipv4.tcp_ecn=1
inB sysctl -qw net.ipv4.tcp_ecn=1
hbm_cg_iperf_start "$CG_A" 5202 "/tmp/$HBM_TEST.e" 4 -P 2
wait
g=$(hbm_iperf_result "/tmp/$HBM_TEST.e") || hbm_fatal "ECN iperf3 failed"
j=$(inA "$HBM" show "$DEV_A" --json)
cce=$(echo "$j" | jq -er --arg p "$CG_A" \
	'.devices[0].classes[] | select(.cgroup == $p) | .stats.ce') &&
	dmarks=$(echo "$j" | jq -er '.devices[0].stats.marks') ||
	hbm_fatal "show --json: no class ce or device marks: $j"
hbm_report "ECN flows in A (100M) under 400M: $g Mbit/s, class CE $cce, device marks $dmarks"
assert_gt "$cce" 0 "the marker set CE from the class's queue"
assert_between "$(hbm_pct_of_ceiling "$g" 100)" 90 101 "ECN flows keep the class's rate"

# A descendant is covered by its nearest ancestor's class. These checks
# say which class applies (the child's 50, its parent's 100, or the
# device's 400 Mbit/s), not how closely: class_rate holds the 101%
# bar. Short runs at 50 Mbit/s read up to 100.2% (7.2, 2026-12-05), the
# burst and lateness credit (up to 4 ms of the rate) being a few tenths
# of a 4 s transfer.
inA sysctl -qw net.ipv4.tcp_ecn=0
inB sysctl -qw net.ipv4.tcp_ecn=0
CG_C=$CG_A/child
mkdir "$CG_C" || hbm_fatal "mkdir $CG_C"
HBM_CGROUPS=("$CG_C" "${HBM_CGROUPS[@]}")
hbm_cg_iperf_start "$CG_C" 5203 "/tmp/$HBM_TEST.c" 4 -P 2
wait
g=$(hbm_iperf_result "/tmp/$HBM_TEST.c") || hbm_fatal "iperf3 in the child failed"
pc=$(hbm_pct_of_ceiling "$g" 100)
hbm_report "A/child, A's class at 100M: $g Mbit/s = $pc%"
assert_between "$pc" 90 105 "a child cgroup gets its parent's class (100 Mbit/s)"
assert_ok "class add A/child 50mbit" inA "$HBM" class add "$DEV_A" \
	--cgroup "$CG_C" --rate 50mbit
hbm_cg_iperf_start "$CG_C" 5204 "/tmp/$HBM_TEST.c" 4 -P 2
wait
g=$(hbm_iperf_result "/tmp/$HBM_TEST.c") || hbm_fatal "iperf3 in the child failed"
pc=$(hbm_pct_of_ceiling "$g" 50)
hbm_report "A/child with its own class at 50M: $g Mbit/s = $pc% of 50M"
assert_between "$pc" 90 105 "the nearest class wins (the child's 50 Mbit/s)"
assert_ok "class del A/child" inA "$HBM" class del "$DEV_A" --cgroup "$CG_C"

# A classified cgroup removed.
CG_R=$(hbm_cg r)
assert_ok "class add R" inA "$HBM" class add "$DEV_A" --cgroup "$CG_R" \
	--rate 50mbit
n=$(inA "$HBM" class list "$DEV_A" --json | jq -er '.classes | length')
assert_eq "${n:--1}" 2 "class list: A and R"
rmdir "$CG_R" || hbm_fatal "rmdir $CG_R"
n=$(inA "$HBM" class list "$DEV_A" --json | jq -er '.classes | length')
assert_eq "${n:--1}" 1 "class list after rmdir: R is gone"
n=$(bpftool -j map dump pinned /sys/fs/bpf/bpf_hbm/hbm_class_configs | jq -er length)
assert_eq "${n:--1}" 1 "the class map holds A only"
mkdir "$CG_R" || hbm_fatal "mkdir $CG_R"
n=$(inA "$HBM" class list "$DEV_A" --json |
	jq -er --arg p "$CG_R" '[.classes[] | select(.cgroup == $p)] | length')
assert_eq "${n:--1}" 0 "a new cgroup at R's path has no class"
inA "$HBM" class set "$DEV_A" --cgroup "$CG_R" --rate 60mbit 2>/dev/null
assert_eq "$?" 1 "class set on the new cgroup: no such class (exit 1)"
hbm_done
