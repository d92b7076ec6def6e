#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A loader killed anywhere: bpf-hbm's test hook (BPF_HBM_TEST_KILL_AT=N)
# SIGKILLs it at its Nth step, a point between two changes to the kernel's
# state. For every N of attach (at the root from nothing loaded, so the
# load's steps too; under mq), of detach and of unload, running the same command again must
# converge: attach to a fully shaped device (its qdiscs, configuration,
# marker; traffic passes and is counted), detach to the default qdisc
# with no configuration, marker or tcx link left, unload to no pins. And
# SIGINT, SIGTERM and SIGHUP sent during an attach wait for it to finish.
. "$(dirname "$0")/lib.sh"

PIN=/sys/fs/bpf/bpf_hbm
MQ=m0
MQ_PEER=m1

hbm_veth_setup || hbm_fatal "veth setup"
ip link add "$MQ" numtxqueues 4 numrxqueues 4 netns "$NS_A" type veth \
	peer name "$MQ_PEER" numtxqueues 4 numrxqueues 4 netns "$NS_B" ||
	hbm_fatal "mq veth"
inA ip addr add 198.51.100.1/31 dev "$MQ"
inB ip addr add 198.51.100.0/31 dev "$MQ_PEER"
inA ip link set "$MQ" up
inB ip link set "$MQ_PEER" up
NETNS=$(stat -L -c %i "/run/netns/$NS_A")

peer_of() { [ "$1" = "$MQ" ] && echo 198.51.100.0 || echo "$ADDR_B"; }
txq_of() { [ "$1" = "$MQ" ] && echo 4 || echo 1; }
dev_json() { inA "$HBM" show "$1" --json 2>/dev/null | jq -c '.devices[0]'; }

# DEV fully shaped: its qdiscs, configuration (rate, finished, ecn) and
# marker, and a ping through it counted by the qdiscs.
shaped() { # WHAT DEV
	local what=$1 dev=$2 idx j n before after ok=0

	idx=$(inA cat "/sys/class/net/$dev/ifindex")
	n=$(inA tc -j qdisc show dev "$dev" |
	    jq '[.[] | select(.kind == "bpf_hbm")] | length')
	j=$(dev_json "$dev")
	[ "$n" = "$(txq_of "$dev")" ] &&
	[ "$(jq -r .config.rate_bps <<<"$j")" = 100000000 ] &&
	[ "$(jq -r .config.attach_finished <<<"$j")" = true ] &&
	[ "$(jq -r .config.ecn <<<"$j")" = true ] &&
	[ -e "$PIN/ce-$NETNS-$idx" ] && ok=1
	before=$(jq -r .stats.packets <<<"$j")
	inA ping -c 2 -i 0.1 -W 2 "$(peer_of "$dev")" >/dev/null || ok=0
	after=$(dev_json "$dev" | jq -r .stats.packets)
	[ -n "$before" ] && [ -n "$after" ] && [ "$after" -ge $((before + 2)) ] ||
		ok=0
	[ $ok = 1 ] && return 0
	echo "FAIL: $what: $dev not fully shaped: $n bpf_hbm qdiscs, packets $before -> $after, $j"
	inA tc qdisc show dev "$dev"
	ls "$PIN"
	HBM_FAILED=1
	return 1
}

# DEV as before bpf_hbm: no bpf_hbm qdisc, configuration, marker pin or
# tcx link.
bare() { # WHAT DEV
	local what=$1 dev=$2 idx n tcx cfg=0

	idx=$(inA cat "/sys/class/net/$dev/ifindex")
	n=$(inA tc -j qdisc show dev "$dev" |
	    jq '[.[] | select(.kind == "bpf_hbm" or .kind == "mq")] | length')
	tcx=$(inA bpftool -j net show dev "$dev" |
	      jq '[.[0].tc[]? | select(.name == "hbm_ce")] | length')
	if [ -e "$PIN/hbm_config" ]; then
		cfg=$(bpftool -j map dump pinned "$PIN/hbm_config" |
		      jq --argjson i "$idx" '[.[] | select(.key.ifindex == $i)] | length')
	fi
	if [ "$n" = 0 ] && [ "$tcx" = 0 ] && [ "$cfg" = 0 ] &&
	   [ ! -e "$PIN/ce-$NETNS-$idx" ]; then
		return 0
	fi
	echo "FAIL: $what: $dev not bare: $n qdiscs, $tcx tcx, $cfg config"
	HBM_FAILED=1
	return 1
}

# The same command again after a kill at step N: exit 0, or, when the
# kill came after its last change, the refusal that says it is done.
again() { # WHAT OKMSG CMD...
	local what=$1 okmsg=$2 out rc
	shift 2
	out=$(inA "$@" 2>&1)
	rc=$?
	if [ $rc = 0 ] || { [ $rc = 1 ] && [[ $out == *"$okmsg"* ]]; }; then
		return 0
	fi
	echo "FAIL: $what: '$*' again: exit $rc: $out"
	HBM_FAILED=1
	return 1
}

killed() { # WHAT RC OUT: the hook killed it (not some other failure)
	[ "$2" = 137 ] && [[ $3 == *"test: killed at step"* ]] && return 0
	echo "FAIL: $1: expected a kill, got exit $2: $3"
	HBM_FAILED=1
	return 1
}

steps_attach=0 steps_detach=0 steps_unload=0
for dev in "$DEV_A" "$MQ"; do
	par=root
	[ "$dev" = "$MQ" ] && par=mq
	for n in $(seq 1 40); do
		# The load's own steps from nothing loaded at the root; under
		# mq, from loaded: the same steps again would only cost time.
		if [ "$par" = root ]; then
			inA "$HBM" unload --force >/dev/null 2>&1
		else
			inA "$HBM" load >/dev/null 2>&1
		fi
		out=$(BPF_HBM_TEST_KILL_AT=$n inA "$HBM" attach "$dev" \
		      --parent "$par" --rate 100mbit 2>&1)
		rc=$?
		if [ $rc = 0 ]; then
			# Past the last step: an attach that ran through.
			steps_attach=$((steps_attach + n - 1))
			shaped "attach $dev, not killed" "$dev"
			inA "$HBM" detach "$dev" >/dev/null
			break
		fi
		killed "attach $dev, step $n" $rc "$out" || break
		again "attach $dev after a kill at step $n" "already attached" \
			"$HBM" attach "$dev" --parent "$par" --rate 100mbit
		shaped "attach $dev after a kill at step $n ($out)" "$dev" || break
		assert_ok "detach $dev after that" inA "$HBM" detach "$dev" >/dev/null
		bare "detach $dev after that" "$dev"
	done
	echo "PASS: attach $dev: killed at each of its steps, converged"

	for n in $(seq 1 20); do
		inA "$HBM" attach "$dev" --parent "$par" --rate 100mbit >/dev/null ||
			hbm_fatal "attach $dev"
		out=$(BPF_HBM_TEST_KILL_AT=$n inA "$HBM" detach "$dev" 2>&1)
		rc=$?
		if [ $rc = 0 ]; then
			steps_detach=$((steps_detach + n - 1))
			bare "detach $dev" "$dev"
			break
		fi
		killed "detach $dev, step $n" $rc "$out" || break
		again "detach $dev after a kill at step $n" "__never__" \
			"$HBM" detach "$dev"
		bare "detach $dev after a kill at step $n ($out)" "$dev" || break
	done
	echo "PASS: detach $dev: killed at each of its steps, converged"
done

# unload: killed while it removes the pins; again, it removes the rest.
for n in $(seq 1 20); do
	inA "$HBM" load >/dev/null || hbm_fatal "load"
	out=$(BPF_HBM_TEST_KILL_AT=$n inA "$HBM" unload 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		steps_unload=$((n - 1))
		break
	fi
	killed "unload, step $n" $rc "$out" || break
	again "unload after a kill at step $n" "__never__" "$HBM" unload
	assert_ok "unload after a kill at step $n: no pins" test ! -e "$PIN" || break
done
assert_ok "a load after all that works" inA "$HBM" load
assert_gt "$steps_attach" 10 "attach steps killed at ($steps_attach)"
assert_gt "$steps_detach" 2 "detach steps killed at ($steps_detach)"
assert_gt "$steps_unload" 4 "unload steps killed at ($steps_unload)"

# Signals during an attach are held until it ends: the hook's step 1 is
# replaced by a pause long enough to signal it (BPF_HBM_TEST_PAUSE_AT).
inA "$HBM" unload --force >/dev/null 2>&1
for sig in INT TERM HUP; do
	# A background job starts with SIGINT ignored: env gives it back.
	BPF_HBM_TEST_PAUSE_AT=1 inA env --default-signal "$HBM" attach \
		"$DEV_A" --rate 100mbit >/dev/null 2>&1 &
	pid=$!
	sleep 0.5
	pkill "-$sig" -f "bpf-hbm attach $DEV_A"
	wait $pid
	rc=$?
	assert_ok "SIG$sig during attach: it ended by the signal after finishing (exit $rc)" \
		test $rc -gt 128
	shaped "SIG$sig during attach" "$DEV_A"
	inA "$HBM" detach "$DEV_A" >/dev/null
	bare "detach after SIG$sig" "$DEV_A"
done
# unload over stale pins (the link detached) or broken ones (a map pin
# gone, the configuration's here): the qdisc keeps running, the marker
# goes with the pins, so its configuration must lose the ECN flag, or ECN
# senders would get neither CE nor CN.
idx=$(inA cat "/sys/class/net/$DEV_A/ifindex")
ecn_flag() { # MAP_ID: hbm0's HBM_F_ECN bit in that hbm_config map
	bpftool -j map dump id "$1" | jq -e --argjson i "$idx" --argjson n "$NETNS" \
		'.[] | (.formatted // .) | select(.key.ifindex? == $i and .key.netns? == $n) | .value.flags % 2'
}
for how in stale broken; do
	inA "$HBM" attach "$DEV_A" --rate 100mbit >/dev/null || hbm_fatal "attach"
	id=
	for m in $(bpftool -j map show | jq '.[] | select(.name == "hbm_config") | .id'); do
		[ "$(ecn_flag "$m" 2>/dev/null)" = 1 ] && id=$m
	done
	assert_ok "$how: hbm0's configuration found, ECN on (map ${id:-none})" test -n "$id"
	if [ $how = stale ]; then
		bpftool link detach pinned "$PIN/link" || hbm_fatal "link detach"
	else
		rm "$PIN/hbm_config"
	fi
	assert_ok "unload, $how pins" inA "$HBM" unload
	assert_ok "$how: no pins left" test ! -e "$PIN"
	f=$(ecn_flag "$id")
	assert_ok "$how: the running qdisc's ECN flag went with its marker ($f)" test "$f" = 0
	inA tc qdisc del dev "$DEV_A" root
done

hbm_report "killed at $steps_attach attach steps (root and mq), $steps_detach detach steps, $steps_unload unload steps: each converged on a rerun"
hbm_done
