# SPDX-License-Identifier: GPL-2.0
#
# awk functions bench/table.sh and bench/plot.sh share.

# The median of a[1..m]; sorts a in place (m is small: the repeats).
function median_of(a, m,   i, j, t) {
	if (!m)
		return 0
	for (i = 1; i <= m; i++)
		for (j = i + 1; j <= m; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}

# An arrangement's name in tables and plots.
function name(a) {
	return a == "hbm" ? "bpf_hbm" : a == "fqedt" ? "fq+edt" : \
		a == "none" ? "unshaped" : a == "floor" ? "bpf_floor" : a
}
