#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf_hbm's test runner (what `make test` runs), TAP on stdout.
#
#   selftests/run.sh [--kernel K] [--host-only] [NAME...]
#
# Host tests run first, no VM: the unit tests (build/tests/test_*), the
# man page, bash completion and make install (host/man, completion,
# install), the same unit tests under ASan and UBSan (host-asan/, from
# build/asan/), bpf-hbm under them over its CLI's safe paths
# (host-asan/cli), and each fuzz target (build/fuzz/, fuzz/NAME) over its
# committed corpus and FUZZ_TEST_S seconds (default 5) more; show
# --prometheus's writer read by Prometheus's parser (host/prom); and this
# runner's VM reporting against a fake VM (host/tap_stream). OUTPUT
# (default build) is the build directory. Then the VM boots once and runs
# every selected VM test (selftests/vm/test_*.sh) in that boot, each
# test's line printed as it ends, with how long it took. Unless tests were
# named, a second boot of the other shipped kernel (SECOND_KERNEL, default
# 7.2; empty to skip) runs the VM tests whose subject differs between
# kernels (SECOND_TESTS; "all" for every one) there too (vm@7.2/NAME):
# the verifier, the qdisc framework, cgroups, tcx, netlink. Each boot
# ends with kernel_log, the kernel's log of the boot judged (WARN, BUG,
# stalls...).
# A NAME selects a host test binary (test_edt, both builds), cli, man,
# completion, install, prom, tap_stream, a fuzz target (fuzz_units) or a
# VM test (rate_udp). A failed test's own output is shown as TAP
# comments. Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/status.sh"
repo=$(cd "$here/.." && pwd)
build=${OUTPUT:-build}
case $build in /*) ;; *) build=$repo/$build ;; esac
out=$build/selftests
. "$here/tap.sh"
fuzz_s=${FUZZ_TEST_S:-5}
kernel=${KERNEL:-7.3}
second=${SECOND_KERNEL-7.2}
host_only=0
names=()

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--host-only) host_only=1; shift ;;
	-h|--help) sed -n '4,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) names+=("$1"); shift ;;
	esac
done

selected() {
	local n
	[ ${#names[@]} -eq 0 ] && return 0
	for n in "${names[@]}"; do
		[ "$n" = "$1" ] && return 0
	done
	return 1
}

host_tests=()
for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	b=$(basename "$t")
	selected "$b" && host_tests+=("$b")
done
asan_tests=()
for t in "$build"/asan/tests/test_*; do
	[ -x "$t" ] || continue
	b=$(basename "$t")
	selected "$b" && asan_tests+=("$b")
done
cli=0
[ -x "$build/asan/bpf-hbm" ] && selected cli && cli=1
fuzz_targets=()
for t in "$build"/fuzz/fuzz_*; do
	[ -x "$t" ] || continue
	b=$(basename "$t")
	selected "$b" && fuzz_targets+=("$b")
done
# The loader's layering (scripts/check-layers.sh), on the objects built.
layers=0
selected layers && layers=1
# What an operator installs: bpf-hbm(8) against bpf-hbm's help, the bash
# completion, make install (host/man, host/completion, host/install).
ops_tests=()
if [ -x "$build/bpf-hbm" ]; then
	for t in man completion install; do
		selected "$t" && ops_tests+=("$t")
	done
fi
# show --prometheus's text, through python3-prometheus-client's parser.
[ -x "$build/tests/test_metrics" ] && selected prom && ops_tests+=(prom)
# run_vm's TAP lines as each VM test ends, with a fake VM.
selected tap_stream && ops_tests+=(tap_stream)
vm_tests=()
if [ $host_only = 0 ]; then
	for t in "$here"/vm/test_*.sh; do
		b=$(basename "$t" .sh)
		b=${b#test_}
		[ "$b" = kernel_log ] && continue
		selected "$b" && vm_tests+=("$b")
	done
	# Every boot ends with the kernel's log, judged after all the rest.
	if [ ${#vm_tests[@]} -gt 0 ] || selected kernel_log; then
		vm_tests+=(kernel_log)
	fi
fi
# The second kernel runs what touches the kernel in a way of its own: the
# load (verifier), attach at the root and under mq, the qdisc's
# callbacks and their teardown (del, reset, device gone, hotplug),
# SO_TXTIME, the watchdog's service order, the guard's read of tcp_sock,
# cgroup lookups and the tcx marker (class_live). The long tests repeat
# the same kernel paths under load, or the loader's own logic, for their
# figures: on the first kernel only, where one run costs 38 minutes
# under TCG and both kernels' full runs would not fit CI's 90.
second_default="load apply mq mq_channels txtime raw_tcp del_frees dev_gone
	reset_refund flow_alloc_fail guard limits hotplug sched_early sched_new
	sched_quantum sched_share sched_thin thin_cn rate_udp class_live"
second_list=${SECOND_TESTS:-$second_default}
# A name that is no VM test (a typo, a test renamed) would drop out of the
# second boot unseen.
for t in $second_list; do
	[ "$t" = all ] || [ -f "$here/vm/test_$t.sh" ] || {
		echo "run.sh: SECOND_TESTS: no VM test named $t" >&2
		exit 2
	}
done
second_tests=()
if [ $host_only = 0 ] && [ ${#names[@]} -eq 0 ] && [ -n "$second" ] &&
   [ "$second" != "$kernel" ]; then
	second_words=" $(echo $second_list) kernel_log "
	for t in "${vm_tests[@]}"; do
		case $second_words in
		" all "*|*" $t "*) second_tests+=("$t") ;;
		esac
	done
fi

total=$(( ${#host_tests[@]} + layers + ${#ops_tests[@]} + ${#asan_tests[@]} + cli + \
	${#fuzz_targets[@]} + ${#vm_tests[@]} + ${#second_tests[@]} ))
if [ ${#names[@]} -gt 0 ] && [ "$total" -eq 0 ]; then
	echo "run.sh: no test named ${names[*]}" >&2
	exit 2
fi
rm -rf "$out"
mkdir -p "$out"
echo "1..$total"

for t in "${host_tests[@]}"; do
	log=$out/$t.log
	"$build/tests/$t" >"$log" 2>&1
	report $? "host/$t" "$log"
done
if [ $layers = 1 ]; then
	"$repo/scripts/check-layers.sh" "$build/loader" "$repo/loader" \
		>"$out/layers.log" 2>&1
	report $? "host/layers" "$out/layers.log"
fi
for t in "${ops_tests[@]}"; do
	case $t in
	man) "$here/host/man.sh" "$build/bpf-hbm" "$build/bpf-hbm.8" ;;
	completion) "$here/host/completion.sh" "$build/bpf-hbm" \
		"$repo/scripts/bpf-hbm.bash-completion" ;;
	install) "$here/host/install.sh" "$build" ;;
	prom) "$here/host/prom.sh" "$build" ;;
	tap_stream) "$here/host/tap_stream.sh" "$build" ;;
	esac >"$out/$t.log" 2>&1
	report $? "host/$t" "$out/$t.log"
done

# Under the sanitizers, any error ends the program with a report: UBSan's
# as ASan's, not a warning that scrolls by.
san_env=(ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
	 UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}")
for t in "${asan_tests[@]}"; do
	log=$out/asan-$t.log
	env "${san_env[@]}" "$build/asan/tests/$t" >"$log" 2>&1
	report $? "host-asan/$t" "$log"
done
if [ $cli = 1 ]; then
	env "${san_env[@]}" "$here/host/cli.sh" "$build/asan/bpf-hbm" \
		>"$out/cli.log" 2>&1
	report $? "host-asan/cli" "$out/cli.log"
fi
for t in "${fuzz_targets[@]}"; do
	log=$out/$t.log
	env "${san_env[@]}" "$here/fuzz/run.sh" -t "$fuzz_s" -o "$out/fuzz" \
		"$build/fuzz/$t" >"$log" 2>&1
	report $? "fuzz/${t#fuzz_}" "$log"
done

[ ${#vm_tests[@]} -gt 0 ] && run_vm "$kernel" "vm/" "${vm_tests[@]}"
if [ ${#second_tests[@]} -gt 0 ]; then
	echo "# vm@$second: ${#second_tests[@]} of ${#vm_tests[@]} VM tests (SECOND_TESTS=all for every one)"
	run_vm "$second" "vm@$second/" "${second_tests[@]}"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
