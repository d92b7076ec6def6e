#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-hbm apply --watch (what bpf-hbm-watch.service runs): started in A's
# namespace with a file naming a veth that does not exist yet, it shapes
# the veth as the file says (show --json: rate, class) once it is made,
# one "attached" line with the time for the burst of events its making
# sends; a dummy renamed to a name of the file is shaped too; the veth
# deleted and made again (a new ifindex) is shaped again, and traffic
# through it is held near the file's rate (TCP, iperf3). While the
# watcher waits, the lock is free (another bpf-hbm does not wait).
# SIGHUP reads the file again and applies it; a bad file is reported
# (FILE:LINE) and the old configuration kept, the watcher still running.
# SIGTERM ends it promptly with status 0, and leaves no lock held.
. "$(dirname "$0")/lib.sh"

RATE=${RATE:-100}			# Mbit/s: test_rate_tcp's floor holds here
FLOOR=${HBM_RATE_FLOOR:-75}		# % of the TCP ceiling
WAIT_S=${HBM_HOTPLUG_WAIT_S:-10}	# how long a device may take to be shaped
CONF=$(mktemp /tmp/hbm-hotplug.XXXXXX.conf)
OUT=$(mktemp /tmp/hbm-hotplug.XXXXXX.out)
ERR=$(mktemp /tmp/hbm-hotplug.XXXXXX.err)
WPID=

# The watcher goes first on exit: nothing of it may outlive the test.
stop_watcher() {
	[ -n "$WPID" ] || return 0
	kill -TERM "$WPID" 2>/dev/null
	for _ in $(seq 1 20); do
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$WPID" 2>/dev/null
	wait "$WPID" 2>/dev/null
	WPID=
}
trap 'stop_watcher; rm -f "$CONF" "$OUT" "$ERR"; hbm_cleanup' EXIT

# The namespaces alone (hbm_ns_setup): the veth comes later
# (hbm_veth_add), once the watcher runs.
hbm_ns_setup || hbm_fatal "netns"
inA sysctl -qw net.ipv4.tcp_congestion_control=cubic

# DEV's entry in show --json (as run in A), or nothing. Bounded: a show
# that waited for a lock the watcher kept would hang the test.
dev_json() {
	timeout 10 ip netns exec "$NS_A" "$HBM" show --json 2>/dev/null |
		jq -c --arg d "$1" '[.devices[] | select(.dev == $d)][0] // empty'
}
dev_rate() { dev_json "$1" | jq -r '.config.rate_bps // empty'; }

# wait_rate DEV BPS: until DEV has bpf_hbm at BPS (WAIT_S at most);
# prints the seconds it took, fails if it never did.
wait_rate() {
	local t0=$EPOCHREALTIME i

	for ((i = 0; i < WAIT_S * 5; i++)); do
		if [ "$(dev_rate "$1")" = "$2" ]; then
			awk -v a="$t0" -v b="$EPOCHREALTIME" \
				'BEGIN { printf "%.2f", b - a }'
			return 0
		fi
		sleep 0.2
	done
	return 1
}

# wait_out PATTERN: until the watcher's stdout has a line matching it.
wait_out() {
	local i

	for ((i = 0; i < WAIT_S * 10; i++)); do
		grep -qE -- "$1" "$OUT" && return 0
		sleep 0.1
	done
	return 1
}

# The lock is free: a bpf-hbm that takes it (show does, to read) neither
# waits ("waiting for another bpf-hbm") nor hangs.
lock_free() { # WHEN
	local err st

	err=$(timeout 5 ip netns exec "$NS_A" "$HBM" show 2>&1 >/dev/null)
	st=$?
	assert_eq "$st" 0 "$1: bpf-hbm show ran at once (status $st: $err)"
	assert_eq "$(grep -c 'waiting for another' <<<"$err")" 0 \
		"$1: show did not wait for the lock"
}

attached_lines() { grep -cE "^$TS bpf-hbm: $1: attached \(" "$OUT"; }

# Two ifindexes, both read, that differ.
differ() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" != "$2" ]; }

# Each change on stdout after the time: 2026-12-03T02:14:16.123Z.
TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'

hbm_load
CG=$(hbm_cg a)
cat >"$CONF" <<EOF
# hbm0 and hbm2 do not exist yet
$DEV_A --rate ${RATE}mbit --parent root
$DEV_A class --cgroup "$CG" --rate 10mbit
hbm2 --rate 30mbit --ecn off
EOF
inA ip link add hbmz type dummy || hbm_fatal "dummy device"

# 1. The watcher, in A (ip netns exec runs bpf-hbm in its own process:
# $! is the watcher).
ip netns exec "$NS_A" "$HBM" apply "$CONF" --watch >"$OUT" 2>"$ERR" &
WPID=$!
assert_ok "the watcher is ready" wait_out "^$TS bpf-hbm: watching for the devices of $CONF\$" ||
	{ sed 's/^/  out: /' "$OUT"; sed 's/^/  err: /' "$ERR"; hbm_done; }
assert_same "$(cat "/proc/$WPID/comm" 2>/dev/null)" bpf-hbm "\$! is bpf-hbm itself"
assert_ok "the first apply: nothing to change" \
	grep -qE "^$TS bpf-hbm: nothing to change\$" "$OUT"
assert_ok "the first apply: a note for hbm0, not there yet" \
	grep -q "^bpf-hbm: $DEV_A: no such device, skipped (line 2)" "$ERR"
lock_free "idle watcher"

# 2. The veth appears: shaped as the file says, its class added.
hbm_veth_add || hbm_fatal "veth"
took=$(wait_rate "$DEV_A" $((RATE * 1000000)))
assert_ok "$DEV_A made: bpf_hbm at ${RATE}mbit within ${WAIT_S}s (${took:-never}s)" \
	test -n "$took"
hbm_report "$DEV_A shaped ${took:-never}s after it was made"
assert_eq "$(dev_json "$DEV_A" | jq '.classes | length')" 1 "$DEV_A: its class"
assert_eq "$(dev_json "$DEV_A" | jq '.classes[0].config.rate_bps')" 10000000 \
	"$DEV_A: the class's rate"
assert_same "$(inA tc -j qdisc show dev "$DEV_A" root | jq -r '.[0].kind')" \
	bpf_hbm "$DEV_A: bpf_hbm at the root (--parent root)"
sleep 1	# the rest of the burst (up, addresses): nothing more
assert_eq "$(attached_lines "$DEV_A")" 1 \
	"one 'attached' line with the time for the burst of events"
assert_ok "its class's line" \
	grep -qE "^$TS bpf-hbm: $DEV_A: class $CG: added \(rate 10Mbit\)\$" "$OUT"
assert_eq "$(dev_json hbmz | wc -c)" 0 "hbmz (not in the file) left alone"

# 3. A device renamed to a name of the file.
inA ip link add hbmr type dummy || hbm_fatal "dummy hbmr"
inA ip link set hbmr name hbm2 || hbm_fatal "rename"
took=$(wait_rate hbm2 30000000)
assert_ok "renamed to hbm2: bpf_hbm at 30mbit (${took:-never}s)" test -n "$took"
assert_same "$(dev_json hbm2 | jq -r '.config.ecn')" false "hbm2: ecn off"

# 4. The veth deleted and made again: a new device, shaped again.
old=$(inA cat "/sys/class/net/$DEV_A/ifindex")
inA ip link del "$DEV_A" || hbm_fatal "delete the veth"
hbm_veth_add || hbm_fatal "veth again"
new=$(inA cat "/sys/class/net/$DEV_A/ifindex")
assert_ok "made again: a new device (ifindex $old -> $new)" differ "$old" "$new"
took=$(wait_rate "$DEV_A" $((RATE * 1000000)))
assert_ok "$DEV_A made again: bpf_hbm at ${RATE}mbit (${took:-never}s)" \
	test -n "$took"
assert_eq "$(dev_json "$DEV_A" | jq '.classes | length')" 1 \
	"$DEV_A made again: its class"
sleep 1
assert_eq "$(attached_lines "$DEV_A")" 2 "two 'attached' lines in all"

# 5. Traffic through it: held near the file's rate.
g=$(hbm_iperf 5 -P 1) || hbm_fatal "iperf3 gave no goodput"
pct=$(hbm_pct_of_ceiling "$g" "$RATE")
assert_between "$pct" "$FLOOR" 101 \
	"TCP through the veth made again: goodput ${FLOOR}-101% of the ${RATE} Mbit/s ceiling ($g Mbit/s)"
hbm_report "hotplugged veth at ${RATE} Mbit/s: TCP $g Mbit/s = ${pct}% of ceiling"
lock_free "watcher idle after the traffic"

# 6. SIGHUP: the file again, applied; a bad one reported and not applied.
sed -i "s/^$DEV_A --rate ${RATE}mbit/$DEV_A --rate 80mbit/" "$CONF"
kill -HUP "$WPID"
took=$(wait_rate "$DEV_A" 80000000)
assert_ok "SIGHUP: the file read again, $DEV_A at 80mbit (${took:-never}s)" \
	test -n "$took"
assert_ok "SIGHUP: 'reloaded'" wait_out "^$TS bpf-hbm: $CONF reloaded\$"
assert_ok "SIGHUP: the change's line" \
	grep -qE "^$TS bpf-hbm: $DEV_A: set rate ${RATE}Mbit -> 80Mbit\$" "$OUT"
printf '%s --rate fast\n' "$DEV_A" >"$CONF"
kill -HUP "$WPID"
assert_ok "SIGHUP with a bad file: not reloaded" \
	wait_out "^$TS bpf-hbm: $CONF not reloaded"
assert_ok "SIGHUP with a bad file: FILE:LINE and the reason" \
	grep -qx "bpf-hbm: couldn't apply $CONF:1: invalid rate 'fast'" "$ERR"
assert_ok "the watcher runs on" kill -0 "$WPID"
assert_eq "$(dev_rate "$DEV_A")" 80000000 "the configuration read before stays"
assert_eq "$(grep -c "couldn't attach" "$ERR")" 0 "no device failed"

# 7. SIGTERM: out promptly, status 0, no lock left held.
t0=$EPOCHREALTIME
kill -TERM "$WPID"
for _ in $(seq 1 50); do
	kill -0 "$WPID" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$WPID" 2>/dev/null; then
	echo "FAIL: the watcher still runs 5s after SIGTERM"
	HBM_FAILED=1
	stop_watcher
else
	wait "$WPID"
	st=$?
	WPID=
	took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
	assert_eq "$st" 0 "SIGTERM: exit status 0 (after ${took}s)"
	assert_lt "$took" 5 "SIGTERM: out within 5s"
	assert_ok "SIGTERM: its last line says it stopped" \
		grep -qE "^$TS bpf-hbm: stopped\$" <(tail -n 1 "$OUT")
fi
lock_free "after the watcher"
assert_eq "$(dev_rate "$DEV_A")" 80000000 "the devices stay shaped after it"

echo "watcher's stdout:"
sed 's/^/  /' "$OUT"
echo "watcher's stderr:"
sed 's/^/  /' "$ERR"
hbm_done
