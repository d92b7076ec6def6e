#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark's machinery (make bench QUICK=1): every arrangement runs the
# RPC workload once and the outputs have their shape: a CSV row per run
# with 17 numeric fields, a Markdown table with every arrangement and the
# ratio table; the cost flood moved packets through fq and bpf_hbm; the
# plots are PNGs. Numbers are not judged here; bench/ is where they are.
. "$(dirname "$0")/lib.sh"

out=$HBM_REPO/build/bench-quick
rm -rf "$out"
assert_ok "bench/run.sh --quick" "$HBM_REPO/bench/run.sh" --quick --out "$out" ||
	hbm_done
cat "$out/meta.txt" "$out/table.md"
csv=$out/results.csv
assert_eq "$(head -n 1 "$csv" | tr ',' '\n' | wc -l)" 17 "CSV header has 17 columns"
assert_eq "$(awk -F, 'NR > 1 && NF != 17' "$csv" | wc -l)" 0 "every row has 17 fields"
assert_eq "$(awk -F, 'NR > 1 { for (i = 6; i <= 17; i++) if ($i !~ /^[0-9.]+$/) print }' "$csv" | wc -l)" 0 "every measurement is a number"
for a in none hbm htb fqedt; do
	assert_gt "$(awk -F, -v a=$a '$1 == a { print $6; exit }' "$csv")" 0 "$a moved RPC traffic"
done
for t in unshaped bpf_hbm htb fq+edt; do
	assert_ok "table has cubic-$t" grep -q "^| cubic-$t |" "$out/table.md"
done
assert_ok "ratio table" grep -q "aggr vs htb" "$out/table.md"
cost=$out/cost.csv
for a in fq hbm; do
	assert_gt "$(awk -F, -v a=$a '$1 == a { print $5; exit }' "$cost")" 0 "the flood went through $a"
done
assert_ok "cost table" grep -q "^| bpf_hbm | [0-9]* | [0-9.]* |" "$out/table.md"
for p in goodput p99 cost; do
	assert_eq "\"$(head -c 4 "$out/$p.png" | od -An -c | tr -d ' ')\"" '"211PNG"' "$p.png is a PNG"
done
assert_ok "meta names the kernel" grep -q "^kernel: $(uname -r)" "$out/meta.txt"
hbm_done
