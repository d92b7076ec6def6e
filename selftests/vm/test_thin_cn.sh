#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Thin senders get no CN: a TCP sender whose unacknowledged bytes fit in an
# initial quantum (a 10 KB request) is marked over the mark threshold but
# not told to halve its window, while bulk senders in the same queue are.
# At the defaults, 100 Mbit/s, 4 bulk cubic flows:
# - alone, they get CN and (almost) none of their marks is counted as a
#   thin sender's (cn_spared: only their first packets and iperf3's
#   control connection can be thin), so bulk senders are not taken for
#   thin ones;
# - with a netperf TCP_RR flow of 10 KB requests beside them, the thin
#   sender's marks are counted as spared, and the bulk flows still get CN.
. "$(dirname "$0")/lib.sh"

T=5
hbm_veth_setup || hbm_fatal "veth setup"
inA sysctl -qw net.ipv4.tcp_congestion_control=cubic
assert_ok "attach at the defaults" inA "$HBM" attach "$DEV_A" \
	--rate 100mbit --parent root || hbm_done

# counts: CN and SP, the CN and cn_spared counts now; unreadable fails.
counts() {
	local j

	j=$(inA "$HBM" show "$DEV_A" --json)
	CN=$(echo "$j" | jq -er '.devices[0].stats.cn') &&
	SP=$(echo "$j" | jq -er '.devices[0].stats.cn_spared') &&
	[[ $CN =~ ^[0-9]+$ && $SP =~ ^[0-9]+$ ]] ||
		hbm_fatal "show --json gave no cn/cn_spared: '$j'"
}

inB netserver -p 12865 >/dev/null 2>&1
counts; cn0=$CN sp0=$SP
hbm_iperf "$T" -P 4 >/dev/null
counts; cn1=$CN sp1=$SP
hbm_report "bulk alone: cn +$((cn1 - cn0)), cn_spared +$((sp1 - sp0))"
assert_gt "$((cn1 - cn0))" 0 "bulk flows alone get CN"
# 0.2% at the machine's usual speed (70 of 32121); 1.04% (87 of 8371) on
# a slow stretch, where the bulk flows' windows are smaller. Beside the
# RPC below, 19% are spared.
assert_le "$((20 * (sp1 - sp0)))" "$((cn1 - cn0))" \
	"bulk flows alone: spared marks at most 5% of their CN"

inB iperf3 -s -1 -D -p 5204 >/dev/null 2>&1
sleep 0.3
inA iperf3 -c "$ADDR_B" -p 5204 -P 4 -t $((T + 2)) >"/tmp/$HBM_TEST.iperf" 2>&1 &
sleep 1
rr=$(inA netperf -H "$ADDR_B" -p 12865 -t TCP_RR -l "$T" -P 0 -- \
	-r 10000,1 -o THROUGHPUT | tail -n 1)
wait
tps=${rr%%.*}
counts; cn2=$CN sp2=$SP
tail -n 4 "/tmp/$HBM_TEST.iperf"
inA "$HBM" show "$DEV_A"
hbm_report "bulk + 10 KB RR (${rr:-?} trans/s): cn +$((cn2 - cn1)), cn_spared +$((sp2 - sp1))"
assert_gt "${tps:-0}" 0 "the RR flow made progress"
assert_gt "$((sp2 - sp1))" 0 "the 10 KB RR sender's marks were spared CN"
assert_gt "$((cn2 - cn1))" 0 "the bulk flows beside it still got CN"
hbm_done
