#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Every bpf-hbm command and every kind of bad input, as a user sees them:
# the exact exit status (0 ok, 1 failure, 2 usage) and the one line on
# stderr ("bpf-hbm: couldn't <verb> <object>: <reason>"), and that a
# failure leaves nothing behind: no pins when bpf_hbm was not loaded; no
# hbm_config entry, ECN marker pin or tcx program for the device when it
# was; and the device's qdiscs as before (tc qdisc show before == after,
# and `tc monitor`, running through each group of failing commands, saw no
# qdisc event at all, not even a transient one). Foreign root qdiscs are
# never deleted, only swapped in one step with --replace; unload refuses
# while attached unless --force; stale pins of a crashed run are
# recovered; -h works everywhere; a half-way failure of attach (a device
# with more tx queues than bpf_hbm has instances) rolls everything back,
# down to unloading what it loaded, and puts back a root qdisc that
# --replace swapped out.
#
# Most commands run in the VM's own network namespace, on dummy devices
# (each process costs a good fraction of a second under TCG, `ip netns
# exec` twice that); A's veth is "another network namespace" for unload
# and the device that keeps running through the rollback.
. "$(dirname "$0")/lib.sh"

PIN=/sys/fs/bpf/bpf_hbm
DEV=hbmc0	# dummy, one tx queue
DEV4=hbmc4	# dummy, 4 tx queues
DEVQ=hbmcq	# dummy, 1030 tx queues: more than bpf_hbm's 1024 instances
# A dummy reports no link speed: attach without --rate is refused on it
# (test_first_run), after the checks of options and root qdiscs, so the
# attaches below that are to get further give --rate.
MON=/tmp/$HBM_TEST.mon

cli_cleanup() {
	local d

	for d in "$DEV" "$DEV4" "$DEVQ"; do
		[ -e "/sys/class/net/$d" ] && ip link del "$d"
	done
	hbm_cleanup
}
trap cli_cleanup EXIT

# hbm_run CMD...: run it; $rc its exit status, $out its stdout, $err its
# stderr. The command line goes to the tc monitor log (see mon_start).
hbm_run() {
	echo "## $*" >>"$MON"
	"$@" >"/tmp/$HBM_TEST.out" 2>"/tmp/$HBM_TEST.err"
	rc=$?
	out=$(<"/tmp/$HBM_TEST.out")
	err=$(<"/tmp/$HBM_TEST.err")
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

# Without grep (a process costs a good part of a second under TCG):
has_line() { # TEXT GLOB: a line of TEXT matches GLOB
	local l

	while IFS= read -r l; do
		[[ $l == $2 ]] && return 0
	done <<<"$1"
	return 1
}
count_lines() { # TEXT GLOB: how many lines of TEXT match GLOB
	local l n=0

	while IFS= read -r l; do
		[[ $l == $2 ]] && n=$((n + 1))
	done <<<"$1"
	echo "$n"
}
# A number or string field of flat JSON: field JSON KEY
field() {
	[[ $1 =~ \"$2\":\"?([^,\"}]*) ]] && echo "${BASH_REMATCH[1]}"
}
# DEV's configuration object, as `bpf-hbm show DEV --json` has it.
cfg_of() {
	local j

	j=$("$HBM" show "$1" --json 2>&1)
	[[ $j =~ \"config\":(\{[^}]*\}) ]] && echo "${BASH_REMATCH[1]}" ||
		echo "$j"
}
ifindex() { echo "$(<"/sys/class/net/$1/ifindex")"; }

# What the kernel and bpffs hold for DEV (of this netns, or ifindex/netns):
# hbm_config entries (bpftool's view, not bpf-hbm's), marker pins, tc
# programs. A count bpftool could not give is "unreadable", which fails the
# assertion on it; each count is seen above 0 once where bpf_hbm is
# attached, so that its 0s elsewhere are not a count that never matches.
cfg_entries() { # IFINDEX NETNS
	[ -e "$PIN/hbm_config" ] || { echo 0; return; }
	hbm_map_count "$PIN/hbm_config" "$1" "$2"
}
marker_pin() { echo "$PIN/ce-$2-$1"; }	# IFINDEX NETNS
tcx_progs() { # DEV: programs on DEV's tc hooks (tcx and classic)
	local n

	n=$(bpftool -j net show dev "$1" | jq -e '.[0].tc | arrays | length') &&
		hbm_is_num "$n" || {
		echo "tcx_progs: couldn't read $1's tc programs with bpftool" >&2
		echo unreadable
		return 1
	}
	echo "$n"
}

# tc monitor through a group of commands: each hbm_run appends its command
# line, tc its events, so a change is attributed to what made it.
mon_start() {
	local i f

	: >"$MON"
	tc monitor >>"$MON" 2>&1 &
	MON_PID=$!
	# Listening once its netlink socket is open (bound in the same breath).
	for i in {1..50}; do
		for f in "/proc/$MON_PID/fd/"*; do
			[ -S "$f" ] && { sleep 0.1; return 0; }
		done
		sleep 0.1
	done
	hbm_fatal "tc monitor did not start"
}
mon_stop() { # DESCRIPTION: no qdisc event on our devices since mon_start
	local ev

	sleep 0.3
	kill "$MON_PID"
	wait "$MON_PID" 2>/dev/null
	ev=$(count_lines "$(<"$MON")" "* dev hbmc*")
	assert_eq "$ev" 0 "$1: tc monitor saw no qdisc event" || cat "$MON"
}

# After a failed command: nothing pinned if bpf_hbm was not loaded
# ($LOADED=0), else no marker pin for DEV.
no_pins() { # DESCRIPTION [DEV]
	local dev=${2:-$DEV}

	if [ "$LOADED" = 0 ]; then
		assert_ok "$1: no pins" test ! -e "$PIN"
	else
		assert_ok "$1: no marker pin" test ! -e \
			"$(marker_pin "$(ifindex "$dev")" "$NETNS")"
	fi
}
# At the end of a group of failures: DEV's qdiscs are still QD, and no
# config entry or tcx program for it.
no_trace() { # DESCRIPTION DEV QD
	assert_str "$(tc qdisc show dev "$2")" "$3" "$1: $2's qdiscs unchanged"
	if [ "$LOADED" = 1 ]; then
		assert_eq "$(cfg_entries "$(ifindex "$2")" "$NETNS")" 0 \
			"$1: no config entry for $2"
		assert_eq "$(tcx_progs "$2")" 0 "$1: no tcx program on $2"
	fi
}

section() { echo "== $* (at ${SECONDS}s)"; }

kind_unknown() { # DESCRIPTION: the bpf_hbm kind is not registered
	hbm_run tc qdisc add dev "$DEV4" root bpf_hbm
	expect 2 "Error: Specified qdisc kind is unknown." "$1"
}
pins_loaded() { # DESCRIPTION
	assert_ok "$1: link, maps and marker program pinned" test \
		-e "$PIN/link" -a -e "$PIN/hbm_config" -a -e "$PIN/hbm_dev_rates" \
		-a -e "$PIN/hbm_instances" -a -e "$PIN/hbm_ce"
}

# A's veth (another network namespace for unload, and a device that keeps
# passing traffic through the rollback), set up with `ip -n`:
# hbm_veth_setup's `ip netns exec`s cost seconds here.
ip netns add "$NS_A" && ip netns add "$NS_B" &&
	ip link add "$DEV_A" netns "$NS_A" type veth peer name "$DEV_B" \
		netns "$NS_B" &&
	ip -n "$NS_A" -batch - <<<"addr add $ADDR_A/24 dev $DEV_A
link set $DEV_A up" &&
	ip -n "$NS_B" -batch - <<<"addr add $ADDR_B/24 dev $DEV_B
link set $DEV_B up" || hbm_fatal "veth setup"
for d in "$DEV" "$DEV4" "$DEVQ"; do
	[ -e "/sys/class/net/$d" ] && ip link del "$d"	# a killed run's
done
ip -batch - <<<"link add $DEV type dummy
link add $DEV4 numtxqueues 4 type dummy
link add $DEVQ numtxqueues 1030 type dummy
link set $DEV up
link set $DEV4 up
link set $DEVQ up" || hbm_fatal "dummies"
NETNS=$(stat -L -c %i /proc/self/ns/net)
IFX=$(ifindex "$DEV")
# Earlier tests leave bpf_hbm loaded: start from nothing.
"$HBM" unload --force >/dev/null 2>&1
[ -e "$PIN" ] && hbm_fatal "bpf_hbm still pinned after unload --force"
QD0=$(tc qdisc show dev "$DEV")
assert_str "$QD0" "qdisc noqueue 0: root refcnt 2 " "$DEV starts with noqueue"
QD4=$(tc qdisc show dev "$DEV4")
LOADED=0

section "help"
## The command line and help: nothing runs, nothing is loaded.
mon_start
hbm_run "$HBM"
expect 2 "bpf-hbm: couldn't parse arguments: no command given (see bpf-hbm --help)" "no command"
hbm_run "$HBM" frobnicate
expect 2 "bpf-hbm: couldn't parse arguments: unknown command 'frobnicate' (see bpf-hbm --help)" "unknown command"
hbm_run "$HBM" --bogus load
expect 2 "bpf-hbm: couldn't parse arguments: unrecognized option '--bogus' (see bpf-hbm --help)" "unknown option before the command"

hbm_run "$HBM" --help
help=$out
assert_ok "--help: exit $rc, nothing on stderr" test "$rc" = 0 -a -z "$err"
for c in load unload attach set show detach help; do
	assert_ok "--help describes '$c'" has_line "$help" "@(  $c|  $c *)"
done
assert_ok "--help explains the exit status" \
	has_line "$help" "Exit status: 0 success, 1 failure, 2 usage error*"
hbm_run "$HBM" help
assert_ok "'help': exit $rc, the --help text" test "$rc" = 0 -a "$out" = "$help"
hbm_run "$HBM" --version
assert_ok "--version: exit $rc, '$out'" test "$rc" = 0 -a -z "$err"
assert_ok "--version names the ABI and libbpf" \
	has_line "$out" "bpf-hbm [0-9]*.[0-9]* (bpf_hbm ABI [0-9]*, libbpf v[0-9]*)"

# -h on every command prints its usage and runs nothing (no DEV needed).
declare -A usage=(
	[load]="Usage: bpf-hbm load [-v] [--flow-idle TIME] [--rate RATE]"
	[unload]="Usage: bpf-hbm unload [-v] [--force]"
	[attach]="Usage: bpf-hbm attach DEV [OPTION...]"
	[set]="Usage: bpf-hbm set DEV OPTION..."
	[show]="Usage: bpf-hbm show [DEV] [--json | --prometheus] [--watch INTERVAL]"
	[detach]="Usage: bpf-hbm detach DEV"
)
for c in load unload attach set show detach; do
	hbm_run "$HBM" "$c" -h
	assert_ok "$c -h: exit $rc, '${out%%$'\n'*}', no stderr" test "$rc" = 0 \
		-a "${out%%$'\n'*}" = "${usage[$c]}" -a -z "$err"
done
hbm_run "$HBM" attach "$DEV" --rate 10mbit --help
assert_ok "attach DEV --rate 10mbit --help: exit $rc, usage only" \
	test "$rc" = 0 -a "${out%%$'\n'*}" = "${usage[attach]}"
no_pins "-h on every command"

section "bad input, not loaded"
## Bad input, not loaded: exit 2 (1 for a device that is not there).
bad_attach() { # RC REASON ARG...
	local want=$1 reason=$2

	shift 2
	hbm_run "$HBM" attach "$@"
	expect "$want" "bpf-hbm: couldn't attach $DEV: $reason" "attach $*"
	no_pins "attach $*"
}
bad_attach 2 "rate must be positive" "$DEV" --rate 0
bad_attach 2 "invalid rate '-5mbit'" "$DEV" --rate -5mbit
bad_attach 2 "rate 401gbit out of range 1Mbit..400Gbit" "$DEV" --rate 401gbit
bad_attach 2 "invalid rate '10mbits'" "$DEV" --rate 10mbits
bad_attach 2 "mark threshold (500us) must be below drop threshold (500us)" "$DEV" --mark 500us
bad_attach 2 "mark threshold (2ms) must be below drop threshold (1ms)" "$DEV" --mark 2ms --drop 1ms
bad_attach 2 "burst must be positive" "$DEV" --burst 0
bad_attach 2 "limit must be positive" "$DEV" --limit 0
bad_attach 2 "flow-limit must be positive" "$DEV" --flow-limit 0
bad_attach 2 "quantum 0 out of range (1..1048576 bytes, or auto)" "$DEV" --quantum 0
bad_attach 2 "invalid initial-quantum 'abc'" "$DEV" --initial-quantum abc
bad_attach 2 "unrecognized option '--bogus'" "$DEV" --bogus
bad_attach 2 "invalid ecn 'maybe' (on or off)" "$DEV" --ecn maybe
bad_attach 2 "$DEV has one tx queue; use --parent root" "$DEV" --parent mq
hbm_run "$HBM" attach --rate 10mbit
expect 2 "bpf-hbm: couldn't attach bpf_hbm: missing DEV (usage: bpf-hbm attach DEV ...)" "attach without DEV"
no_pins "attach without DEV"
hbm_run "$HBM" attach nosuch0
expect 1 "bpf-hbm: couldn't attach nosuch0: no such device" "attach to an unknown device"
no_pins "attach to an unknown device"

hbm_run "$HBM" set "$DEV"
expect 2 "bpf-hbm: couldn't set $DEV: no option given (see bpf-hbm set --help)" "set without an option"
hbm_run "$HBM" set "$DEV" --rate 10mbit
expect 1 "bpf-hbm: couldn't set $DEV: bpf_hbm not attached to $DEV (not loaded)" "set, not loaded"
hbm_run "$HBM" detach "$DEV"
expect 1 "bpf-hbm: couldn't detach $DEV: bpf_hbm not attached to $DEV" "detach, not loaded"
hbm_run "$HBM" detach
expect 2 "bpf-hbm: couldn't detach bpf_hbm: missing DEV (usage: bpf-hbm detach DEV ...)" "detach without DEV"
hbm_run "$HBM" show "$DEV" --json
expect 1 "bpf-hbm: couldn't show bpf_hbm: not loaded (run bpf-hbm load)" "show, not loaded"
hbm_run "$HBM" unload
expect 0 "" "unload, not loaded" "bpf-hbm: bpf_hbm not loaded"
for v in 0 500us 2h x; do
	hbm_run "$HBM" load --flow-idle "$v"
	expect 2 "bpf-hbm: couldn't load bpf_hbm: invalid flow idle time '$v' (1ms..1h)" "load --flow-idle $v"
done
no_pins "set/detach/show/unload/load --flow-idle, not loaded"
mon_stop "bad input, not loaded"
no_trace "bad input, not loaded" "$DEV" "$QD0"

section "foreign root"
## A foreign root qdisc: attach refuses without --replace, detach never
## deletes it.
tc qdisc add dev "$DEV" root handle 1: fq || hbm_fatal "tc add fq"
QD_FQ=$(tc qdisc show dev "$DEV")
mon_start
hbm_run "$HBM" attach "$DEV"
expect 1 "bpf-hbm: couldn't attach $DEV: $DEV has a root qdisc (fq); use --replace" "attach over fq"
no_pins "attach over fq"
hbm_run "$HBM" detach "$DEV"
expect 1 "bpf-hbm: couldn't detach $DEV: bpf_hbm not attached to $DEV" "detach with fq at the root"
mon_stop "foreign fq"
no_trace "foreign fq" "$DEV" "$QD_FQ"

# --replace swaps it in one graft: tc monitor sees fq deleted and bpf_hbm
# created, and never the default noqueue in between (a delete-then-add
# shows "deleted qdisc noqueue 0:" when bpf_hbm replaces it).
mon_start
hbm_run "$HBM" attach "$DEV" --replace --rate 50mbit
expect 0 "" "attach --replace over fq"
sleep 0.3
kill "$MON_PID"
wait "$MON_PID" 2>/dev/null
cat "$MON"
LOADED=1
mon=$(<"$MON")
assert_eq "$(count_lines "$mon" "deleted qdisc fq 1: dev $DEV root*")" 1 "monitor: fq deleted once"
assert_eq "$(count_lines "$mon" "qdisc bpf_hbm *: dev $DEV root*")" 1 "monitor: bpf_hbm created once"
assert_eq "$(count_lines "$mon" "*noqueue* dev $DEV *")" 0 "monitor: never noqueue in between (atomic)"
assert_ok "fq is gone, bpf_hbm at the root" has_line "$(tc qdisc show dev "$DEV")" "qdisc bpf_hbm *: root*"
pins_loaded "attach loaded bpf_hbm"
assert_eq "$(cfg_entries "$IFX" "$NETNS")" 1 "attach: a config entry for $DEV (bpftool)"
assert_eq "$(tcx_progs "$DEV")" 1 "attach: the marker on $DEV's tcx hook (bpftool)"

section "attached"
## Attached: a second attach, bad options and set keep what is there.
QD_HBM=$(tc qdisc show dev "$DEV")
CFG=$(cfg_of "$DEV")
assert_str "$(field "$CFG" rate_bps)" 50000000 "configured rate 50mbit"
mon_start
hbm_run "$HBM" attach "$DEV" --rate 60mbit
expect 1 "bpf-hbm: couldn't attach $DEV: bpf_hbm already attached (use --replace or set)" "attach twice"
hbm_run "$HBM" attach "$DEV" --parent mq --replace
expect 2 "bpf-hbm: couldn't attach $DEV: $DEV has one tx queue; use --parent root" "attach --parent mq --replace, one queue"
hbm_run "$HBM" set "$DEV" --mark 1ms
expect 2 "bpf-hbm: couldn't set $DEV: mark threshold (1ms) must be below drop threshold (500us)" "set --mark 1ms"
hbm_run "$HBM" set "$DEV" --limit 50
expect 2 "bpf-hbm: couldn't set $DEV: flow-limit (100) must not exceed limit (50)" "set --limit 50"
hbm_run "$HBM" set "$DEV" --rate 0
expect 2 "bpf-hbm: couldn't set $DEV: rate must be positive" "set --rate 0"
mon_stop "failed attach/set while attached"
assert_str "$(tc qdisc show dev "$DEV")" "$QD_HBM" "failed attach/set: qdisc unchanged"
assert_str "$(cfg_of "$DEV")" "$CFG" "failed attach/set: configuration unchanged"

hbm_run "$HBM" set "$DEV" --mark 100us
expect 0 "" "set --mark 100us"
c=$(cfg_of "$DEV")
assert_str "$(field "$c" rate_bps) $(field "$c" mark_ns)" "50000000 100000" "set changed mark only"
assert_str "$(tc qdisc show dev "$DEV")" "$QD_HBM" "set did not re-attach"
# --replace on our own attachment keeps the qdisc and rewrites the
# configuration from the defaults (mark back to 50us).
hbm_run "$HBM" attach "$DEV" --replace --rate 70mbit
expect 0 "" "attach --replace, attached"
assert_str "$(tc qdisc show dev "$DEV")" "$QD_HBM" "attach --replace kept the qdisc"
c=$(cfg_of "$DEV")
assert_str "$(field "$c" rate_bps) $(field "$c" mark_ns)" "70000000 50000" "attach --replace: the defaults and --rate"

hbm_run "$HBM" show --json
j=$(jq -c '[.devices[] | {dev, configured, instances, rate: .config.rate_bps}]' <<<"$out")
assert_ok "show --json: exit $rc, parsed by jq" test "$rc" = 0 -a -n "$j"
assert_str "$j" "[{\"dev\":\"$DEV\",\"configured\":true,\"instances\":1,\"rate\":70000000}]" "show --json: $DEV at 70mbit"
# Auto quantums: 2 and 10 times (MTU + 14), a dummy being Ethernet.
mtu=$(<"/sys/class/net/$DEV/mtu")
j=$(jq -c '.devices[0].config | [.quantum, .initial_quantum, .quantum_auto, .initial_quantum_auto]' <<<"$out")
assert_str "$j" "[$((2 * (mtu + 14))),$((10 * (mtu + 14))),true,true]" "show --json: auto quantums from $DEV's MTU"
hbm_run "$HBM" show "$DEV"
assert_ok "show $DEV: exit $rc, 'rate 70Mbit'" test "$rc" = 0 -a -z "$err"
assert_ok "show $DEV prints the rate" has_line "$out" "  rate *70Mbit"

# Another device, without bpf_hbm.
mon_start
hbm_run "$HBM" set "$DEV4" --rate 10mbit
expect 1 "bpf-hbm: couldn't set $DEV4: bpf_hbm not attached to $DEV4" "set, loaded, not attached"
no_pins "set, not attached" "$DEV4"
hbm_run "$HBM" detach "$DEV4"
expect 1 "bpf-hbm: couldn't detach $DEV4: bpf_hbm not attached to $DEV4" "detach, loaded, not attached"

section "unload refused"
## unload refuses while attached, naming the device; --force detaches.
hbm_run "$HBM" unload
expect 1 "bpf-hbm: couldn't unload bpf_hbm: still attached to $DEV (detach first, or --force)" "unload while attached"
hbm_run inA "$HBM" unload
expect 1 "bpf-hbm: couldn't unload bpf_hbm: still attached to ifindex $IFX (netns $NETNS) (detach first, or --force)" "unload from another netns"
mon_stop "refused commands"
no_trace "refused commands" "$DEV4" "$QD4"
assert_str "$(tc qdisc show dev "$DEV")" "$QD_HBM" "refused unload: still attached"
pins_loaded "refused unload"
assert_ok "the marker pin is there" test -e "$(marker_pin "$IFX" "$NETNS")"
assert_eq "$(tcx_progs "$DEV")" 1 "the marker is on $DEV's tcx hook"
hbm_run "$HBM" unload --force
expect 0 "bpf-hbm: detached $DEV" "unload --force" "bpf-hbm: unloaded bpf_hbm"
LOADED=0
assert_ok "unload --force: no pins" test ! -e "$PIN"
assert_str "$(tc qdisc show dev "$DEV")" "$QD0" "unload --force: $DEV back to noqueue"
assert_eq "$(tcx_progs "$DEV")" 0 "unload --force: marker gone from $DEV"
kind_unknown "unload --force: tc qdisc add bpf_hbm fails"

section "loaded, nothing attached"
## Loaded, nothing attached.
hbm_run "$HBM" load
expect 0 "" "load" "bpf-hbm: loaded bpf_hbm (pinned in $PIN)"
LOADED=1
pins_loaded "load"
mon_start
hbm_run "$HBM" load
expect 0 "" "load again" "bpf-hbm: bpf_hbm already loaded (pinned in $PIN)"
hbm_run "$HBM" show
expect 0 "" "show, nothing attached" "bpf_hbm is loaded but not attached to any device"
bad_attach 2 "rate must be positive" "$DEV" --rate 0
bad_attach 2 "$DEV has one tx queue; use --parent root" "$DEV" --parent mq
hbm_run "$HBM" set "$DEV" --rate 10mbit
expect 1 "bpf-hbm: couldn't set $DEV: bpf_hbm not attached to $DEV" "set, loaded, not attached"
no_pins "set, loaded, not attached"
mon_stop "bad input, loaded"
no_trace "bad input, loaded" "$DEV" "$QD0"

# A foreign mq root (on 4 tx queues), loaded.
tc qdisc add dev "$DEV4" root handle 1: mq || hbm_fatal "tc add mq"
QD_MQ=$(tc qdisc show dev "$DEV4")
mon_start
hbm_run "$HBM" attach "$DEV4"
expect 1 "bpf-hbm: couldn't attach $DEV4: $DEV4 has a root qdisc (mq); use --replace" "attach over a foreign mq"
no_pins "attach over a foreign mq" "$DEV4"
hbm_run "$HBM" detach "$DEV4"
expect 1 "bpf-hbm: couldn't detach $DEV4: bpf_hbm not attached to $DEV4" "detach with a foreign mq root"
mon_stop "foreign mq, loaded"
no_trace "foreign mq" "$DEV4" "$QD_MQ"
tc qdisc del dev "$DEV4" root

hbm_run "$HBM" unload
expect 0 "" "unload" "bpf-hbm: unloaded bpf_hbm"
LOADED=0
assert_ok "unload: no pins" test ! -e "$PIN"

section "verbose"
## -v: libbpf's log (quiet without it, as load showed above).
hbm_run "$HBM" -v load
n=$(count_lines "$err" "libbpf: *")
assert_ok "-v load: exit $rc, '$out'" test "$rc" = 0 \
	-a "$out" = "bpf-hbm: loaded bpf_hbm (pinned in $PIN)"
assert_gt "$n" 10 "-v load: libbpf's messages on stderr ($n lines)"
hbm_run "$HBM" unload --verbose
expect 0 "" "unload --verbose" "bpf-hbm: unloaded bpf_hbm"

section "stale pins"
## Stale pins, as a crash or a detached link leaves them: load and attach
## recover, unload removes them.
crash() { # the pins stay, the link is detached: the kind is unregistered
	"$HBM" load >/dev/null || hbm_fatal "load"
	bpftool link detach pinned "$PIN/link" || hbm_fatal "bpftool link detach"
}
crash
assert_ok "crash: pins still there" test -e "$PIN/link" -a -e "$PIN/hbm_config"
kind_unknown "crash: the kind is unregistered"
hbm_run "$HBM" load
expect 0 "bpf-hbm: removed stale pins in $PIN" "load over stale pins" "bpf-hbm: loaded bpf_hbm (pinned in $PIN)"
pins_loaded "load over stale pins"
hbm_run tc qdisc add dev "$DEV" root bpf_hbm
expect 0 "" "then tc qdisc add bpf_hbm"
tc qdisc del dev "$DEV" root
"$HBM" unload >/dev/null

crash
hbm_run "$HBM" attach "$DEV" --rate 30mbit
expect 0 "bpf-hbm: removed stale pins in $PIN" "attach over stale pins"
assert_str "$(field "$(cfg_of "$DEV")" rate_bps)" 30000000 "attach over stale pins: configured"
hbm_run "$HBM" detach "$DEV"
expect 0 "" "detach"
assert_str "$(tc qdisc show dev "$DEV")" "$QD0" "detach: noqueue again"
assert_ok "detach: marker pin removed" test ! -e "$(marker_pin "$IFX" "$NETNS")"
"$HBM" unload >/dev/null

crash
hbm_run "$HBM" unload
expect 0 "" "unload of stale pins" "bpf-hbm: removed stale pins in $PIN"
assert_ok "unload of stale pins: none left" test ! -e "$PIN"

# A map pin missing (the link valid) is not guessed at: load refuses,
# unload cleans up.
"$HBM" load >/dev/null || hbm_fatal "load"
rm "$PIN/hbm_config"
hbm_run "$HBM" load
expect 1 "bpf-hbm: couldn't load bpf_hbm: a map pin is missing in $PIN; run bpf-hbm unload first" "load, a map pin missing"
hbm_run "$HBM" attach "$DEV" --rate 1gbit
expect 1 "bpf-hbm: couldn't load bpf_hbm: a map pin is missing in $PIN; run bpf-hbm unload first" "attach, a map pin missing"
assert_str "$(tc qdisc show dev "$DEV")" "$QD0" "attach, a map pin missing: qdiscs unchanged"
hbm_run "$HBM" unload
expect 0 "" "unload, a map pin missing" "bpf-hbm: unloaded bpf_hbm"
assert_ok "unload, a map pin missing: no pins" test ! -e "$PIN"
kind_unknown "unload, a map pin missing: kind unregistered"

section "rollback"
## Rollback: 1030 tx queues, 1024 instances. attach creates mq and 1024
## bpf_hbm children, fails at the next, and undoes it all.
QDQ=$(tc qdisc show dev "$DEVQ")
assert_eq "$(wc -l <<<"$QDQ")" 1 "$DEVQ: one (default) qdisc"

# Not loaded: the failed attach unloads what it loaded.
hbm_run "$HBM" attach "$DEVQ" --rate 1gbit
expect 1 "bpf-hbm: couldn't attach $DEVQ: tx queue 1025 of 1030: Cannot allocate memory (all 1024 bpf_hbm instances in use)" "attach 1030 queues, not loaded"
assert_str "$(tc qdisc show dev "$DEVQ")" "$QDQ" "attach 1030 queues, not loaded: qdiscs unchanged"
no_pins "attach 1030 queues, not loaded: unloaded again"
kind_unknown "attach 1030 queues, not loaded: kind unregistered"

# Another device attached: it keeps running, untouched; bpf_hbm stays.
inA "$HBM" attach "$DEV_A" --rate 40mbit || hbm_fatal "attach $DEV_A"
LOADED=1
QD_A=$(inA tc qdisc show dev "$DEV_A")
CFG_A=$(inA "$HBM" show "$DEV_A" --json)
hbm_run "$HBM" attach "$DEVQ" --rate 1gbit
expect 1 "bpf-hbm: couldn't attach $DEVQ: tx queue 1024 of 1030: Cannot allocate memory (all 1024 bpf_hbm instances in use)" "attach 1030 queues, $DEV_A attached"
no_pins "attach 1030 queues, loaded" "$DEVQ"
no_trace "attach 1030 queues, loaded" "$DEVQ" "$QDQ"
pins_loaded "attach 1030 queues, $DEV_A attached: stays loaded"
n=$(hbm_map_entries hbm_instances)
assert_eq "$n" 1 "only $DEV_A's instance left in hbm_instances"
assert_str "$(inA tc qdisc show dev "$DEV_A")" "$QD_A" "$DEV_A's qdisc untouched"
c=$(inA "$HBM" show --json)
assert_str "$(field "$c" dev) $(field "$c" rate_bps)" "$DEV_A 40000000" "show: $DEV_A only, at 40mbit"
inA ping -c 2 -i 0.2 -W 2 -q "$ADDR_B" >/dev/null
assert_eq "$?" 0 "$DEV_A still passes traffic"

# A user's root qdisc that --replace swapped out comes back as it was
# (kind, handle, options) when attach fails after the swap: at the root,
# the ECN marker can't be pinned (a directory is in its way); under mq, the
# tx queue after the last free instance; with mq's handled children too.
tc qdisc replace dev "$DEV" root handle 9: fq limit 999 flow_limit 33 ||
	hbm_fatal "fq on $DEV"
QD=$(tc qdisc show dev "$DEV")
mkdir "$(marker_pin "$(ifindex "$DEV")" "$NETNS")"
hbm_run "$HBM" attach "$DEV" --replace --parent root --rate 1gbit
rmdir "$(marker_pin "$(ifindex "$DEV")" "$NETNS")"
assert_eq "$rc" 1 "attach --replace over fq, marker blocked: fails ($err)"
assert_str "$(tc qdisc show dev "$DEV")" "$QD" "... and $DEV has its fq back, options and all"
assert_eq "$(cfg_entries "$(ifindex "$DEV")" "$NETNS")" 0 "... no config entry for $DEV"
tc qdisc del dev "$DEV" root

tc qdisc replace dev "$DEVQ" root handle 7: mq &&
	tc qdisc replace dev "$DEVQ" parent 7:2 handle 72: fq limit 555 ||
	hbm_fatal "mq on $DEVQ"
QD=$(tc qdisc show dev "$DEVQ" | sort)
hbm_run "$HBM" attach "$DEVQ" --replace --rate 1gbit
expect 1 "bpf-hbm: couldn't attach $DEVQ: tx queue 1024 of 1030: Cannot allocate memory (all 1024 bpf_hbm instances in use)" "attach --replace over mq 7: with fq 72:, 1030 queues"
assert_str "$(tc qdisc show dev "$DEVQ" | sort)" "$QD" "... and $DEVQ has mq 7: and fq 72: back"
n=$(hbm_map_entries hbm_instances)
assert_eq "$n" 1 "... only $DEV_A's instance left in hbm_instances"
tc qdisc del dev "$DEVQ" root

hbm_run inA "$HBM" unload --force
expect 0 "bpf-hbm: detached $DEV_A" "final unload --force" "bpf-hbm: unloaded bpf_hbm"
assert_ok "nothing pinned after unload --force" test ! -e "$PIN"

# Pins of another bpf-hbm's layout (an upgrade): the error names unload
# --force, and unload --force removes them.
"$HBM" load >/dev/null || hbm_fatal "load"
rm "$PIN/hbm_dev_rates"
bpftool map create "$PIN/hbm_dev_rates" type hash key 8 value 8 entries 1 \
	name hbm_dev_rates || hbm_fatal "bpftool map create"
hbm_run "$HBM" show
assert_eq "$rc" 1 "show on another layout's pins: exit 1"
assert_ok "... saying to run unload --force ($err)" \
	grep -q "does not have the layout .*run bpf-hbm unload --force" "/tmp/$HBM_TEST.err"
hbm_run "$HBM" unload --force
assert_eq "$rc" 0 "unload --force on another layout's pins: exit 0 ($err)"
assert_str "$out" "bpf-hbm: unloaded bpf_hbm" "... unloaded"
assert_ok "... saying it did not detach" grep -q "another version's" "/tmp/$HBM_TEST.err"
assert_ok "nothing pinned at the end" test ! -e "$PIN"
hbm_report "$SECONDS s"
hbm_done
