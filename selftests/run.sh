#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bpf_hbm's test runner (what `make test` runs), TAP on stdout.
#
#   selftests/run.sh [--kernel K] [--host-only] [NAME...]
#
# Host tests (build/tests/test_*, no VM) run first; then the VM boots once
# and runs every selected VM test (selftests/vm/test_*.sh) in that boot.
# Unless tests were named, a second short boot of the other shipped kernel
# (SECOND_KERNEL, default 7.2; empty to skip) checks that the BPF object
# loads and passes traffic there too. A NAME selects a host test binary
# (test_edt) or a VM test (rate_udp). A failed test's own output is shown
# as TAP comments. Ends with "N passed, N failed"; exits 1 on any failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/status.sh"
repo=$(cd "$here/.." && pwd)
out=$repo/build/selftests
kernel=${KERNEL:-7.3}
second=${SECOND_KERNEL-7.2}
host_only=0
names=()

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--host-only) host_only=1; shift ;;
	-h|--help) sed -n '4,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
for t in "$repo"/build/tests/test_*; do
	[ -x "$t" ] || continue
	b=$(basename "$t")
	selected "$b" && host_tests+=("$b")
done
# The loader's layering (scripts/check-layers.sh), on the objects built.
layers=0
selected layers && layers=1
vm_tests=()
if [ $host_only = 0 ]; then
	for t in "$here"/vm/test_*.sh; do
		b=$(basename "$t" .sh)
		b=${b#test_}
		selected "$b" && vm_tests+=("$b")
	done
fi
second_kernel=0
if [ $host_only = 0 ] && [ ${#names[@]} -eq 0 ] && [ -n "$second" ] &&
   [ "$second" != "$kernel" ]; then
	second_kernel=1
fi

total=$(( ${#host_tests[@]} + layers + ${#vm_tests[@]} + second_kernel ))
if [ ${#names[@]} -gt 0 ] && [ "$total" -eq 0 ]; then
	echo "run.sh: no test named ${names[*]}" >&2
	exit 2
fi
rm -rf "$out"
mkdir -p "$out"
echo "1..$total"

num=0 pass=0 fail=0 skip=0
report() { # STATUS NAME LOG [NOTE]
	num=$((num + 1))
	case $1 in
	0)
		pass=$((pass + 1))
		echo "ok $num - $2"
		# Measurements a test reports are shown even when it passes.
		[ -s "$3" ] && sed -n 's/^REPORT: /# /p' "$3"
		;;
	"$HBM_SKIP") skip=$((skip + 1)); echo "ok $num - $2 # SKIP ${4:-}" ;;
	*)
		fail=$((fail + 1))
		echo "not ok $num - $2${4:+ # $4}"
		[ -s "$3" ] && sed 's/^/# /' "$3"
		;;
	esac
}

for t in "${host_tests[@]}"; do
	log=$out/$t.log
	"$repo/build/tests/$t" >"$log" 2>&1
	report $? "host/$t" "$log"
done
if [ $layers = 1 ]; then
	"$repo/scripts/check-layers.sh" "$repo/build/loader" "$repo/loader" \
		>"$out/layers.log" 2>&1
	report $? "host/layers" "$out/layers.log"
fi

# The VM writes one "STATUS NAME" line per test to a results file; its
# console output (boot noise included) goes to a log shown on failure.
run_vm() { # KERNEL PREFIX TEST...
	local k=$1 prefix=$2 res log st name t
	shift 2
	res=$out/vm-$k.results
	log=$out/vm-$k.console
	: >"$res"
	mkdir -p "$out/$k"
	"$repo/scripts/vmrun.sh" -k "$k" -t "${VM_TIMEOUT:-3000}" \
		"$here/vm/run.sh" --out "$out/$k" --results "$res" "$@" \
		>"$log" 2>&1
	for t in "$@"; do
		st=$(awk -v n="$t" '$2 == n { print $1 }' "$res")
		if [ -z "$st" ]; then
			report 1 "$prefix$t" "$log" "the VM did not run it"
			continue
		fi
		name=$prefix$t
		report "$st" "$name" "$out/$k/$t.log" \
			"$(awk -v n="$t" '$2 == n { $1 = $2 = ""; print }' "$res" | sed 's/^ *//')"
	done
}

[ ${#vm_tests[@]} -gt 0 ] && run_vm "$kernel" "vm/" "${vm_tests[@]}"
[ $second_kernel = 1 ] && run_vm "$second" "vm@$second/" load

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
