#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf-hbm apply: a configuration file of two devices (A's veth and a
# dummy), a class and a device that does not exist is applied as it says
# (show --json), a second run changes nothing and says so, a run after
# tc qdisc del attaches again with the class kept, an edited file
# (a rate changed, a device and the class dropped) makes exactly those
# changes, --dry-run prints them without making them, ECN is set live, a
# bad file (FILE:LINE, exit 2) changes nothing, and a file naming no
# device detaches them all.
. "$(dirname "$0")/lib.sh"

hbm_veth_setup || hbm_fatal "veth setup"
inA ip link add hbmx type dummy || hbm_fatal "dummy device"
inA ip link set hbmx up
CG=$(hbm_cg a)
CONF=$(mktemp /tmp/hbm-apply.XXXXXX.conf)
OUT=$(mktemp /tmp/hbm-apply.XXXXXX.out)
ERR=$(mktemp /tmp/hbm-apply.XXXXXX.err)
trap 'rm -f "$CONF" "$OUT" "$ERR"; hbm_cleanup' EXIT

# What apply is to make: each device of A's namespace with bpf_hbm, its
# rate, ECN and classes (show --json).
state() {
	inA "$HBM" show --json | jq -c '[.devices[] | select(.dev != null) |
		{dev, rate: .config.rate_bps, ecn: .config.ecn,
		 classes: [.classes[] | {cgroup, rate: .config.rate_bps}]}] |
		sort_by(.dev)'
}

# apply ARGS...: run it in A, its stdout in $OUT, stderr in $ERR, status
# in $ST, and show all three.
apply() {
	inA "$HBM" apply "$@" >"$OUT" 2>"$ERR"
	ST=$?
	echo "  bpf-hbm apply $*: status $ST"
	sed 's/^/    out: /' "$OUT"
	sed 's/^/    err: /' "$ERR"
}

# expect_out LINE...: apply's stdout is exactly these lines.
expect_out() {
	local want got

	want=$(printf '%s\n' "$@")
	got=$(cat "$OUT")
	if [ "$got" = "$want" ]; then
		echo "PASS: output is exactly: $*"
	else
		echo "FAIL: output differs; wanted:"
		sed 's/^/    /' <<<"$want"
		HBM_FAILED=1
	fi
}

dev_field() { # DEV JQ-PATH: of DEV in state
	state | jq -r --arg d "$1" ".[] | select(.dev == \$d) | $2"
}

cat >"$CONF" <<EOF
# the test's devices
hbm0 --rate 100mbit --parent root   # A's veth
hbmx --rate 200mbit --ecn off

hbm0 class --cgroup "$CG" --rate 10mbit
# not there: skipped with a note
hbm-nodev --rate 1gbit
EOF

# 1. Applied as the file says.
apply "$CONF"
assert_eq "$ST" 0 "apply: exit 0"
expect_out "bpf-hbm: hbm0: attached (parent root, rate 100Mbit, ecn on)" \
	"bpf-hbm: hbm0: class $CG: added (rate 10Mbit)" \
	"bpf-hbm: hbmx: attached (parent root, rate 200Mbit, ecn off)"
assert_ok "a note for the device that does not exist" \
	grep -q '^bpf-hbm: hbm-nodev: no such device, skipped (line 7)' "$ERR"
assert_eq "$(dev_field hbm0 .rate)" 100000000 "hbm0: rate 100mbit"
assert_eq "\"$(dev_field hbm0 .ecn)\"" '"true"' "hbm0: ecn on"
assert_eq "$(dev_field hbmx .rate)" 200000000 "hbmx: rate 200mbit"
assert_eq "\"$(dev_field hbmx .ecn)\"" '"false"' "hbmx: ecn off"
assert_eq "$(dev_field hbm0 '.classes | length')" 1 "hbm0: one class"
assert_eq "\"$(dev_field hbm0 '.classes[0].cgroup')\"" "\"$CG\"" \
	"hbm0: the class's cgroup"
assert_eq "$(dev_field hbm0 '.classes[0].rate')" 10000000 \
	"hbm0: the class's rate"
assert_eq "\"$(inA tc -j qdisc show dev hbm0 root | jq -r '.[0].kind')\"" \
	'"bpf_hbm"' "hbm0: bpf_hbm at the root (--parent root)"

# 2. Idempotent: nothing to change, and nothing changes.
before=$(state)
apply "$CONF"
assert_eq "$ST" 0 "second apply: exit 0"
expect_out "bpf-hbm: nothing to change"
after=$(state)
assert_same "$after" "$before" "second apply: state unchanged"

# 2b. bpf_hbm taken off hbm0 outside apply (tc qdisc del), which keeps
# its configuration and class: apply attaches it again and adds no class.
assert_ok "tc qdisc del dev hbm0 root" inA tc qdisc del dev hbm0 root
apply "$CONF"
assert_eq "$ST" 0 "apply after tc qdisc del: exit 0"
assert_ok "apply after tc qdisc del: hbm0 attached" \
	grep -q "^bpf-hbm: hbm0: attached" "$OUT"
assert_eq "$(grep -c class "$OUT")" 0 "apply after tc qdisc del: no class change"
after=$(state)
assert_same "$after" "$before" "apply after tc qdisc del: state as before"

# 3. The file edited: hbm0's rate changed, hbmx and the class dropped.
cat >"$CONF" <<EOF
hbm0 --rate 150mbit --parent root
hbm-nodev --rate 1gbit
EOF
# --dry-run: the same lines, marked, and nothing made.
apply "$CONF" --dry-run
assert_eq "$ST" 0 "--dry-run: exit 0"
expect_out "bpf-hbm: dry run: hbmx: detached" \
	"bpf-hbm: dry run: hbm0: set rate 100Mbit -> 150Mbit" \
	"bpf-hbm: dry run: hbm0: class $CG: deleted" \
	"bpf-hbm: dry run: 3 changes, none made"
after=$(state)
assert_same "$after" "$before" "--dry-run: state unchanged"
# Then for real: exactly those changes.
apply "$CONF"
assert_eq "$ST" 0 "apply of the edited file: exit 0"
expect_out "bpf-hbm: hbmx: detached" \
	"bpf-hbm: hbm0: set rate 100Mbit -> 150Mbit" \
	"bpf-hbm: hbm0: class $CG: deleted"
assert_eq "$(dev_field hbm0 .rate)" 150000000 "hbm0: rate 150mbit"
assert_eq "\"$(dev_field hbm0 .ecn)\"" '"true"' "hbm0: ecn still on"
assert_eq "$(dev_field hbm0 '.classes | length')" 0 "hbm0: no class"
assert_eq "$(state | jq '[.[] | select(.dev == "hbmx")] | length')" 0 \
	"hbmx: detached"
assert_eq "\"$(inA tc -j qdisc show dev hbmx root | jq -r '.[0].kind')\"" \
	'"noqueue"' "hbmx: its default qdisc back"
apply "$CONF"
expect_out "bpf-hbm: nothing to change"

# 4. ECN off: set live, not re-attached.
sed -i 's/^hbm0 .*/hbm0 --rate 150mbit --parent root --ecn off/' "$CONF"
apply "$CONF"
assert_eq "$ST" 0 "ecn off: exit 0"
expect_out "bpf-hbm: hbm0: set ecn on -> off"
assert_eq "\"$(dev_field hbm0 .ecn)\"" '"false"' "hbm0: ecn off"

# 5. A bad file: every problem with its FILE:LINE, exit 2, no change.
before=$(state)
cat >"$CONF" <<EOF
hbm0 --rate 1gbit
hbmx --rate fast
hbm0 --rate 2gbit
EOF
apply "$CONF"
assert_eq "$ST" 2 "a bad file: exit 2"
assert_ok "a bad file: line 2 named" \
	grep -qx "bpf-hbm: couldn't apply $CONF:2: invalid rate 'fast'" "$ERR"
assert_ok "a bad file: line 3 named" \
	grep -qx "bpf-hbm: couldn't apply $CONF:3: duplicate line for hbm0 (first at line 1)" "$ERR"
assert_eq "$(wc -c <"$OUT")" 0 "a bad file: no change printed"
after=$(state)
assert_same "$after" "$before" "a bad file: state unchanged"

# 6. A file naming no device: bpf_hbm goes from every device of A's.
printf '# nothing shaped\n' >"$CONF"
apply "$CONF"
assert_eq "$ST" 0 "an empty file: exit 0"
expect_out "bpf-hbm: hbm0: detached"
assert_eq "$(state | jq length)" 0 "no device has bpf_hbm"
hbm_done
