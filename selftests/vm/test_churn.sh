#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Attach/detach churn under load: CHURN_N (default 40; issue 13 asks 200,
# 5.6 minutes under TCG at 1.6 s a cycle: `make soak`) cycles of attach
# and detach, alternating root and mq and ECN on and off, every tenth with
# a class, while a UDP flood and 4 TCP flows run through the device.
# Every command must succeed. Afterwards nothing may be left: the skbuff
# slabs back at their baseline, no entry in hbm_flows, hbm_instances or
# the class maps, no marker pin or tcx link, and Slab and MemAvailable
# within CHURN_SLAB_KB (default 8192) and CHURN_MEM_KB (default 32768) of
# where they started.
. "$(dirname "$0")/lib.sh"

CHURN_N=${CHURN_N:-40}
CHURN_SLAB_KB=${CHURN_SLAB_KB:-8192}
CHURN_MEM_KB=${CHURN_MEM_KB:-32768}
PIN=/sys/fs/bpf/bpf_hbm

meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
settle() { # let deferred frees (RCU, per-cpu caches) run
	sync
	echo 2 >/proc/sys/vm/drop_caches
	sleep 2
}

hbm_veth_setup 4 || hbm_fatal "veth setup"
hbm_load
cg=$(hbm_cg churn) || hbm_fatal "cgroup"
settle
slab0=$(hbm_skb_objs) kslab0=$(meminfo Slab) avail0=$(meminfo MemAvailable)
hbm_figure "skbuff slab objects" "$slab0"
hbm_figure "Slab" "$kslab0"
hbm_figure "MemAvailable" "$avail0"

# The load, for the whole run: it ends by itself, or at cleanup.
dur=$((CHURN_N + 60))
inB iperf3 -s -D -1 >/dev/null 2>&1
sleep 0.5
inA iperf3 -c "$ADDR_B" -P 4 -t "$dur" >/dev/null 2>&1 &
inA "$HBM_TOOLS/flood" -s "$ADDR_A" -d "$ADDR_B" -f 1000 -t "$dur" \
	>/dev/null 2>&1 &
sleep 2

fails=0
start=$(date +%s)
for i in $(seq 1 "$CHURN_N"); do
	par=root ecn=on
	((i % 2)) && par=mq
	(((i / 2) % 2)) && ecn=off
	if ! out=$(inA "$HBM" attach "$DEV_A" --parent $par --ecn $ecn \
		   --rate 200mbit 2>&1); then
		echo "cycle $i: attach --parent $par --ecn $ecn: $out"
		fails=$((fails + 1))
		continue
	fi
	if ((i % 10 == 0)) && ! out=$(inA "$HBM" class add "$DEV_A" \
			--cgroup "$cg" --rate 50mbit 2>&1); then
		echo "cycle $i: class add: $out"
		fails=$((fails + 1))
	fi
	if ! out=$(inA "$HBM" detach "$DEV_A" 2>&1); then
		echo "cycle $i: detach: $out"
		fails=$((fails + 1))
	fi
done
secs=$(( $(date +%s) - start ))
assert_eq "$fails" 0 "$CHURN_N attach/detach cycles under load, every command succeeded (${secs}s)"

# The load stops; what it left in flight drains.
hbm_cleanup_jobs() { local p; p=$(jobs -p); [ -n "$p" ] && kill $p 2>/dev/null; wait 2>/dev/null; }
hbm_cleanup_jobs
inB pkill -x iperf3
settle

flows=$(hbm_map_entries hbm_flows)
inst=$(hbm_map_entries hbm_instances)
ccfg=$(hbm_map_entries hbm_class_configs)
crate=$(hbm_map_entries hbm_class_rates)
hbm_figure "hbm_flows entries" "$flows"
hbm_figure "hbm_instances entries" "$inst"
hbm_figure "hbm_class_configs entries" "$ccfg"
hbm_figure "hbm_class_rates entries" "$crate"
assert_eq "$flows" 0 "no flow left in hbm_flows"
assert_eq "$inst" 0 "no instance left in hbm_instances"
assert_eq "$ccfg" 0 "no class left in hbm_class_configs"
assert_eq "$crate" 0 "no class left in hbm_class_rates"
n=$(ls "$PIN" | grep -c '^ce-')
assert_eq "$n" 0 "no marker pin left"
tcx=$(inA bpftool -j net show dev "$DEV_A" |
      jq -e '[.[0].tc[]? | select(.name == "hbm_ce")] | length')
assert_eq "$tcx" 0 "no tcx link left"
assert_ok "unload" "$HBM" unload
assert_ok "no pins left" test ! -e "$PIN"

settle
slab1=$(hbm_skb_objs) kslab1=$(meminfo Slab) avail1=$(meminfo MemAvailable)
assert_le "$slab1" "$((slab0 + 200))" "skbuff slabs back to their baseline ($slab0 -> $slab1 objects)"
assert_le "$kslab1" "$((kslab0 + CHURN_SLAB_KB))" "Slab within ${CHURN_SLAB_KB} kB ($kslab0 -> $kslab1 kB)"
assert_ge "$avail1" "$((avail0 - CHURN_MEM_KB))" "MemAvailable within ${CHURN_MEM_KB} kB ($avail0 -> $avail1 kB)"
hbm_report "$CHURN_N cycles in ${secs}s under load; skbuff objects $slab0 -> $slab1, Slab $kslab0 -> $kslab1 kB, MemAvailable $avail0 -> $avail1 kB"
hbm_done
