#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# cubic TCP through bpf_hbm at its defaults (`attach --rate R`, nothing
# else), as a user gets it, at 100, 200 and 500 Mbit/s with one flow and
# four: goodput as a percentage of the ceiling (rate x 1448/1514).
# - At 200 Mbit/s the same boot also runs HBM's fixed burst
#   (--late-credit off), and the defaults must beat it: the allowance for
#   the shaper's own release lateness is what keeps the rate under TCG's
#   jitter (bench/README.md, "Where the rate goes").
# - Every row stays at or below 101% of the ceiling, and at or above the
#   floor this emulator allows (below).
# - bpf-hbm show reports the lateness it measured, and its idle credit is
#   burst + what the lateness envelope exceeds it by.
# At 1 Gbit/s the VM is CPU-bound: the figure is reported beside the
# unshaped capacity measured in the same run, and must be at most 101% of
# the ceiling and at least FLOOR_1G% of the lower of the ceiling and that
# capacity (a failed or stalled run reads as nothing or next to nothing).
# A 2 ms burst row is reported, not asserted (what the tests used before
# the allowance). A goodput iperf3 did not give fails the test.
. "$(dirname "$0")/lib.sh"

T=${T:-5}
# The lowest goodput at the defaults accepted under TCG, in % of the
# ceiling. `make bench-rate` on a 2-core host under TCG, whose watchdog
# lateness has a p90 of 0.5-1 ms, measured 80-90% for cubic at 100 and 200
# Mbit/s where the fixed 100 us burst got 43-67% and fq+EDT 64-86%
# (bench/results/rate.md); a real host is expected at 95% or more. At 500
# Mbit/s the VM's two emulated CPUs are the limit for every arrangement:
# bpf_hbm 68-88%, htb 64-80%, fq+EDT 46-62% in that run, and this test has
# seen 74.8-77.4% for four flows; the floor there guards against a stall or
# a halved rate, not against the emulator's load.
FLOOR=${HBM_RATE_FLOOR:-75}
FLOOR_500=${HBM_RATE_FLOOR_500:-60}
# At 1 Gbit/s, % of the lower of the ceiling and the unshaped capacity:
# the emulator's CPUs are the limit there, as at 500 Mbit/s, so this
# guards against a failed run, a stall or a halved rate only.
FLOOR_1G=${HBM_RATE_FLOOR_1G:-50}

hbm_veth_setup || hbm_fatal "veth setup"
inA sysctl -qw net.ipv4.tcp_congestion_control=cubic
unshaped=$(hbm_iperf "$T" -P 1) || hbm_fatal "unshaped iperf3: no goodput"
hbm_report "unshaped veth: $unshaped Mbit/s"
assert_gt "$unshaped" 0 "unshaped veth: goodput measured"

assert_ok "attach at the defaults" inA "$HBM" attach "$DEV_A" --rate 100mbit \
	--parent root || hbm_done
declare -A got
for rate in 100 200 500 1000; do
	inA "$HBM" set "$DEV_A" --rate "${rate}mbit" || hbm_fatal "set ${rate}mbit"
	for flows in 1 4; do
		g=$(hbm_iperf "$T" -P "$flows") ||
			hbm_fatal "${rate}M x$flows: iperf3 gave no goodput"
		pct=$(hbm_pct_of_ceiling "$g" "$rate")
		got[$rate-$flows]=$pct
		hbm_report "${rate} Mbit/s, $flows flow(s), defaults: $g Mbit/s = ${pct}% of ceiling"
		if [ "$rate" -lt 1000 ]; then
			floor=$FLOOR
			[ "$rate" -eq 500 ] && floor=$FLOOR_500
			assert_between "$pct" "$floor" 101 \
				"${rate}M x$flows at the defaults: goodput ${floor}-101% of ceiling"
		else
			# The floor in % of the ceiling: FLOOR_1G% of the
			# lower of the ceiling and the unshaped goodput.
			floor=$(awk -v f="$FLOOR_1G" \
				-v c="$(hbm_pct_of_ceiling "$unshaped" "$rate")" \
				'BEGIN { printf "%.1f", f * (c < 100 ? c : 100) / 100 }')
			assert_between "$pct" "$floor" 101 \
				"1G x$flows: never above the rate, at least $FLOOR_1G% of min(ceiling, unshaped $unshaped Mbit/s): ${floor}-101% of ceiling"
		fi
	done
done
inA "$HBM" show "$DEV_A"
j=$(inA "$HBM" show "$DEV_A" --json)
samples=$(echo "$j" | jq -r '.devices[0].lateness.samples // empty')
credit=$(echo "$j" | jq -r '.devices[0].lateness.credit_ns // empty')
env=$(echo "$j" | jq -r '.devices[0].lateness.envelope_ns // empty')
burst=$(echo "$j" | jq -r '.devices[0].config.burst_ns // empty')
hbm_report "lateness: $(echo "$j" | jq -c '.devices[0].lateness')"
assert_gt "$samples" 0 "show: the watchdog's lateness was measured"
hbm_figure "show --json: lateness.envelope_ns" "$env"
hbm_figure "show --json: config.burst_ns" "$burst"
assert_eq "$credit" \
	"$(awk -v e="$env" -v b="$burst" 'BEGIN { m = 4000000
		if (e > m) e = m; print (e > b ? e : b) }')" \
	"show: idle credit = max(burst, lateness envelope up to 4ms)"
pkts=$(hbm_stat stats.packets)
hbm_figure "show --json: stats.packets" "$pkts"
hbm_report "cn $(hbm_stat stats.cn), marks $(hbm_stat stats.marks), drops $(hbm_stat drops.total) of $pkts packets"
assert_gt "$(hbm_stat stats.cn)" 0 "CN signals returned to the senders"
assert_lt "$(hbm_stat drops.total)" "$((pkts * 5 / 100))" "drops under 5% of packets"

# HBM's fixed burst, in the same boot: the defaults beat it.
inA "$HBM" set "$DEV_A" --rate 200mbit --late-credit off ||
	hbm_fatal "set --late-credit off"
for flows in 1 4; do
	g=$(hbm_iperf "$T" -P "$flows") ||
		hbm_fatal "200M x$flows, --late-credit off: iperf3 gave no goodput"
	pct=$(hbm_pct_of_ceiling "$g" 200)
	hbm_report "200 Mbit/s, $flows flow(s), --late-credit off: $g Mbit/s = ${pct}% of ceiling"
	assert_gt "${got[200-$flows]}" "$pct" \
		"200M x$flows: the defaults (${got[200-$flows]}%) beat HBM's fixed burst ($pct%)"
done
inA "$HBM" set "$DEV_A" --late-credit on --burst 2ms || hbm_fatal "set --burst 2ms"
g=$(hbm_iperf "$T" -P 4)
hbm_report "200 Mbit/s, 4 flows, --burst 2ms (not asserted): $g Mbit/s = $(hbm_pct_of_ceiling "$g" 200)% of ceiling"
hbm_done
