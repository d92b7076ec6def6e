#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# --quantum and --initial-quantum take effect: the four flows of
# test_sched_share (280 KB each, due together), with both quanta at their
# largest (1 MB, more than a flow holds), are served a flow at a time, not
# in turns: when the first flow has drained, the least served of the
# others has had under a tenth of its bytes. show reports the bytes set.
. "$(dirname "$0")/lib.sh"

hbm_sched_attach --quantum 1m --initial-quantum 1m
assert_eq "$(hbm_stat config.quantum)" 1048576 "show: quantum 1 MB"
# (hbm_stat's "// empty" would read a false as nothing)
auto=$(inA "$HBM" show "$DEV_A" --json | jq -r '.devices[0].config.quantum_auto')
assert_eq "\"$auto\"" '"false"' "show: not derived from the MTU"
tx=/tmp/$HBM_TEST.tx
hbm_sched_sniff 2400 "$tx"
t=$(hbm_sched_at 3000)
hbm_sched_send 7501 -c 200 -s 1400 -A "$t" &
hbm_sched_send 7502 -c 200 -s 1400 -A "$t" &
hbm_sched_send 7503 -c 1000 -s 280 -A "$t" &
hbm_sched_send 7504 -c 1000 -s 280 -A "$t" &
wait $HBM_SCHED_RX
wait
assert_eq "$(hbm_sched_late_sends "$tx")" 0 "every stamped datagram was queued before its departure time"

# Wire bytes per flow in transmit order until one flow's last datagram.
read -r n lo hi shares < <(awk '
	{ b[$2] += $6 + 42; last = ($2 < 7503 ? 199 : 999) }
	$3 == last && !done { done = 1; lo = 1e18; hi = 0
		for (f = 7501; f <= 7504; f++) { if (b[f] < lo) lo = b[f]
			if (b[f] > hi) hi = b[f]
			sh = sh sprintf("%d:%.0fKB,", f, b[f] / 1000) } }
	END { if (!done) { print NR, "none", 0, "-"; exit }
	      printf "%d %d %d %s\n", NR, lo, hi, sh }' "$tx")
assert_eq "$n" 2400 "every datagram was transmitted"
assert_lt "$lo" "$(( hi / 10 ))" "a flow at a time: the least served had under a tenth of the first's bytes ($shares)"
hbm_report "quantum 1 MB, bytes per flow until the first drained: $shares"
hbm_done
