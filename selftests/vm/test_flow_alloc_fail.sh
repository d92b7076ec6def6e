#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# When a new flow cannot be allocated, its packet is dropped (counted as
# nomem) and the flow-table slot made for it is given back: with every
# second flow allocation failing (the loader's fault injection,
# BPF_HBM_FAULT_FLOW_ALLOC), 40 new flows leave no slot behind once the
# qdisc is deleted. A slot left without a flow is on no list, so neither
# the GC nor the purge would ever free it, and the table all instances
# share would fill up with them. Each packet is stamped 5 ms out, so that
# none takes the fast path (a due packet at an empty qdisc needs no flow).
. "$(dirname "$0")/lib.sh"

flows() { bpftool -j map dump name hbm_flows 2>/dev/null | jq length; }

hbm_veth_setup || hbm_fatal "veth setup"
"$HBM" unload >/dev/null || hbm_fatal "unload before the test"
assert_ok "load with every 2nd flow allocation failing" \
	env BPF_HBM_FAULT_FLOW_ALLOC=2 "$HBM" load || hbm_done
before=$(flows)
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root --rate 1gbit || hbm_done

for p in $(seq 7501 7540); do
	inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 9 -S "$p" -c 1 -s 100 \
		-t 5000000 >/dev/null
done
sleep 0.5
inA "$HBM" show "$DEV_A"
nomem=$(hbm_stat drops.nomem)
assert_ge "${nomem:--1}" 15 "failed allocations dropped as nomem ($nomem)"
assert_ge "$(hbm_stat stats.enqueued)" 15 "the others passed"

assert_ok "detach" inA "$HBM" detach "$DEV_A"
after=$(flows)
assert_eq "${after:--1}" "${before:--2}" "no flow-table slot left after the qdisc went ($before before, $after after)"
assert_ok "unload (later tests load without faults)" "$HBM" unload
hbm_done
