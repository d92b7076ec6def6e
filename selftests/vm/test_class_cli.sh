#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-hbm class: bad input gets one clear line on stderr
# ("bpf-hbm: couldn't ..."), exit 2 for usage and 1 otherwise, and
# changes nothing (the device's classes and configuration as before).
# Paths with spaces, quotes and non-ASCII bytes come back intact in JSON,
# and the limits are in --help. Output to a full device is an error.
. "$(dirname "$0")/lib.sh"

hbm_veth_setup || hbm_fatal "veth setup"
CG=$(hbm_cg a)
assert_ok "attach" inA "$HBM" attach "$DEV_A" --parent root --rate 1gbit || hbm_done
assert_ok "class add" inA "$HBM" class add "$DEV_A" --cgroup "$CG" \
	--rate 100mbit || hbm_done

state() {
	inA "$HBM" show "$DEV_A" --json |
		jq -c '.devices[0] | {config, classes: [.classes[] | {cgroup, config}]}'
}

# bad WANT_STATUS DESCRIPTION ARGS...: bpf-hbm ARGS fails as it should.
bad() {
	local want=$1 what=$2 before after st err
	shift 2

	before=$(state)
	err=$(inA "$HBM" "$@" 2>&1 >/dev/null)
	st=$?
	after=$(state)
	echo "  bpf-hbm $*: status $st: $err"
	assert_eq "$st" "$want" "$what: exit $want"
	assert_eq "$(printf '%s\n' "$err" | wc -l)" 1 "$what: one line"
	if [[ $err == "bpf-hbm: couldn't "* ]]; then
		echo "PASS: $what: says what it couldn't do"
	else
		echo "FAIL: $what: not a 'bpf-hbm: couldn't ...' line"
		HBM_FAILED=1
	fi
	if [ -n "$before" ] && [ "$before" = "$after" ]; then
		echo "PASS: $what: nothing changed"
	else
		echo "FAIL: $what: state changed or unreadable: '$before' -> '$after'"
		HBM_FAILED=1
	fi
}

echo hello >/tmp/"$HBM_TEST".file
bad 1 "a path that does not exist" class add "$DEV_A" \
	--cgroup "$HBM_CG_ROOT/hbm-no-such-cgroup" --rate 10mbit
bad 1 "a relative path that does not exist" class add "$DEV_A" \
	--cgroup "hbm-no-such-cgroup" --rate 10mbit
bad 1 "a path not on cgroup2" class add "$DEV_A" --cgroup /tmp \
	--rate 10mbit
bad 1 "a file, not a directory" class add "$DEV_A" \
	--cgroup "$CG/cgroup.procs" --rate 10mbit
bad 1 "adding a class twice" class add "$DEV_A" --cgroup "$CG" \
	--rate 10mbit
CG2=$(hbm_cg b)
bad 1 "deleting a missing class" class del "$DEV_A" --cgroup "$CG2"
bad 1 "setting a missing class" class set "$DEV_A" --cgroup "$CG2" \
	--rate 10mbit
bad 2 "a rate above the range" class add "$DEV_A" --cgroup "$CG2" \
	--rate 500gbit
bad 2 "a rate below the range" class add "$DEV_A" --cgroup "$CG2" \
	--rate 100kbit
bad 2 "a rate out of range on set" class set "$DEV_A" --cgroup "$CG" \
	--rate 0
bad 2 "mark >= drop" class add "$DEV_A" --cgroup "$CG2" --rate 10mbit \
	--mark 1ms --drop 1ms
bad 2 "mark >= drop on set" class set "$DEV_A" --cgroup "$CG" \
	--mark 2ms
bad 2 "add without --rate" class add "$DEV_A" --cgroup "$CG2"
bad 2 "add without --cgroup" class add "$DEV_A" --rate 10mbit
bad 2 "an unknown sub-command" class frob "$DEV_A" --cgroup "$CG2"
inA ip link add hbmx type dummy
bad 1 "DEV without bpf_hbm" class add hbmx --cgroup "$CG2" --rate 10mbit
bad 1 "a DEV that does not exist" class add hbm-nodev --cgroup "$CG2" \
	--rate 10mbit

# Paths that need escaping in JSON.
for name in 'sp ace' 'qu"ote' "back\\slash" 'näme-ü' $'ctl\tab'; do
	p=$HBM_CG_ROOT/hbm-$HBM_TEST-$name
	mkdir "$p" || { echo "FAIL: mkdir '$p'"; HBM_FAILED=1; continue; }
	HBM_CGROUPS+=("$p")
	assert_ok "class add '$name'" inA "$HBM" class add "$DEV_A" \
		--cgroup "$p" --rate 10mbit || continue
	got=$(inA "$HBM" class list "$DEV_A" --json |
		jq -er --arg p "$p" '[.classes[] | select(.cgroup == $p)] | length')
	assert_eq "${got:--1}" 1 "class list --json gives back '$name' intact"
done
p=$HBM_CG_ROOT/hbm-$HBM_TEST-$'\xff\xfe'
if mkdir "$p"; then
	HBM_CGROUPS+=("$p")
	assert_ok "class add (invalid UTF-8)" inA "$HBM" class add "$DEV_A" \
		--cgroup "$p" --rate 10mbit
	assert_ok "show --json is valid JSON with an invalid UTF-8 path" \
		bash -c "ip netns exec $NS_A $HBM show --json | jq -e . >/dev/null"
fi

# Output that cannot be written is a failure, not an empty success.
err=$(inA "$HBM" class list "$DEV_A" --json 2>&1 >/dev/full)
st=$?
assert_eq "$st" 1 "class list --json >/dev/full: exit 1"
assert_same "$err" "bpf-hbm: couldn't write the output: No space left on device" \
	"class list --json >/dev/full: the reason"
err=$(inA "$HBM" class list "$DEV_A" 2>&1 >/dev/full)
assert_eq "$?" 1 "class list >/dev/full: exit 1 ($err)"

h=$("$HBM" class --help)
assert_ok "class --help gives the limit of classes" grep -q 4096 <<<"$h"
assert_ok "--help has the class commands" \
	bash -c "$HBM --help | grep -q 'class add'"
hbm_done
