#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Loaders running at once must not corrupt each other: 8 loops of random
# attach, set, detach, load and unload on 4 veths for RACE_S seconds (two
# loops per device). Every command must succeed, or fail with a clear
# error (exit 1 or 2, its last line "bpf-hbm: couldn't ..."), never by a
# signal or with noise. Afterwards the kernel's state must agree with
# itself and with show: each device's root qdisc, its hbm_config entry,
# its marker pin and tcx link, and the pins as a whole (all or none).
. "$(dirname "$0")/lib.sh"

RACE_S=${RACE_S:-30}
PIN=/sys/fs/bpf/bpf_hbm
DEVS=(r0 r1 r2 r3)
OUT=$(mktemp -d)

hbm_veth_setup || hbm_fatal "veth setup"
for d in "${DEVS[@]}"; do
	ip link add "$d" netns "$NS_A" type veth peer name "p${d#r}" \
		netns "$NS_B" || hbm_fatal "veth $d"
	inA ip addr add "198.51.100.$((2 * ${d#r} + 1))/31" dev "$d"
	inB ip addr add "198.51.100.$((2 * ${d#r}))/31" dev "p${d#r}"
	inA ip link set "$d" up
	inB ip link set "p${d#r}" up
done

# One loop: random commands on DEV until END, each one's exit status and
# stderr checked; a bad one is written to OUT/bad.W.
race_loop() { # W DEV END
	local w=$1 dev=$2 end=$3 n=0 rc err last cmd
	local -a args

	while [ "$(date +%s)" -lt "$end" ]; do
		case $((RANDOM % 10)) in
		0|1|2) args=(attach "$dev" --rate "$((RANDOM % 900 + 10))mbit") ;;
		3) args=(attach "$dev" --replace --ecn off) ;;
		4|5) args=(set "$dev" --rate "$((RANDOM % 900 + 10))mbit") ;;
		6) args=(set "$dev" --ecn "$( ((RANDOM % 2)) && echo on || echo off)") ;;
		7|8) args=(detach "$dev") ;;
		9) if ((RANDOM % 2)); then args=(unload); else args=(load); fi ;;
		esac
		err=$(inA "$HBM" "${args[@]}" 2>&1 >/dev/null)
		rc=$?
		n=$((n + 1))
		cmd="bpf-hbm ${args[*]}"
		last=$(printf '%s\n' "$err" | tail -n 1)
		if [ "$rc" -gt 2 ]; then
			echo "$cmd: exit $rc: $err" >>"$OUT/bad.$w"
		elif [ "$rc" != 0 ] && [[ $last != "bpf-hbm: couldn't "* ]]; then
			echo "$cmd: exit $rc without a clear error: $err" >>"$OUT/bad.$w"
		elif [ -n "$err" ] && printf '%s\n' "$err" | grep -qv '^bpf-hbm: '; then
			echo "$cmd: exit $rc, stray output: $err" >>"$OUT/bad.$w"
		fi
		[ "$rc" = 0 ] && echo ok >>"$OUT/ok.$w"
		[ "$rc" != 0 ] && echo "$last" >>"$OUT/fail.$w"
	done
	echo "$n" >"$OUT/n.$w"
}

# Traffic on the devices while they change hands: some packets to shape.
for d in "${DEVS[@]}"; do
	inA ping -q -i 0.05 -w $((RACE_S + 5)) \
		"198.51.100.$((2 * ${d#r}))" >/dev/null 2>&1 &
done

end=$(( $(date +%s) + RACE_S ))
pids=()
for w in 0 1 2 3 4 5 6 7; do
	race_loop "$w" "${DEVS[w % 4]}" "$end" &
	pids+=($!)
done
wait "${pids[@]}"

total=$(cat "$OUT"/n.* | awk '{ s += $1 } END { print s + 0 }')
oks=$(cat "$OUT"/ok.* 2>/dev/null | wc -l)
echo "commands: $total, succeeded: $oks; failures by message:"
cat "$OUT"/fail.* 2>/dev/null | sed -E 's/r[0-9]/DEV/g; s/[0-9]+mbit/Nmbit/g' |
	sort | uniq -c | sort -rn
assert_gt "$total" 40 "the loops ran ($total commands in ${RACE_S}s)"
assert_gt "$oks" 10 "some commands succeeded ($oks)"
bad=$(cat "$OUT"/bad.* 2>/dev/null | wc -l)
cat "$OUT"/bad.* 2>/dev/null | head -n 20
assert_eq "$bad" 0 "every command succeeded or failed with a clear error"

# The final state, device by device.
loaded=0
[ -e "$PIN/link" ] && loaded=1
if [ -e "$PIN" ]; then
	for m in link hbm_ce hbm_config hbm_dev_rates hbm_instances \
		 hbm_class_configs hbm_class_rates; do
		assert_ok "pins all there ($m)" test -e "$PIN/$m"
	done
fi
netns=$(stat -L -c %i /run/netns/"$NS_A")
show=$(inA "$HBM" show --json 2>/dev/null)
if [ "$loaded" = 1 ]; then
	assert_ok "show --json parses" jq -e .devices <<<"$show" >/dev/null
	cfgs=$(bpftool -j map dump pinned "$PIN/hbm_config" | jq -e length)
	assert_ok "hbm_config read ($cfgs entries)" test -n "$cfgs"
fi
attached_n=0
for d in "${DEVS[@]}"; do
	idx=$(inA cat "/sys/class/net/$d/ifindex")
	kind=$(inA tc -j qdisc show dev "$d" root | jq -r '.[0].kind')
	tcx=$(inA bpftool -j net show dev "$d" |
	      jq '[.[0].tc[]? | select(.name == "hbm_ce")] | length')
	pin=0
	[ -e "$PIN/ce-$netns-$idx" ] && pin=1
	if [ "$kind" = bpf_hbm ]; then
		attached_n=$((attached_n + 1))
		assert_eq "$loaded" 1 "$d: bpf_hbm attached, so loaded"
		c=$(jq -c --arg d "$d" '.devices[] | select(.dev == $d)' <<<"$show")
		assert_ok "$d: in show" test -n "$c"
		assert_ok "$d: configured" test "$(jq -r .configured <<<"$c")" = true
		fin=$(jq -r .config.attach_finished <<<"$c")
		assert_ok "$d: attach finished ($fin)" test "$fin" = true
		ecn=$(jq -r .config.ecn <<<"$c")
		want=0
		[ "$ecn" = true ] && want=1
		assert_eq "$pin" "$want" "$d: marker pin iff ecn ($ecn)"
		assert_eq "$tcx" "$want" "$d: tcx marker iff ecn ($ecn)"
	else
		assert_eq "$pin" 0 "$d: not attached ($kind), no marker pin"
		assert_eq "$tcx" 0 "$d: not attached, no tcx marker"
		if [ "$loaded" = 1 ]; then
			n=$(jq --arg d "$d" '[.devices[] | select(.dev == $d)] | length' <<<"$show")
			assert_eq "$n" 0 "$d: not attached, not in show"
		fi
	fi
done
[ "$loaded" = 1 ] && assert_eq "$cfgs" "$attached_n" \
	"one hbm_config entry per attached device"

# And it all goes away.
for d in "${DEVS[@]}"; do
	inA "$HBM" detach "$d" >/dev/null 2>&1
done
assert_ok "unload at the end" inA "$HBM" unload
assert_ok "no pins left" test ! -e "$PIN"
for d in "${DEVS[@]}"; do
	tcx=$(inA bpftool -j net show dev "$d" |
	      jq '[.[0].tc[]? | select(.name == "hbm_ce")] | length')
	assert_eq "$tcx" 0 "$d: no tcx marker after unload"
done
hbm_report "$total commands by 8 loaders on 4 devices in ${RACE_S}s, $oks succeeded, $bad unclear"
rm -rf "$OUT"
hbm_done
