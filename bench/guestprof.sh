#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where the whole guest's time goes, per packet, while the cost runs' flood
# (64-byte UDP, bench/flood.c) crosses each arrangement: a sampled profile
# of every CPU (perf, cpu-clock at 1 kHz, no call graphs: unwinding through
# BPF frames costs enough to change the result), which, unlike
# bench/profile.sh's BPF statistics, also sees what the kernel around a
# qdisc spends. Runs inside the VM:
#
#   scripts/vmrun.sh env PERF=/path/to/perf bench/guestprof.sh [-r REPEAT] [-f FLOWS] [ARR ...]
#
# ARRs are bench/arrange.sh's (default: fq hbm floor), FLOWS a list in
# quotes (default "1 10000"). Each repeat runs every flow count through the
# arrangements in turn: a flood without perf, printing its rate and each
# CPU's busy share, then, in the first repeat only, one under perf,
# printing the flood's CPU time a packet, the part of it in BPF (programs,
# trampolines, helpers, kfuncs and map code) and its 12 costliest symbols,
# in ns a packet. The environment has no perf: PERF names one that runs in it
# (a Debian linux-perf binary, with the libraries it lacks in
# LD_LIBRARY_PATH).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
reps=1 flows="1 10000"
while getopts "r:f:h" o; do
	case $o in
	r) reps=$OPTARG ;;
	f) flows=$OPTARG ;;
	*) sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
arrs=("$@")
[ ${#arrs[@]} -gt 0 ] || arrs=(fq hbm floor)
set -- # lib.sh reads $0 only
. "$repo/selftests/vm/lib.sh"
NS_A=hbm-bench-a NS_B=hbm-bench-b
. "$here/arrange.sh"
perf=${PERF:-perf}
"$perf" --version >/dev/null 2>&1 || { echo "guestprof: no perf ('$perf'): set PERF" >&2; exit 1; }
sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
bench_begin || exit 1

# busy: "CPU BUSY_TICKS IDLE_TICKS" a line, from /proc/stat
busy() { awk '/^cpu[0-9]/ { print $1, $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }

# The flood's command line; each run adds -f FLOWS.
flood=("$HBM_TOOLS/flood" -s "$ADDR_A" -d "$ADDR_B" -t 3)

for rep in $(seq "$reps"); do
	for f in $flows; do
		for arr in "${arrs[@]}"; do
			hbm_veth_setup >/dev/null || exit 1
			arrange "$arr" 100000 || exit 1
			b0=$(busy)
			res=$(inA "${flood[@]}" -f "$f")
			b1=$(busy)
			echo "$arr, $f flow(s), #$rep: $res, busy $(join <(echo "$b0") <(echo "$b1") |
				awk '{ printf "%s %d%% ", $1, 100 * ($4 - $2) / ($4 - $2 + $5 - $3) }')"
			if [ "$rep" = 1 ]; then
				"$perf" record -q -a -e cpu-clock -F 1000 \
					-o "$data/p" -- ip netns exec "$NS_A" \
					"${flood[@]}" -f "$f" >"$data/res" 2>/dev/null
				sent=$(sed -n 's/.*sent=\([0-9]*\).*/\1/p' "$data/res")
				# One sample is 1 ms of a CPU: ns a packet = 1e6 * n / sent.
				"$perf" report -i "$data/p" --comm flood --sort sym \
					--stdio -n 2>/dev/null | grep -v '^#' | grep -v '^$' |
					awk -v sent="${sent:-0}" -v r="$(cat "$data/res")" '
					{ n[NR] = $2; s[NR] = $4; t += $2 }
					# BPF programs, trampolines, helpers, kfuncs, maps
					$4 ~ /^(__)?bpf|^tcx_|ktime_get_mono_fast_ns|htab|lookup_nulls_elem_raw|jhash/ { b += $2 }
					END {
						if (!sent) { print "  perf run: no packets"; exit 1 }
						printf "  under perf: %s, flood %d ns a packet, BPF %d\n", r, 1e6 * t / sent, 1e6 * b / sent
						for (i = 1; i <= 12 && i <= NR; i++)
							printf "    %6d ns  %s\n", 1e6 * n[i] / sent, s[i]
					}'
			fi
			hbm_cleanup
			unarrange
		done
	done
done
bench_end
