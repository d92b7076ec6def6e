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

# One row per configuration (cc-limit-flows), one column per arrangement:
# the median of column C of results.csv.
pivot() { # C
	awk -F, -v c="$1" '
	NR == 1 { next }
	$1 == "none" { next }
	{
		k = $2 "-" $4 "M-" $3
		if (!(k in seen)) { seen[k] = 1; rows[++nr] = k }
		if (!($1 in seena)) { seena[$1] = 1; cols[++nc] = $1 }
		m = ++n[k, $1]; v[k, $1, m] = $c
	}
	function median(k, a,   i, j, t, m, x) {
		m = n[k, a]
		for (i = 1; i <= m; i++) x[i] = v[k, a, i] + 0
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
			if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return m ? (m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2) : 0
	}
	END {
		printf "config"
		for (j = 1; j <= nc; j++)
			printf " %s", cols[j] == "hbm" ? "bpf_hbm" : cols[j] == "fqedt" ? "fq+edt" : cols[j]
		print ""
		for (i = 1; i <= nr; i++) {
			printf "%s", rows[i]
			for (j = 1; j <= nc; j++) printf " %g", median(rows[i], cols[j])
			print ""
		}
	}' "$dir/results.csv"
}

# Packets per second delivered, as a ratio to fq's, per flow count.
cost_pivot() {
	awk -F, '
	NR == 1 { next }
	{
		if (!($2 in seen)) { seen[$2] = 1; rows[++nr] = $2 }
		if (!($1 in seena)) { seena[$1] = 1; cols[++nc] = $1 }
		m = ++n[$2, $1]; v[$2, $1, m] = $5
	}
	function median(k, a,   i, j, t, m, x) {
		m = n[k, a]
		for (i = 1; i <= m; i++) x[i] = v[k, a, i] + 0
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
			if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return m ? (m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2) : 0
	}
	END {
		printf "flows"
		for (j = 1; j <= nc; j++)
			printf " %s", cols[j] == "hbm" ? "bpf_hbm" : cols[j] == "fqedt" ? "fq+edt" : cols[j] == "none" ? "unshaped" : cols[j]
		print ""
		for (i = 1; i <= nr; i++) {
			f = median(rows[i], "fq")
			printf "%s", rows[i]
			for (j = 1; j <= nc; j++) printf " %g", f ? median(rows[i], cols[j]) / f : 0
			print ""
		}
	}' "$dir/cost.csv"
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

pivot 7 >"$tmp/goodput"
bars "$tmp/goodput" "$dir/goodput.png" \
	"Aggregate goodput (median), bpf_hbm vs htb vs fq+edt" "% of the limit"
pivot 14 >"$tmp/p99"
bars "$tmp/p99" "$dir/p99.png" \
	"10 KB RPC P99 latency (median)" "us"
if [ -s "$dir/cost.csv" ]; then
	cost_pivot >"$tmp/cost"
	bars "$tmp/cost" "$dir/cost.png" \
		"Packets/s forwarded, 64-byte UDP, limit far above capacity" \
		"ratio to fq"
fi
