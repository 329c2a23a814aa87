"""tests/bench/lib/stats.py - lib/stats.sh's interval for the benchmarks' Python parts."""


def interval(rs, tail=0.025):
    """The sign test's order statistics that bound the median of rs whatever the noise: the
    k-th smallest and largest, k the largest with P(Binomial(n, 1/2) < k) <= tail (0.025 a
    side: 95%); (0, inf) when n is too small for any."""
    rs = sorted(rs)
    n, c, k, p = len(rs), 0.0, 0, 0.5 ** len(rs)
    for i in range(n):
        c += p
        if c > tail:
            break
        k, p = i + 1, p * (n - i) / (i + 1)
    return (rs[k - 1], rs[n - k]) if k else (0.0, float("inf"))


def interval_words(lo, hi, n, what="rounds", fmt="%.2f"):
    """interval()'s bounds as a reader should see them: "95% interval LO-HI", or, when n is
    too small for any (fewer than 6), how many it takes, never "0.00-inf"."""
    if hi == float("inf") or hi is None:
        return "no 95%% interval: it takes 6 %s, %d ran" % (what, n)
    return ("95%% interval " + fmt + "-" + fmt) % (lo, hi)
