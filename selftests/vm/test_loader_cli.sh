#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Every bpf-hbm command and every kind of bad input, as a user sees them:
# the exact exit status (0 ok, 1 failure, 2 usage) and the one line on
# stderr ("bpf-hbm: couldn't <verb> <object>: <reason>"), and after each
# failure nothing changed: the device's qdiscs are as before, no pins
# appear when bpf_hbm was not loaded, no hbm_config entry when it was.
# Foreign root qdiscs are never deleted, only replaced with --replace;
# unload refuses while attached unless --force; stale pins of a crashed
# run are recovered; -h works everywhere; a half-way failure of attach
# (a device with more tx queues than bpf_hbm has instances) rolls back
# everything, down to unloading what it loaded.
. "$(dirname "$0")/lib.sh"

PIN=/sys/fs/bpf/bpf_hbm
# Under `ip netns exec` (its own mount namespace, no bpffs at /sys/fs/bpf)
# bpf-hbm uses PID 1's bpffs, and names its pins by that path.
PIN_NS=/proc/1/root$PIN
DEVQ=hbmq0	# 1030 tx queues: more than bpf_hbm's 1024 instances
DEV4=hbmq4	# 4 tx queues

# hbm_run CMD...: run it; $rc its exit status, $out its stdout, $err its
# stderr.
hbm_run() {
	"$@" >"/tmp/$HBM_TEST.out" 2>"/tmp/$HBM_TEST.err"
	rc=$?
	out=$(cat "/tmp/$HBM_TEST.out")
	err=$(cat "/tmp/$HBM_TEST.err")
}

# expect RC STDERR DESCRIPTION [STDOUT]: the last hbm_run exited RC and
# wrote exactly STDERR to stderr and STDOUT (default: nothing) to stdout.
expect() {
	local want_out=${4-}

	if [ "$rc" = "$1" ] && [ "$err" = "$2" ] && [ "$out" = "$want_out" ]; then
		echo "PASS: $3 (exit $rc${2:+, \"$2\"}${want_out:+, stdout \"$want_out\"})"
		return 0
	fi
	echo "FAIL: $3: exit $rc, stderr \"$err\", stdout \"$out\"" \
		"(want exit $1, stderr \"$2\", stdout \"$want_out\")"
	HBM_FAILED=1
	return 1
}

assert_str() { # GOT WANT DESCRIPTION
	if [ "$1" = "$2" ]; then
		echo "PASS: $3"
		return 0
	fi
	echo "FAIL: $3: got \"$1\", want \"$2\""
	HBM_FAILED=1
	return 1
}

qdiscs() { inA tc qdisc show dev "$1"; }
root_kind() { inA tc -j qdisc show dev "$1" root | jq -r '.[0].kind'; }
ifindex() { inA cat "/sys/class/net/$1/ifindex"; }
NETNS_A=

# hbm_config entries (bpftool's view, not bpf-hbm's) of A's device DEV.
cfg_entries() {
	[ -e "$PIN/hbm_config" ] || { echo 0; return; }
	bpftool -j map dump pinned "$PIN/hbm_config" |
		jq --argjson i "$(ifindex "$1")" --argjson n "$NETNS_A" \
		'[.[] | select(.formatted.key.ifindex == $i and
				.formatted.key.netns == $n)] | length'
}
inst_entries() { # hbm_instances entries, all devices
	[ -e "$PIN/hbm_instances" ] || { echo 0; return; }
	bpftool -j map dump pinned "$PIN/hbm_instances" | jq length
}
cfg_json() { inA "$HBM" show "$1" --json | jq -c '.devices[0].config'; }

# After a failed command: DEV's qdiscs are still QD, and bpf_hbm left no
# trace: no pins if it was not loaded ($LOADED=0), else no config entry.
no_trace() { # DESCRIPTION [DEV QD]
	local dev=${2:-$DEV_A} qd=${3:-$QD0}

	assert_str "$(qdiscs "$dev")" "$qd" "$1: $dev's qdiscs unchanged"
	if [ "$LOADED" = 0 ]; then
		assert_ok "$1: no pins left" test ! -e "$PIN"
	else
		assert_eq "$(cfg_entries "$dev")" 0 "$1: no config entry for $dev"
	fi
}

kind_unknown() { # DESCRIPTION: the bpf_hbm kind is not registered
	hbm_run inA tc qdisc add dev "$DEV_A" root bpf_hbm
	expect 2 "Error: Specified qdisc kind is unknown." "$1"
}

pins_loaded() { # DESCRIPTION
	assert_ok "$1: link and maps pinned" test -e "$PIN/link" -a \
		-e "$PIN/hbm_config" -a -e "$PIN/hbm_classes" -a \
		-e "$PIN/hbm_instances"
}

hbm_veth_setup || hbm_fatal "veth setup"
NETNS_A=$(inA stat -L -c %i /proc/self/ns/net)
IFX_A=$(ifindex "$DEV_A")
# Earlier tests leave bpf_hbm loaded: start from nothing.
"$HBM" unload --force >/dev/null 2>&1
[ -e "$PIN" ] && hbm_fatal "bpf_hbm still pinned after unload --force"
QD0=$(qdiscs "$DEV_A")
assert_str "$QD0" "qdisc noqueue 0: root refcnt 2 " "veth starts with noqueue"
LOADED=0

## The command line itself.
hbm_run "$HBM"
expect 2 "bpf-hbm: couldn't parse arguments: no command given (see bpf-hbm --help)" "no command"
hbm_run "$HBM" frobnicate
expect 2 "bpf-hbm: couldn't parse arguments: unknown command 'frobnicate' (see bpf-hbm --help)" "unknown command"
hbm_run "$HBM" --bogus load
expect 2 "bpf-hbm: couldn't parse arguments: unrecognized option '--bogus' (see bpf-hbm --help)" "unknown option before the command"
no_trace "bad command lines"

hbm_run "$HBM" --help
help=$out
assert_eq "$rc" 0 "--help exits 0"
assert_str "$err" "" "--help writes nothing on stderr"
for c in load unload attach set show detach help; do
	assert_ok "--help describes '$c'" grep -qE "^  $c( |\$)" <<<"$help"
done
assert_ok "--help explains the exit status" \
	grep -q '^Exit status: 0 success, 1 failure, 2 usage error' <<<"$help"
hbm_run "$HBM" help
assert_ok "'help' is --help (exit $rc)" test "$rc" = 0 -a "$out" = "$help"
hbm_run "$HBM" --version
assert_ok "--version (exit $rc: $out)" test "$rc" = 0 -a -z "$err"
assert_ok "--version names the ABI and libbpf" \
	grep -qE '^bpf-hbm [0-9.]+ \(bpf_hbm ABI [0-9]+, libbpf v[0-9.]+\)$' <<<"$out"

# -h/--help on every command prints its usage, runs nothing: no DEV is
# needed, nothing is loaded or detached.
declare -A usage=(
	[load]="Usage: bpf-hbm load [-v]"
	[unload]="Usage: bpf-hbm unload [-v] [--force]"
	[attach]="Usage: bpf-hbm attach DEV [OPTION...]"
	[set]="Usage: bpf-hbm set DEV OPTION..."
	[show]="Usage: bpf-hbm show [DEV] [--json] [--watch SECONDS]"
	[detach]="Usage: bpf-hbm detach DEV"
)
for c in load unload attach set show detach; do
	for h in -h --help; do
		hbm_run inA "$HBM" "$c" "$h"
		assert_ok "$c $h: exit $rc, usage, no stderr" test "$rc" = 0 \
			-a "$(head -n 1 <<<"$out")" = "${usage[$c]}" -a -z "$err"
	done
done
hbm_run inA "$HBM" attach "$DEV_A" --rate 10mbit -h
assert_ok "attach DEV --rate 10mbit -h: exit $rc, usage only" test "$rc" = 0 \
	-a "$(head -n 1 <<<"$out")" = "${usage[attach]}"
no_trace "-h on every command"

## Bad input, bpf_hbm not loaded: exit 2 (1 for a missing device), and
## nothing pinned, nothing changed.
bad_attach() { # RC REASON ARG...
	local want=$1 reason=$2

	shift 2
	hbm_run inA "$HBM" attach "$@"
	expect "$want" "bpf-hbm: couldn't attach $DEV_A: $reason" "attach $*"
	no_trace "attach $*"
}
bad_inputs() {
	bad_attach 2 "rate must be positive" "$DEV_A" --rate 0
	bad_attach 2 "invalid rate '-5mbit'" "$DEV_A" --rate -5mbit
	bad_attach 2 "rate 401gbit out of range 1Mbit..400Gbit" "$DEV_A" --rate 401gbit
	bad_attach 2 "rate 500kbit out of range 1Mbit..400Gbit" "$DEV_A" --rate 500kbit
	bad_attach 2 "invalid rate '10mbits'" "$DEV_A" --rate 10mbits
	bad_attach 2 "invalid rate 'fast'" "$DEV_A" --rate fast
	bad_attach 2 "mark threshold (500us) must be below drop threshold (500us)" "$DEV_A" --mark 500us
	bad_attach 2 "mark threshold (2ms) must be below drop threshold (1ms)" "$DEV_A" --mark 2ms --drop 1ms
	bad_attach 2 "drop-large threshold (600us) must not exceed drop threshold (500us)" "$DEV_A" --drop-large 600us
	bad_attach 2 "burst must be positive" "$DEV_A" --burst 0
	bad_attach 2 "invalid burst '1parsec'" "$DEV_A" --burst 1parsec
	bad_attach 2 "horizon 3601s out of range (at most 3600s)" "$DEV_A" --horizon 3601s
	bad_attach 2 "limit must be positive" "$DEV_A" --limit 0
	bad_attach 2 "flow-limit must be positive" "$DEV_A" --flow-limit 0
	bad_attach 2 "invalid limit '-1'" "$DEV_A" --limit -1
	bad_attach 2 "flow-limit (20000) must not exceed limit (10000)" "$DEV_A" --flow-limit 20000
	bad_attach 2 "unrecognized option '--bogus'" "$DEV_A" --bogus
	bad_attach 2 "unrecognized option '-x'" "$DEV_A" -x
	bad_attach 2 "option '--rate' needs a value" "$DEV_A" --rate
	bad_attach 2 "invalid parent 'leaf' (root or mq)" "$DEV_A" --parent leaf
	bad_attach 2 "unexpected argument 'extra'" "$DEV_A" extra
	bad_attach 2 "$DEV_A has one tx queue; use --parent root" "$DEV_A" --parent mq

	hbm_run inA "$HBM" attach --rate 10mbit
	expect 2 "bpf-hbm: couldn't attach bpf_hbm: missing DEV (usage: bpf-hbm attach DEV ...)" "attach without DEV"
	no_trace "attach without DEV"
	hbm_run inA "$HBM" attach nosuch0
	expect 1 "bpf-hbm: couldn't attach nosuch0: no such device" "attach to an unknown device"
	no_trace "attach to an unknown device"
	hbm_run inA "$HBM" attach averyveryverylongname
	expect 2 "bpf-hbm: couldn't attach averyveryverylongname: invalid device name 'averyveryverylongname'" "attach to an impossible name"
	no_trace "attach to an impossible name"

	hbm_run inA "$HBM" set
	expect 2 "bpf-hbm: couldn't set bpf_hbm: missing DEV (usage: bpf-hbm set DEV ...)" "set without DEV"
	hbm_run inA "$HBM" set "$DEV_A"
	expect 2 "bpf-hbm: couldn't set $DEV_A: no option given (see bpf-hbm set --help)" "set without an option"
	hbm_run inA "$HBM" set "$DEV_A" --rate 0
	expect 2 "bpf-hbm: couldn't set $DEV_A: rate must be positive" "set --rate 0"
	hbm_run inA "$HBM" set "$DEV_A" --parent root
	expect 2 "bpf-hbm: couldn't set $DEV_A: unrecognized option '--parent'" "set takes no --parent"
	hbm_run inA "$HBM" set nosuch0 --rate 10mbit
	expect 1 "bpf-hbm: couldn't set nosuch0: no such device" "set on an unknown device"
	hbm_run inA "$HBM" detach
	expect 2 "bpf-hbm: couldn't detach bpf_hbm: missing DEV (usage: bpf-hbm detach DEV ...)" "detach without DEV"
	hbm_run inA "$HBM" detach nosuch0
	expect 1 "bpf-hbm: couldn't detach nosuch0: no such device" "detach an unknown device"
	hbm_run inA "$HBM" show nosuch0
	expect 1 "bpf-hbm: couldn't show nosuch0: no such device" "show an unknown device"
	hbm_run inA "$HBM" show --watch 0
	expect 2 "bpf-hbm: couldn't show bpf_hbm: invalid interval '0' (whole seconds, at least 1)" "show --watch 0"
	hbm_run inA "$HBM" load "$DEV_A"
	expect 2 "bpf-hbm: couldn't load bpf_hbm: unexpected argument '$DEV_A'" "load takes no DEV"
	hbm_run inA "$HBM" unload --forced
	expect 2 "bpf-hbm: couldn't unload bpf_hbm: unrecognized option '--forced'" "unload --forced"
	no_trace "bad set/detach/show/load/unload input"
}
bad_inputs

# Commands on a device without bpf_hbm, not loaded.
hbm_run inA "$HBM" set "$DEV_A" --rate 10mbit
expect 1 "bpf-hbm: couldn't set $DEV_A: bpf_hbm not attached to $DEV_A (not loaded)" "set, not loaded"
no_trace "set, not loaded"
hbm_run inA "$HBM" detach "$DEV_A"
expect 1 "bpf-hbm: couldn't detach $DEV_A: bpf_hbm not attached to $DEV_A" "detach, not loaded"
no_trace "detach, not loaded"
for args in "" "$DEV_A" "--json"; do
	hbm_run inA "$HBM" show $args
	expect 1 "bpf-hbm: couldn't show bpf_hbm: not loaded (run bpf-hbm load)" "show $args, not loaded"
done
hbm_run "$HBM" unload
expect 0 "" "unload, not loaded" "bpf-hbm: bpf_hbm not loaded"
no_trace "show/unload, not loaded"

## A foreign root qdisc: attach refuses without --replace, detach never
## deletes it; --replace swaps it in one step.
inA tc qdisc add dev "$DEV_A" root handle 1: fq || hbm_fatal "tc add fq"
QD_FQ=$(qdiscs "$DEV_A")
hbm_run inA "$HBM" attach "$DEV_A"
expect 1 "bpf-hbm: couldn't attach $DEV_A: $DEV_A has a root qdisc (fq); use --replace" "attach over fq"
no_trace "attach over fq" "$DEV_A" "$QD_FQ"
hbm_run inA "$HBM" detach "$DEV_A"
expect 1 "bpf-hbm: couldn't detach $DEV_A: bpf_hbm not attached to $DEV_A" "detach with fq at the root"
no_trace "detach with fq at the root" "$DEV_A" "$QD_FQ"

# tc monitor sees what the kernel did: with an atomic swap, fq is deleted
# and bpf_hbm created in one graft, the device never falls back to its
# default (noqueue) in between, which a delete-then-add would show.
ip netns exec "$NS_A" tc monitor >"/tmp/$HBM_TEST.mon" 2>&1 &
mon=$!
sleep 0.5
hbm_run inA "$HBM" attach "$DEV_A" --replace --rate 50mbit
expect 0 "" "attach --replace over fq"
sleep 0.5
kill "$mon"
wait "$mon" 2>/dev/null
cat "/tmp/$HBM_TEST.mon"
LOADED=1
assert_str "$(root_kind "$DEV_A")" bpf_hbm "root is bpf_hbm after --replace"
assert_eq "$(qdiscs "$DEV_A" | grep -c fq)" 0 "fq is gone"
assert_eq "$(grep -c "^deleted qdisc fq 1: dev $DEV_A root" "/tmp/$HBM_TEST.mon")" 1 "monitor: fq deleted once"
assert_eq "$(grep -c "^qdisc bpf_hbm .* dev $DEV_A root" "/tmp/$HBM_TEST.mon")" 1 "monitor: bpf_hbm created once"
assert_eq "$(grep -c noqueue "/tmp/$HBM_TEST.mon")" 0 "monitor: never noqueue in between (atomic)"
pins_loaded "attach loaded bpf_hbm"

## Attached: a second attach, bad options and set keep what is there.
QD_HBM=$(qdiscs "$DEV_A")
CFG=$(cfg_json "$DEV_A")
assert_str "$(jq -r .rate_bps <<<"$CFG")" 50000000 "configured rate 50mbit"
attached_kept() { # DESCRIPTION
	assert_str "$(qdiscs "$DEV_A")" "$QD_HBM" "$1: qdisc unchanged"
	assert_str "$(cfg_json "$DEV_A")" "$CFG" "$1: configuration unchanged"
}
hbm_run inA "$HBM" attach "$DEV_A" --rate 60mbit
expect 1 "bpf-hbm: couldn't attach $DEV_A: bpf_hbm already attached (use --replace or set)" "attach twice"
attached_kept "attach twice"
hbm_run inA "$HBM" attach "$DEV_A" --parent mq --replace
expect 2 "bpf-hbm: couldn't attach $DEV_A: $DEV_A has one tx queue; use --parent root" "attach --parent mq --replace, one queue"
attached_kept "attach --parent mq, one queue"
for bad in "--rate 0|rate must be positive" \
	   "--mark 1ms|mark threshold (1ms) must be below drop threshold (500us)" \
	   "--drop 40us|mark threshold (50us) must be below drop threshold (40us)" \
	   "--flow-limit 20000|flow-limit (20000) must not exceed limit (10000)" \
	   "--limit 50|flow-limit (100) must not exceed limit (50)" \
	   "--burst 0|burst must be positive"; do
	hbm_run inA "$HBM" set "$DEV_A" ${bad%%|*}
	expect 2 "bpf-hbm: couldn't set $DEV_A: ${bad#*|}" "set ${bad%%|*}"
	attached_kept "set ${bad%%|*}"
done
hbm_run inA "$HBM" set "$DEV_A" --mark 100us
expect 0 "" "set --mark 100us"
c=$(cfg_json "$DEV_A")
assert_str "$(jq -r '"\(.rate_bps) \(.mark_ns)"' <<<"$c")" "50000000 100000" "set changed mark only"
assert_str "$(qdiscs "$DEV_A")" "$QD_HBM" "set did not re-attach"

# --replace on our own attachment rewrites the configuration from the
# defaults (mark back to 50us) and keeps the qdisc.
hbm_run inA "$HBM" attach "$DEV_A" --replace --rate 70mbit
expect 0 "" "attach --replace, attached"
assert_str "$(qdiscs "$DEV_A")" "$QD_HBM" "attach --replace kept the qdisc"
c=$(cfg_json "$DEV_A")
assert_str "$(jq -r '"\(.rate_bps) \(.mark_ns)"' <<<"$c")" "70000000 50000" "attach --replace: defaults + --rate"

hbm_run inA "$HBM" show --json
assert_eq "$rc" 0 "show --json exits 0"
is_json() { jq -e . <<<"$1" >/dev/null; }
assert_ok "show --json is JSON" is_json "$out"
j=$(jq -c '[.devices[] | {dev, configured, instances, rate: .config.rate_bps, ifindex}]' <<<"$out")
assert_str "$j" "[{\"dev\":\"$DEV_A\",\"configured\":true,\"instances\":1,\"rate\":70000000,\"ifindex\":$IFX_A}]" "show --json: $DEV_A at 70mbit"
hbm_run inA "$HBM" show "$DEV_A"
assert_ok "show $DEV_A: exit $rc, rate 70Mbit" test "$rc" = 0 -a -z "$err"
assert_ok "show $DEV_A prints the rate" grep -qE '^  rate +70Mbit$' <<<"$out"

# A device without bpf_hbm (A's lo), bpf_hbm loaded.
QD_LO=$(qdiscs lo)
hbm_run inA "$HBM" set lo --rate 10mbit
expect 1 "bpf-hbm: couldn't set lo: bpf_hbm not attached to lo" "set on lo, loaded"
no_trace "set on lo" lo "$QD_LO"
hbm_run inA "$HBM" detach lo
expect 1 "bpf-hbm: couldn't detach lo: bpf_hbm not attached to lo" "detach lo, loaded"
no_trace "detach lo" lo "$QD_LO"
hbm_run inA "$HBM" show lo
expect 1 "bpf-hbm: couldn't show lo: bpf_hbm not attached to lo" "show lo"

## unload refuses while attached, naming the device; --force detaches.
hbm_run inA "$HBM" unload
expect 1 "bpf-hbm: couldn't unload bpf_hbm: still attached to $DEV_A (detach first, or --force)" "unload while attached"
hbm_run "$HBM" unload
expect 1 "bpf-hbm: couldn't unload bpf_hbm: still attached to ifindex $IFX_A (netns $NETNS_A) (detach first, or --force)" "unload from another netns"
attached_kept "refused unload"
pins_loaded "refused unload"
hbm_run inA "$HBM" unload --force
expect 0 "bpf-hbm: detached $DEV_A" "unload --force" "bpf-hbm: unloaded bpf_hbm"
LOADED=0
assert_ok "unload --force: no pins" test ! -e "$PIN"
assert_str "$(qdiscs "$DEV_A")" "$QD0" "unload --force: $DEV_A back to noqueue"
kind_unknown "after unload --force, tc qdisc add bpf_hbm fails"

## load/unload, quiet without -v, libbpf's log with it.
hbm_run "$HBM" load
expect 0 "" "load" "bpf-hbm: loaded bpf_hbm (pinned in $PIN)"
LOADED=1
pins_loaded "load"
hbm_run "$HBM" load
expect 0 "" "load again" "bpf-hbm: bpf_hbm already loaded (pinned in $PIN)"
hbm_run inA "$HBM" show
expect 0 "" "show, nothing attached" "bpf_hbm is loaded but not attached to any device"

# Bad input with bpf_hbm loaded leaves no config entry.
bad_inputs
hbm_run inA "$HBM" set "$DEV_A" --rate 10mbit
expect 1 "bpf-hbm: couldn't set $DEV_A: bpf_hbm not attached to $DEV_A" "set, loaded, not attached"
no_trace "set, loaded, not attached"
hbm_run inA "$HBM" show "$DEV_A"
expect 1 "bpf-hbm: couldn't show $DEV_A: bpf_hbm not attached to $DEV_A" "show, loaded, not attached"
inA tc qdisc add dev "$DEV_A" root handle 1: htb || hbm_fatal "tc add htb"
QD_HTB=$(qdiscs "$DEV_A")
hbm_run inA "$HBM" attach "$DEV_A" --rate 10mbit
expect 1 "bpf-hbm: couldn't attach $DEV_A: $DEV_A has a root qdisc (htb); use --replace" "attach over htb, loaded"
no_trace "attach over htb" "$DEV_A" "$QD_HTB"
hbm_run inA "$HBM" detach "$DEV_A"
expect 1 "bpf-hbm: couldn't detach $DEV_A: bpf_hbm not attached to $DEV_A" "detach with htb at the root, loaded"
no_trace "detach with htb at the root" "$DEV_A" "$QD_HTB"
inA tc qdisc del dev "$DEV_A" root

# A foreign mq root (a device with 4 tx queues) is not "attached" either.
inA ip link add "$DEV4" numtxqueues 4 type dummy && inA ip link set "$DEV4" up &&
	inA tc qdisc add dev "$DEV4" root handle 1: mq || hbm_fatal "$DEV4 with mq"
QD_MQ=$(qdiscs "$DEV4")
hbm_run inA "$HBM" detach "$DEV4"
expect 1 "bpf-hbm: couldn't detach $DEV4: bpf_hbm not attached to $DEV4" "detach with a foreign mq root"
no_trace "detach with a foreign mq root" "$DEV4" "$QD_MQ"
hbm_run inA "$HBM" attach "$DEV4"
expect 1 "bpf-hbm: couldn't attach $DEV4: $DEV4 has a root qdisc (mq); use --replace" "attach over a foreign mq"
no_trace "attach over a foreign mq" "$DEV4" "$QD_MQ"

hbm_run "$HBM" unload
expect 0 "" "unload" "bpf-hbm: unloaded bpf_hbm"
LOADED=0
assert_ok "unload: no pins" test ! -e "$PIN"
kind_unknown "after unload, tc qdisc add bpf_hbm fails"

hbm_run "$HBM" -v load
assert_eq "$rc" 0 "-v load exits 0"
assert_str "$out" "bpf-hbm: loaded bpf_hbm (pinned in $PIN)" "-v load: the same stdout"
n=$(grep -c '^libbpf: ' <<<"$err")
assert_gt "$n" 10 "-v load: libbpf's messages on stderr ($n lines)"
hbm_run "$HBM" unload
hbm_run "$HBM" load --verbose
n=$(grep -c '^libbpf: ' <<<"$err")
assert_ok "load --verbose: exit $rc, $n libbpf lines" test "$rc" = 0 -a "$n" -gt 10
hbm_run "$HBM" unload
expect 0 "" "unload after -v" "bpf-hbm: unloaded bpf_hbm"

## Stale pins, as a crash between registering and pinning or a detached
## link leaves them: load and attach recover; unload removes them.
crash() { # leave the pins with the link detached (the kind unregistered)
	"$HBM" load >/dev/null || hbm_fatal "load"
	bpftool link detach pinned "$PIN/link" || hbm_fatal "bpftool link detach"
}
crash
assert_ok "crash: pins still there" test -e "$PIN/link" -a -e "$PIN/hbm_config"
kind_unknown "crash: the kind is unregistered"
hbm_run "$HBM" load
expect 0 "bpf-hbm: removed stale pins in $PIN" "load over stale pins" "bpf-hbm: loaded bpf_hbm (pinned in $PIN)"
pins_loaded "load over stale pins"
hbm_run inA tc qdisc add dev "$DEV_A" root bpf_hbm
expect 0 "" "tc qdisc add bpf_hbm after recovery"
assert_str "$(root_kind "$DEV_A")" bpf_hbm "root is bpf_hbm"
inA tc qdisc del dev "$DEV_A" root
hbm_run "$HBM" unload
expect 0 "" "unload after recovery" "bpf-hbm: unloaded bpf_hbm"

crash
hbm_run inA "$HBM" attach "$DEV_A" --rate 30mbit
expect 0 "bpf-hbm: removed stale pins in $PIN_NS" "attach over stale pins"
assert_str "$(jq -r .rate_bps <<<"$(cfg_json "$DEV_A")")" 30000000 "attach over stale pins: configured"
hbm_run inA "$HBM" detach "$DEV_A"
expect 0 "" "detach"
assert_str "$(qdiscs "$DEV_A")" "$QD0" "detach: noqueue again"
assert_eq "$(cfg_entries "$DEV_A")" 0 "detach: config entry removed"
"$HBM" unload >/dev/null

crash
hbm_run "$HBM" unload
expect 0 "" "unload of stale pins" "bpf-hbm: removed stale pins in $PIN"
assert_ok "unload of stale pins: none left" test ! -e "$PIN"

# A map pin missing (with a live link) is not guessed at: load refuses,
# unload cleans up.
"$HBM" load >/dev/null || hbm_fatal "load"
rm "$PIN/hbm_config"
hbm_run "$HBM" load
expect 1 "bpf-hbm: couldn't load bpf_hbm: a map pin is missing in $PIN; run bpf-hbm unload first" "load, a map pin missing"
hbm_run inA "$HBM" attach "$DEV_A"
expect 1 "bpf-hbm: couldn't load bpf_hbm: a map pin is missing in $PIN_NS; run bpf-hbm unload first" "attach, a map pin missing"
assert_str "$(qdiscs "$DEV_A")" "$QD0" "attach, a map pin missing: qdiscs unchanged"
hbm_run "$HBM" unload
expect 0 "" "unload, a map pin missing" "bpf-hbm: unloaded bpf_hbm"
assert_ok "unload, a map pin missing: no pins" test ! -e "$PIN"
kind_unknown "unload, a map pin missing: kind unregistered"

## Rollback: 1030 tx queues, bpf_hbm has 1024 instances. attach creates
## mq and 1024 children, fails at the next, and undoes it all.
inA ip link add "$DEVQ" numtxqueues 1030 type dummy &&
	inA ip link set "$DEVQ" up || hbm_fatal "$DEVQ"
QD_Q=$(qdiscs "$DEVQ")
assert_eq "$(wc -l <<<"$QD_Q")" 1 "$DEVQ: one (default) qdisc"

# Not loaded: the failed attach unloads what it loaded.
hbm_run inA "$HBM" attach "$DEVQ"
expect 1 "bpf-hbm: couldn't attach $DEVQ: tx queue 1025 of 1030: Cannot allocate memory" "attach 1030 queues, not loaded"
no_trace "attach 1030 queues, not loaded" "$DEVQ" "$QD_Q"
kind_unknown "attach 1030 queues, not loaded: unloaded again"

# Loaded, nothing attached: stays loaded, nothing left.
"$HBM" load >/dev/null || hbm_fatal "load"
LOADED=1
hbm_run inA "$HBM" attach "$DEVQ"
expect 1 "bpf-hbm: couldn't attach $DEVQ: tx queue 1025 of 1030: Cannot allocate memory" "attach 1030 queues, loaded"
no_trace "attach 1030 queues, loaded" "$DEVQ" "$QD_Q"
pins_loaded "attach 1030 queues, loaded: stays loaded"
assert_eq "$(inst_entries)" 0 "attach 1030 queues, loaded: no instance left"

# Another device attached: it keeps running, untouched.
inA "$HBM" attach "$DEV_A" --rate 40mbit || hbm_fatal "attach $DEV_A"
QD_HBM=$(qdiscs "$DEV_A")
CFG=$(cfg_json "$DEV_A")
hbm_run inA "$HBM" attach "$DEVQ"
expect 1 "bpf-hbm: couldn't attach $DEVQ: tx queue 1024 of 1030: Cannot allocate memory" "attach 1030 queues, $DEV_A attached"
no_trace "attach 1030 queues, $DEV_A attached" "$DEVQ" "$QD_Q"
attached_kept "$DEV_A during $DEVQ's rollback"
assert_eq "$(inst_entries)" 1 "only $DEV_A's instance left"
j=$(inA "$HBM" show --json | jq -c '[.devices[].dev]')
assert_str "$j" "[\"$DEV_A\"]" "show lists $DEV_A only"
inA ping -c 2 -i 0.2 -W 2 -q "$ADDR_B" >/dev/null
assert_eq "$?" 0 "$DEV_A still passes traffic"

hbm_run inA "$HBM" unload --force
expect 0 "bpf-hbm: detached $DEV_A" "final unload --force" "bpf-hbm: unloaded bpf_hbm"
assert_ok "nothing pinned at the end" test ! -e "$PIN"
hbm_done
