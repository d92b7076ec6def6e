#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run libFuzzer targets (what `make fuzz` runs; selftests/run.sh runs them
# for a few seconds each as tests).
#
#   selftests/fuzz/run.sh [-t SECONDS] [-o DIR] TARGET...
#
# Each TARGET (a built fuzz_NAME binary) runs SECONDS (default 60) from
# its committed corpus, selftests/fuzz/corpus/NAME, which it replays
# first. New inputs and crashing ones go to DIR/NAME/ (default: next to
# TARGET), never into the committed corpus: copy a find worth keeping
# there by hand. Exits 1 if any target crashed, leaked or hung.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=60
dir=
while getopts t:o:h o; do
	case $o in
	t) secs=$OPTARG ;;
	o) dir=$OPTARG ;;
	*) sed -n '4,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "run.sh: no fuzz target given" >&2; exit 2; }

# The sanitizers halt on the first error, with a stack trace.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

failed=()
for t in "$@"; do
	name=$(basename "$t")
	name=${name#fuzz_}
	out=${dir:-$(dirname "$t")}/$name
	mkdir -p "$out/corpus"
	echo "fuzz: $name for ${secs}s (corpus $here/corpus/$name, new inputs in $out)"
	# The first corpus directory takes the new inputs; the committed one
	# is only read. -timeout: an input taking longer is a hang.
	if ! "$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$out/" \
		"$out/corpus" "$here/corpus/$name"; then
		echo "fuzz: $name FAILED (reproducer in $out/)"
		failed+=("$name")
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: failed: ${failed[*]}"
	exit 1
fi
echo "fuzz: all $# targets passed"
