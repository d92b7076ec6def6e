#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `tc qdisc del` with 1000 packets queued frees them all: the skbuff slab
# and the sending socket's write memory return to their baselines.
. "$(dirname "$0")/lib.sh"

slab_skbs() { awk '$1 == "skbuff_head_cache" { print $2 }' /proc/slabinfo; }
# The sender's wmem_alloc, from ss -m: skmem:(...,t<N>,...); the socket is
# bound to an ephemeral port, so find it by its peer's.
sock_wmem() {
	inA ss -u -a -m -n "dport = :7100" |
		sed -n 's/.*skmem:(.*,t\([0-9]*\),.*/\1/p' | head -n 1
}

hbm_veth_setup || hbm_fatal "veth setup"
# 1 Mbit/s holds 1000 x 1442 bytes for 11.5 s; thresholds far out of the
# way so nothing is dropped by policy.
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root --rate 1mbit \
	--mark 30s --drop 60s --drop-large 60s --horizon 100s \
	--limit 10000 --flow-limit 10000 || hbm_done

base=$(slab_skbs)
inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 7100 -c 1000 -s 1400 \
	-B 8000000 -w 6 >"/tmp/$HBM_TEST.tx" &
sleep 1.5
q=$(hbm_qdisc qlen)
full=$(slab_skbs)
w_full=$(sock_wmem)
assert_ge "$q" 990 "about 1000 packets queued ($q)"
assert_gt "$w_full" 1000000 "the socket's write memory holds them ($w_full)"
assert_ok "tc qdisc del" inA tc qdisc del dev "$DEV_A" root
sleep 0.5
after=$(slab_skbs)
w_after=$(sock_wmem)
assert_eq "$w_after" 0 "socket write memory back to 0 after del"
assert_le "$after" "$((base + 100))" "skbuff slab back to baseline ($base -> $full -> $after)"
assert_ge "$full" "$((base + 900))" "the slab did hold the queued skbs"
hbm_report "slab skbuff_head_cache: base $base, queued $full, after del $after; wmem $w_full -> $w_after"
wait
"$HBM" detach "$DEV_A" 2>/dev/null
hbm_done
