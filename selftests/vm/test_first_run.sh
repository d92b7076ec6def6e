#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A first run (issue 14), as a user who gives no rate sees it:
# (a) attach without --rate on a device whose driver reports no link speed
#     (a dummy, one tx queue or four: --parent mq) is refused, exit 1,
#     with "the link speed is unknown; give --rate", and changes nothing:
#     no pins when bpf_hbm was not loaded, the device's qdiscs as before,
#     no device in show when it was;
# (b) attach without --rate on a veth (which reports 10000 Mb/s) succeeds,
#     says so on stderr, and show --json reports 10 Gbit/s, configured;
#     the same under mq, on a veth with 4 tx queues; apply --dry-run on a
#     line without --rate shows the link speed it would use, and a line of
#     the dummy's is a failed change (exit 1);
# (c) `bpf-hbm load --rate 300mbit`, then a plain `tc qdisc add dev DEV
#     root bpf_hbm`: show marks DEV unconfigured, at the 300 Mbit/s
#     default (text and JSON), a TCP transfer is held to 300 Mbit/s (L2)
#     where it ran faster unshaped, and set on it starts from that
#     default, and so does class add on it. A second load --rate is
#     refused while loaded.
# bpf_hbm is unloaded first (load --rate applies to a fresh load) and at
# the end (the next tests' `tc qdisc add` expect the 1 Gbit/s default).
. "$(dirname "$0")/lib.sh"

PIN=/sys/fs/bpf/bpf_hbm
DUM=hbmd0	# dummy in A, one tx queue
DUM4=hbmd4	# dummy in A, 4 tx queues
MQ_A=hbmq0	# veth in A, 4 tx queues, its peer hbmq1 in A too
RATE=300	# Mbit/s, load --rate's
CONF=/tmp/$HBM_TEST.conf
OUT=/tmp/$HBM_TEST.out
ERR=/tmp/$HBM_TEST.err

first_cleanup() {
	rm -f "$CONF" "$OUT" "$ERR"
	hbm_cleanup
	# The devices' qdiscs went with A; what is left is this test's load.
	"$HBM" unload --force >/dev/null 2>&1
	return 0
}
trap first_cleanup EXIT

# run CMD...: $st its exit status, $out its stdout, $err its stderr.
run() {
	"$@" >"$OUT" 2>"$ERR"
	st=$?
	out=$(<"$OUT")
	err=$(<"$ERR")
}

# A's devices with bpf_hbm, as show --json lists them: {dev, configured,
# rate}, compact; "[]" when none (show's error when not loaded).
devices() {
	local j

	j=$(inA "$HBM" show --json 2>/dev/null) || { echo '[]'; return 0; }
	jq -c '[.devices[] | {dev, configured, rate: .config.rate_bps}]' <<<"$j"
}

dev_field() { # DEV JQ-PATH: of DEV in A's show --json
	inA "$HBM" show "$1" --json | jq -r ".devices[0].$2"
}

# l2_rate PORT: the L2 rate (Mbit/s) B receives over 4 s of a 2-flow TCP
# transfer from A, from 2 s after it starts; nothing if none was read.
l2_rate() {
	local pid r

	inB iperf3 -s -1 -D -p "$1" >/dev/null 2>&1
	# Under TCG a process can take seconds to start: wait for it.
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[ -n "$(inB ss -Hltn "sport = :$1")" ] && break
		sleep 0.3
	done
	ip netns exec "$NS_A" iperf3 -c "$ADDR_B" -p "$1" -t 8 -P 2 \
		>/dev/null 2>&1 &
	pid=$!
	sleep 2
	r=$(hbm_rx_rate 4)
	wait "$pid"
	echo "$r"
}

section() { echo "== $* (at ${SECONDS}s)"; }

if [ -e "$PIN" ]; then
	"$HBM" unload --force >/dev/null 2>&1 ||
		hbm_fatal "couldn't unload the bpf_hbm an earlier test left"
fi
assert_ok "nothing pinned at the start" test ! -e "$PIN"
hbm_veth_setup || hbm_fatal "veth setup"
inA ip link add "$DUM" type dummy || hbm_fatal "dummy $DUM"
inA ip link add "$DUM4" numtxqueues 4 type dummy || hbm_fatal "dummy $DUM4"
inA ip link set "$DUM" up
inA ip link set "$DUM4" up
inA ip link add "$MQ_A" numtxqueues 4 numrxqueues 4 type veth peer name \
	hbmq1 numtxqueues 4 numrxqueues 4 || hbm_fatal "veth $MQ_A"
inA ip link set "$MQ_A" up
inA ip link set hbmq1 up

section "(a) no link speed, nothing loaded"
for d in "$DUM" "$DUM4"; do
	qd=$(inA tc qdisc show dev "$d")
	run inA "$HBM" attach "$d"
	assert_eq "$st" 1 "attach $d without --rate: exit 1"
	assert_same "$err" \
		"bpf-hbm: couldn't attach $d: the link speed is unknown; give --rate" \
		"attach $d without --rate: the reason"
	assert_ok "attach $d without --rate: nothing on stdout ('$out')" \
		test -z "$out"
	assert_same "$(inA tc qdisc show dev "$d")" "$qd" \
		"attach $d without --rate: its qdiscs unchanged"
	assert_ok "attach $d without --rate: nothing pinned" test ! -e "$PIN"
done
# The options and the root qdisc are checked first: a usage error stays
# one (exit 2), with its own reason.
run inA "$HBM" attach "$DUM" --parent mq
assert_eq "$st" 2 "attach $DUM --parent mq without --rate: exit 2 ($err)"

section "(b) a veth: 10 Gbit/s"
run inA "$HBM" attach "$DEV_A" --parent root
assert_eq "$st" 0 "attach $DEV_A without --rate: exit 0"
assert_same "$err" "bpf-hbm: $DEV_A: no --rate, using the link speed 10Gbit" \
	"attach $DEV_A without --rate: says the link speed"
assert_same "$(dev_field "$DEV_A" config.rate_bps)" 10000000000 \
	"show --json: $DEV_A at 10 Gbit/s"
assert_same "$(dev_field "$DEV_A" configured)" true \
	"show --json: $DEV_A configured"
assert_same "$(dev_field "$DEV_A" instances)" 1 "$DEV_A: one instance (root)"

run inA "$HBM" attach "$MQ_A"
assert_eq "$st" 0 "attach $MQ_A (4 tx queues) without --rate: exit 0"
assert_same "$err" "bpf-hbm: $MQ_A: no --rate, using the link speed 10Gbit" \
	"attach $MQ_A without --rate: says the link speed"
assert_same "$(inA tc -j qdisc show dev "$MQ_A" root | jq -r '.[0].kind')" \
	mq "$MQ_A: an mq root"
assert_same "$(dev_field "$MQ_A" config.rate_bps)" 10000000000 \
	"show --json: $MQ_A at 10 Gbit/s"
assert_same "$(dev_field "$MQ_A" instances)" 4 "$MQ_A: 4 instances (mq)"

# Loaded now: a refused attach still changes nothing.
before=$(devices)
for d in "$DUM" "$DUM4"; do
	qd=$(inA tc qdisc show dev "$d")
	run inA "$HBM" attach "$d"
	assert_eq "$st" 1 "attach $d without --rate, loaded: exit 1"
	assert_same "$err" \
		"bpf-hbm: couldn't attach $d: the link speed is unknown; give --rate" \
		"attach $d without --rate, loaded: the reason"
	assert_same "$(inA tc qdisc show dev "$d")" "$qd" \
		"attach $d without --rate, loaded: its qdiscs unchanged"
done
assert_same "$(devices)" "$before" "refused attaches: show unchanged"
assert_ok "the pins stay" test -e "$PIN/link"

# apply: a line without --rate gets the link speed; the dummy's fails.
assert_ok "detach $DEV_A" inA "$HBM" detach "$DEV_A"
assert_ok "detach $MQ_A" inA "$HBM" detach "$MQ_A"
printf '%s --parent root\n%s\n' "$DEV_A" "$DUM" >"$CONF"
run inA "$HBM" apply "$CONF" --dry-run
assert_eq "$st" 1 "apply --dry-run, a line of a dummy's without --rate: exit 1"
assert_ok "apply --dry-run: $DEV_A at its link speed ($out)" \
	grep -qxF "bpf-hbm: dry run: $DEV_A: attached (parent root, rate 10Gbit (link speed), ecn on)" "$OUT"
assert_ok "apply --dry-run: $DUM's line refused ($err)" \
	grep -qxF "bpf-hbm: couldn't apply $CONF:2: $DUM: the link speed is unknown; give --rate" "$ERR"
assert_same "$(devices)" "[]" "apply --dry-run: nothing attached"

section "(c) load --rate ${RATE}mbit, tc qdisc add"
run "$HBM" unload
assert_eq "$st" 0 "unload ($err)"
run "$HBM" load --rate "${RATE}mbit"
assert_eq "$st" 0 "load --rate ${RATE}mbit: exit 0 ($err)"
run "$HBM" load --rate 200mbit
assert_eq "$st" 1 "load --rate again, loaded: exit 1"
assert_same "$err" \
	"bpf-hbm: couldn't load bpf_hbm: already loaded: --rate applies to a fresh load (bpf-hbm unload first)" \
	"load --rate again, loaded: the reason"

un=$(l2_rate 5311)
assert_ok "tc qdisc add dev $DEV_A root bpf_hbm" \
	inA tc qdisc add dev "$DEV_A" root bpf_hbm || hbm_done
assert_same "$(dev_field "$DEV_A" configured)" false \
	"show --json: $DEV_A unconfigured"
assert_same "$(dev_field "$DEV_A" config.rate_bps)" "$((RATE * 1000000))" \
	"show --json: $DEV_A at load's ${RATE} Mbit/s"
txt=$(inA "$HBM" show "$DEV_A")
echo "$txt"
assert_ok "show: $DEV_A unconfigured, at load's default rate" \
	grep -qF ", unconfigured (load-time default rate ${RATE}Mbit)" <<<"$txt"
assert_ok "show: the rate line says ${RATE}Mbit" \
	grep -qE "^  rate +${RATE}Mbit" <<<"$txt"

sh=$(l2_rate 5312)
hbm_figure "unshaped L2 rate" "$un"
hbm_figure "shaped L2 rate" "$sh"
hbm_report "(c) TCP x2: unshaped $un Mbit/s, tc qdisc add at load's ${RATE} Mbit/s: $sh Mbit/s (L2)"
assert_le "$sh" "$((RATE * 101 / 100))" \
	"at most 101% of ${RATE} Mbit/s (unshaped $un)"
assert_gt "$sh" 10 "TCP passes through the unconfigured bpf_hbm"
if awk -v u="$un" -v r="$RATE" 'BEGIN { exit !(u > 1.05 * r) }'; then
	echo "PASS: unshaped TCP beat ${RATE} Mbit/s ($un): the shaping was seen"
	assert_ge "$sh" "$((RATE * 50 / 100))" \
		"shaped at 50% of ${RATE} Mbit/s or more"
else
	echo "NOTE: unshaped TCP ($un Mbit/s) did not beat ${RATE} Mbit/s here: only the upper bound is seen"
fi

# set on an unconfigured device starts from load's default, not 1gbit.
assert_ok "set $DEV_A --burst 1ms" inA "$HBM" set "$DEV_A" --burst 1ms
assert_same "$(dev_field "$DEV_A" configured)" true \
	"set: $DEV_A configured now"
assert_same "$(dev_field "$DEV_A" config.rate_bps)" "$((RATE * 1000000))" \
	"set: $DEV_A still at ${RATE} Mbit/s"
assert_same "$(dev_field "$DEV_A" config.burst_ns)" 1000000 \
	"set: $DEV_A's burst 1ms"

# So does class add, which writes the device's class levels into a
# configuration it makes for an unconfigured device.
assert_ok "detach $DEV_A" inA "$HBM" detach "$DEV_A"
assert_ok "tc qdisc add dev $DEV_A root bpf_hbm, again" \
	inA tc qdisc add dev "$DEV_A" root bpf_hbm || hbm_done
assert_same "$(dev_field "$DEV_A" configured)" false \
	"show --json: $DEV_A unconfigured again"
CG=$(hbm_cg c)
assert_ok "class add on the unconfigured $DEV_A" \
	inA "$HBM" class add "$DEV_A" --cgroup "$CG" --rate 100mbit
assert_same "$(dev_field "$DEV_A" config.rate_bps)" "$((RATE * 1000000))" \
	"class add: $DEV_A still at load's ${RATE} Mbit/s"
assert_ok "class del" inA "$HBM" class del "$DEV_A" --cgroup "$CG"
hbm_report "$SECONDS s"
hbm_done
