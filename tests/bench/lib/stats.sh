# tests/bench/lib/stats.sh - the statistics the gated benchmarks share (sourced; not run by
# tests/bench/run, which runs tests/bench/*.sh only).

# interval TAIL: sorted ratios on stdin -> "N MEDIAN LO HI": LO and HI the order statistics
# that bound the median whatever the noise's distribution, with TAIL (0.025: 95%; 0.005: 99%)
# on each side (k-th smallest and k-th largest, k the largest with P(Binomial(N, 1/2) < k)
# <= TAIL); 0 and "inf" when N is too small for any.
interval() {
	awk -v tail="$1" '{a[NR] = $1}
	END {
		n = NR; p = 0.5 ^ n; c = 0; k = 0
		for (i = 0; i < n; i++) { c += p; if (c > tail) break; k = i + 1; p = p * (n - i) / (i + 1) }
		m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		if (k == 0) print n, m, 0, "inf"; else print n, m, a[k], a[n + 1 - k]
	}'
}

# median: numbers on stdin -> their median.
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
