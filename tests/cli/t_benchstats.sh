#!/usr/bin/env bash
# make bench's shared statistics (tests/bench/lib): the sign test's interval for a median, and
# what a reader is shown when too few rounds ran for one: how many it takes, never "0.00-inf".
. "$(dirname "$0")/lib.sh"
plan 4
lib=$top/tests/bench/lib
py() { (cd "$lib" && python3 -c "from stats import interval, interval_words; $1"); }

is "$(py 'print(interval([1, 2, 3, 4, 5, 6, 7]))')" "(1, 7)" \
	"7 rounds: the 95% interval is their range"
is "$(py 'r=[0.8, 0.9, 0.85, 0.88, 0.87]; lo, hi = interval(r); print(interval_words(lo, hi, len(r)))')" \
	"no 95% interval: it takes 6 rounds, 5 ran" "5 rounds: no interval, and it says how many it takes"
is "$(py 'r=[1, 2, 3, 4, 5, 6]; lo, hi = interval(r); print(interval_words(lo, hi, len(r)))')" \
	"95% interval 1.00-6.00" "6 rounds: an interval"
. "$lib/stats.sh"
is "$(printf '%s\n' 1 2 3 4 5 | interval 0.025)" "5 3 0 inf" \
	"stats.sh: 5 ratios bound no median at 95% (the callers print that, not 0-inf)"
