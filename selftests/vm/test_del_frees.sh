#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `tc qdisc del` with 1000 packets queued frees them all: the skbuff slab
# and the sending socket's write memory return to their baselines.
. "$(dirname "$0")/lib.sh"

# The sender's wmem_alloc, from ss -m: skmem:(...,t<N>,...).
sock_wmem() {
	inA ss -u -a -m -n "sport = :7101" |
		sed -n 's/.*skmem:(.*,t\([0-9]*\),.*/\1/p' | head -n 1
}

hbm_veth_setup || hbm_fatal "veth setup"
# The datagrams ask to leave in 30 s (SO_TXTIME), so they wait in the
# qdisc; thresholds far out of the way so the policy drops none.
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root --rate 1gbit \
	--mark 30s --drop 60s --drop-large 60s --horizon 100s \
	--limit 10000 --flow-limit 10000 || hbm_done

base=$(hbm_skb_objs head)
hbm_figure "skbuff_head_cache in /proc/slabinfo" "$base"
inA "$HBM_TOOLS/udp_probe" send -d "$ADDR_B" -p 7100 -S 7101 -c 1000 \
	-s 1400 -t 30000000000 -B 8000000 -w 60 >"/tmp/$HBM_TEST.tx" &
probe=$!
sleep 1.5
q=$(hbm_qdisc qlen)
full=$(hbm_skb_objs head)
w_full=$(sock_wmem)
assert_eq "$q" 1000 "1000 packets queued"
assert_gt "$w_full" 1000000 "the socket's write memory holds them ($w_full)"
assert_ok "tc qdisc del" inA tc qdisc del dev "$DEV_A" root
sleep 0.5
after=$(hbm_skb_objs head)
w_after=$(sock_wmem)
# The probe holds its socket open for 60 s (the steps above took over 8 s
# under a slow TCG host), so its memory can be read.
assert_eq "${w_after:--1}" 0 "socket write memory back to 0 after del (-1: socket gone)"
# The socket's write memory above is the exact check; the slab's, within
# hbm_skb_slack of its baseline, catches a leak of more than the stack's
# per-cpu caches.
margin=$(hbm_skb_slack)
assert_ge "$full" "$((base + 500))" "the slab held the queued skbs ($base -> $full)"
assert_le "$after" "$((base + margin))" "skbuff slab back to baseline ($full -> $after, margin $margin)"
hbm_report "slab skbuff_head_cache: base $base, queued $full, after del $after; wmem $w_full -> $w_after"
kill "$probe" 2>/dev/null
wait
cat "/tmp/$HBM_TEST.tx"
hbm_done
