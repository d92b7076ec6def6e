#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A raw socket of protocol IPPROTO_TCP puts TCP segments on the wire but is
# no tcp_sock: bpf_hbm treats it as a non-TCP sender (dropped over the mark
# threshold, never told NET_XMIT_CN, never spared by the 2-packet guard),
# rather than reading packets in flight and ECN flags from a raw socket's
# memory as if it were a TCP socket.
. "$(dirname "$0")/lib.sh"

hbm_veth_setup || hbm_fatal "veth setup"
assert_ok "attach --rate 10mbit" inA "$HBM" attach "$DEV_A" --rate 10mbit \
	--parent root || hbm_done

# 500 segments of 1000 bytes as fast as the socket takes them: far over
# 10 Mbit/s, so most go over the mark threshold.
sent=$(inA "$HBM_TOOLS/udp_probe" send -R -d "$ADDR_B" -p 7300 -S 7301 \
	-c 500 -s 1000 | awk '/^sent/ { print $2 }')
sleep 1
inA "$HBM" show "$DEV_A"

assert_eq "${sent:--1}" 500 "the raw socket sent 500 segments"
nontcp=$(hbm_stat drops.nontcp)
assert_gt "${nontcp:--1}" 0 "drops counted as non-TCP over mark ($nontcp)"
assert_eq "$(hbm_stat stats.cn)" 0 "no NET_XMIT_CN to a raw socket"
assert_eq "$(hbm_stat stats.guard_saves)" 0 "no 2-packet guard for a raw socket"
enq=$(hbm_stat stats.enqueued)
drops=$(hbm_stat drops.total)
hbm_figure "show --json: stats.enqueued" "$enq"
hbm_figure "show --json: drops.total" "$drops"
assert_eq "$((enq + drops))" 500 "every segment accepted or dropped ($enq + $drops)"
assert_eq "$(hbm_qdisc qlen)" 0 "none left queued"
hbm_done
