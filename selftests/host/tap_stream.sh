#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftests/run.sh's run_vm (selftests/tap.sh) against a fake VM
# (HBM_VMRUN) that appends its result lines a while apart, one of them in
# two writes, then exits without running its last test: each TAP line must
# come out when its result line is whole, before the next one is written
# and before the VM exits; the lines are those a real run gives (a pass
# with its REPORT: figure, a skip's reason, a timeout, a test the VM never
# ran, each with its time). Then scripts/follow.sh (make bench's progress)
# the same way: lines on stderr as they come, the command's exit status.
#
#   selftests/host/tap_stream.sh BUILD_DIR
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sel=$(cd "$here/.." && pwd)
repo=$(cd "$sel/.." && pwd)
build=${1:?usage: tap_stream.sh BUILD_DIR}
case $build in /*) ;; *) build=$repo/$build ;; esac
tmp=$build/tap-stream-test
rm -rf "$tmp"
mkdir -p "$tmp/out"
fail=0

bad() { echo "FAIL: $*"; fail=1; }
now() { date +%s.%N; }
# before T1 T2: T1 < T2 (seconds, with fractions)
before() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
# stamp: each line of stdin, after the time it was read at
stamp() { local l; while IFS= read -r l; do printf '%s %s\n' "$(now)" "$l"; done; }

# The fake VM: run.sh's arguments, as scripts/vmrun.sh gets them.
cat >"$tmp/vmrun" <<'EOF'
#!/usr/bin/env bash
times=$(dirname "$0")/times
while [ "$1" != --out ]; do shift; done
out=$2 res=$4
wrote() { echo "$(date +%s.%N) $1" >>"$times"; }
sleep 1
echo "REPORT: a's figure 42" >"$out/a.log"
echo "0 a 1" >>"$res"; wrote a
sleep 1
echo "needs dctcp" >"$out/b.log"
echo "4 b 0 needs dctcp" >>"$res"; wrote b
echo "0 zz 1" >>"$res"	# not asked for
sleep 1
echo "c's output" >"$out/c.log"
printf '124 c 3 tim' >>"$res"; wrote c-half
sleep 1.5
printf 'ed out after 3s\n' >>"$res"; wrote c
echo "fake vm: d crashed"
sleep 1.5
wrote exit
exit 1
EOF
chmod +x "$tmp/vmrun"

(
	. "$sel/status.sh"
	here=$sel out=$tmp/out
	. "$sel/tap.sh"
	FOLLOW_POLL_S=0.2 HBM_VMRUN=$tmp/vmrun
	run_vm 7.3 vm/ a b c d
	echo "counts $num $pass $fail $skip"
) | stamp >"$tmp/tap"

cut -d' ' -f2- "$tmp/tap" >"$tmp/tap.text"
cat >"$tmp/want" <<'EOF'
ok 1 - vm/a # 1s
# a's figure 42
ok 2 - vm/b # SKIP needs dctcp (0s)
not ok 3 - vm/c # timed out after 3s (3s)
# c's output
not ok 4 - vm/d # the VM did not run it
# fake vm: d crashed
counts 4 1 2 1
EOF
diff -u "$tmp/want" "$tmp/tap.text" || bad "run_vm's TAP lines differ (above)"

at() { awk -v k="$1" '$2 == k { print $1; exit }' "$tmp/times"; }
tap_at() { awk -v k="$1" 'index($0, k) { print $1; exit }' "$tmp/tap"; }
for k in a b c-half c exit; do
	[ -n "$(at "$k")" ] || bad "the fake VM did not get to '$k'"
done
[ "$fail" = 0 ] || { cat "$tmp/times"; exit 1; }
t1=$(tap_at "ok 1 - ") t2=$(tap_at "ok 2 - ") t3=$(tap_at "not ok 3 - ")
t4=$(tap_at "not ok 4 - ")
before "$(at a)" "$t1" && before "$t1" "$(at b)" ||
	bad "vm/a's line at $t1, not between its result ($(at a)) and the next ($(at b))"
before "$(at b)" "$t2" && before "$t2" "$(at c-half)" ||
	bad "vm/b's line at $t2, not between its result ($(at b)) and the next ($(at c-half))"
before "$(at c)" "$t3" && before "$t3" "$(at exit)" ||
	bad "vm/c's line at $t3, not between its whole line ($(at c)) and the VM's exit ($(at exit))"
before "$(at exit)" "$t4" || bad "vm/d reported at $t4, before the VM exited ($(at exit))"
[ "$fail" = 0 ] || { cat "$tmp/times" "$tmp/tap"; }

# scripts/follow.sh FILE CMD: FILE's lines on stderr as they come, CMD's
# exit status; FILE emptied first.
echo "stale" >"$tmp/progress"
{
	FOLLOW_POLL_S=0.2 "$repo/scripts/follow.sh" "$tmp/progress" bash -c '
		echo "run 1" >>"$1"; sleep 1; date +%s.%N >"$1.t"
		printf "run 2\n" >>"$1"; echo "not progress"; exit 3' \
		bash "$tmp/progress" 2>&1 >/dev/null
	echo "exit $?"
} | stamp >"$tmp/follow"
[ "$(cut -d' ' -f2- "$tmp/follow")" = "run 1
run 2
exit 3" ] || bad "follow.sh gave '$(cat "$tmp/follow")', not run 1, run 2 on stderr and exit 3"
f1=$(awk '/run 1/ { print $1 }' "$tmp/follow")
before "${f1:-9e99}" "$(cat "$tmp/progress.t" 2>/dev/null || echo 0)" ||
	bad "follow.sh printed run 1 at $f1, not before the command went on ($(cat "$tmp/progress.t"))"

[ "$fail" = 0 ] && echo "tap_stream: run_vm and follow.sh report as the VM goes"
exit "$fail"
