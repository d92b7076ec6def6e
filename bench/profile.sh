#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Where bpf_hbm's per-packet cost goes: the flood of bench/run.sh's cost
# runs (64-byte UDP, limit 100 Gbit/s) through bpf_hbm, with the kernel's
# BPF run-time statistics on (kernel.bpf_stats_enabled), for 1 and 1000
# flows with the ECN marker on and off. Prints the packet rate and each
# program's runs and mean run time. Runs inside the VM:
#
#   scripts/vmrun.sh bench/profile.sh [-r REPEAT] [LOADER ...]
#
# Given loaders (bpf-hbm binaries of two builds, each with its qdisc
# embedded: `make OUTPUT=build-base` on the base commit), every flood runs
# once with each in turn, REPEAT times (default 1), so that an A/B
# comparison shares one boot and the host's drift falls on both alike.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
reps=1
if [ "${1:-}" = -r ]; then
	reps=$2
	shift 2
fi
loaders=("$@")
set -- # lib.sh reads $0 only
. "$here/../selftests/vm/lib.sh"
NS_A=hbm-prof-a NS_B=hbm-prof-b
[ ${#loaders[@]} -gt 0 ] || loaders=("$HBM")

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$stats; hbm_cleanup; "$HBM" unload --force >/dev/null' EXIT

progs() {
	bpftool -j prog show |
		jq -c '[.[] | select(.name | test("^hbm_")) | {name, t: (.run_time_ns // 0), n: (.run_cnt // 0)}]'
}

for rep in $(seq "$reps"); do
	for HBM in "${loaders[@]}"; do
		# Any of them may find the pins another's ABI: the newer removes them.
		for l in "${loaders[@]}"; do "$l" unload --force >/dev/null 2>&1; done
		hbm_load
		for ecn in on off; do
			for flows in 1 1000; do
				hbm_veth_setup || exit 1
				inA "$HBM" attach "$DEV_A" --rate 100gbit \
					--parent root --ecn "$ecn" >/dev/null || exit 1
				p0=$(progs)
				r=$(inA "$HBM_TOOLS/flood" -s "$ADDR_A" -d "$ADDR_B" \
					-f "$flows" -t 3)
				p1=$(progs)
				echo "$HBM #$rep, ecn $ecn, $flows flow(s): $r"
				jq -nr --argjson a "$p0" --argjson b "$p1" '
					$b[] as $x | ($a[] | select(.name == $x.name)) as $y |
					($x.n - $y.n) as $n | select($n > 0) |
					"  \($x.name): \($n) runs, \(($x.t - $y.t) / $n | floor) ns/run"'
				hbm_cleanup
			done
		done
	done
done
