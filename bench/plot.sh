#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/plot.sh DIR: PNG plots of DIR/results.csv and DIR/cost.csv (medians
# of the repeats), with gnuplot:
#   DIR/goodput.png  aggregate goodput, % of the limit, per configuration
#   DIR/p99.png      10 KB RPC P99 latency per configuration
#   DIR/cost.png     packets per second forwarded, as a ratio to fq
set -euo pipefail
dir=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

stats=$(<"$(dirname "$0")/stats.awk")

# pivot [BASE]: "row,arrangement,value" lines on stdin to a gnuplot table,
# one row per row key, one column per arrangement, each cell the median of
# its values; with BASE, as a ratio to that arrangement's median.
pivot() {
	awk -F, -v base="${1-}" "$stats"'
	{
		if (!($1 in seen)) { seen[$1] = 1; rows[++nr] = $1 }
		if (!($2 in seena)) { seena[$2] = 1; cols[++nc] = $2 }
		m = ++n[$1, $2]; v[$1, $2, m] = $3
	}
	function median(k, a,   i, x) {
		for (i = 1; i <= n[k, a]; i++) x[i] = v[k, a, i] + 0
		return median_of(x, n[k, a])
	}
	END {
		printf "row"
		for (j = 1; j <= nc; j++) printf " %s", name(cols[j])
		print ""
		for (i = 1; i <= nr; i++) {
			b = base == "" ? 1 : median(rows[i], base)
			printf "%s", rows[i]
			for (j = 1; j <= nc; j++) printf " %g", b ? median(rows[i], cols[j]) / b : 0
			print ""
		}
	}'
}

# Column C of results.csv per configuration (cc-limit-flows), shaped only.
results() { # C
	awk -F, -v c="$1" 'NR > 1 && $1 != "none" { print $2 "-" $4 "M-" $3 "," $1 "," $c }' \
		"$dir/results.csv"
}

bars() { # DATA PNG TITLE YLABEL
	local ncol
	ncol=$(head -n 1 "$1" | wc -w)
	gnuplot <<GP
set terminal pngcairo noenhanced size 1000,480 font ",10"
set output "$2"
set title "$3"
set ylabel "$4"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left autotitle columnheader
set xtics rotate by -30
set grid ytics
set yrange [0:*]
plot for [i=2:$ncol] "$1" using i:xtic(1)
GP
}

# A run narrowed to the cost (--arrs "") has no shaped rows to plot.
goodput=$(results 7)
if [ -n "$goodput" ]; then
	echo "$goodput" | pivot >"$tmp/goodput"
	bars "$tmp/goodput" "$dir/goodput.png" \
		"Aggregate goodput (median), bpf_hbm vs htb vs fq+edt" \
		"% of the limit"
	results 14 | pivot >"$tmp/p99"
	bars "$tmp/p99" "$dir/p99.png" \
		"10 KB RPC P99 latency (median)" "us"
fi
if [ -s "$dir/cost.csv" ]; then
	awk -F, 'NR > 1 { print $2 "," $1 "," $5 }' "$dir/cost.csv" |
		pivot fq >"$tmp/cost"
	bars "$tmp/cost" "$dir/cost.png" \
		"Packets/s forwarded, 64-byte UDP, limit far above capacity" \
		"ratio to fq"
fi
