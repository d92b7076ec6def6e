#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/table.sh RESULTS.CSV [COST.CSV]: the Markdown tables of bench/run.sh's
# runs, in the shape of HBM's result tables: the median of the repeats of
# each configuration, the min-max spread of the aggregate rate, then
# bpf_hbm's figures as ratios to htb's and fq+EDT's from the same run; and
# the forwarding cost, each arrangement's packet rate as a ratio to fq's.
set -euo pipefail
csv=$1 cost=${2-}
stats=$(<"$(dirname "$0")/stats.awk")

awk -F, "$stats"'
NR == 1 { next }
{
	k = $1 "," $2 "," $3 "," $4
	if (!(k in n)) order[++nk] = k
	n[k]++
	for (c = 6; c <= 17; c++) v[k, c, n[k]] = $c
}
function median(k, c,   i, a) {
	for (i = 1; i <= n[k]; i++) a[i] = v[k, c, i] + 0
	return median_of(a, n[k])
}
function spread(k, c,   i, lo, hi, x) {
	lo = hi = v[k, c, 1] + 0
	for (i = 2; i <= n[k]; i++) { x = v[k, c, i] + 0; if (x < lo) lo = x; if (x > hi) hi = x }
	return n[k] > 1 ? sprintf("%.0f-%.0f", lo, hi) : "-"
}
function ratio(x, y) { return y + 0 ? sprintf("%.2f", x / y) : "-" }
END {
	print "| Test | Limit | Flows | Aggr Mbps | spread | % of limit | drops % | CE % | RTT us | 10K Mbps | 10K P50 us | 10K P90 us | 10K P99 us | 1MB Mbps | 1MB P90 ms | 1MB P99 ms |"
	print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, f, ",")
		printf "| %s-%s | %sM | %s | %.0f | %s | %.1f | %.3f | %.2f | %.0f | %.1f | %.0f | %.0f | %.0f | %.1f | %.1f | %.1f |\n",
			f[2], name(f[1]), f[4], f[3], median(k, 6), spread(k, 6),
			median(k, 7), median(k, 8), median(k, 9), median(k, 10),
			median(k, 11), median(k, 12), median(k, 13), median(k, 14),
			median(k, 15), median(k, 16), median(k, 17)
	}
	print ""
	print "bpf_hbm as a ratio to htb and to fq+edt (same run; rate: higher is better, latency: lower is better):"
	print ""
	print "| CC | Limit | Flows | aggr vs htb | aggr vs fq+edt | 10K P99 vs htb | 10K P99 vs fq+edt | 1MB P99 vs htb | 1MB P99 vs fq+edt |"
	print "|---|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, f, ",")
		if (f[1] != "hbm") continue
		h = "htb," f[2] "," f[3] "," f[4]; e = "fqedt," f[2] "," f[3] "," f[4]
		printf "| %s | %sM | %s | %s | %s | %s | %s | %s | %s |\n", f[2], f[4], f[3],
			ratio(median(k, 6), median(h, 6)), ratio(median(k, 6), median(e, 6)),
			ratio(median(k, 14), median(h, 14)), ratio(median(k, 14), median(e, 14)),
			ratio(median(k, 17), median(h, 17)), ratio(median(k, 17), median(e, 17))
	}
}' "$csv"

[ -n "$cost" ] || exit 0
awk -F, "$stats"'
NR == 1 { next }
{
	k = $1 "," $2
	if (!(k in n)) order[++nk] = k
	if (!($2 in seen)) { seen[$2] = 1; fl[++nf] = $2 }
	if (!($1 in seena)) { seena[$1] = 1; ar[++na] = $1 }
	n[k]++; rx[k, n[k]] = $5
}
function median(k,   i, a) {
	for (i = 1; i <= n[k]; i++) a[i] = rx[k, i] + 0
	return median_of(a, n[k])
}
END {
	print ""
	print "Forwarding cost: 64-byte UDP frames, limit far above capacity; packets per second delivered to B (median), and as a ratio to fq (higher is better):"
	print ""
	printf "| Arrangement |"
	for (j = 1; j <= nf; j++) printf " %s flows pps | vs fq |", fl[j]
	print ""
	printf "|---|"
	for (j = 1; j <= nf; j++) printf "---|---|"
	print ""
	for (i = 1; i <= na; i++) {
		printf "| %s |", name(ar[i])
		for (j = 1; j <= nf; j++) {
			k = ar[i] "," fl[j]; f = "fq," fl[j]
			x = median(k); y = median(f)
			printf " %.0f | %s |", x, y ? sprintf("%.2f", x / y) : "-"
		}
		print ""
	}
}' "$cost"
