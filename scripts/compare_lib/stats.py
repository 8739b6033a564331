# SPDX-License-Identifier: GPL-2.0
"""compare: statistics: mean, standard deviation, Welch's t-test,
change in percent"""
import math
import sys
import warnings
from .schema import LOWER


ALPHA = 0.05


def mean(xs):
    return sum(xs) / len(xs)


def stddev(xs):
    if len(xs) < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def welch_p(xs, ys):
    """Two-sided p-value of Welch's t-test (scipy's); None if it cannot be
    computed.  With no variance on either side scipy has no answer (NaN):
    equal means are then p = 1, different ones p = 0."""
    if len(xs) < 2 or len(ys) < 2:
        return None
    if stddev(xs) == 0 and stddev(ys) == 0:
        return 1.0 if mean(xs) == mean(ys) else 0.0
    try:
        from scipy import stats
    except ImportError:
        sys.exit("compare: needs python3-scipy (scripts/install-deps) and "
                 "Debian's python3, /usr/bin/python3")
    # nearly equal samples make scipy warn of precision loss; the p-value
    # it returns then is the one the test gives (checked to 1e-13 against
    # the incomplete-beta form this replaced, on every committed set)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_ind(xs, ys, equal_var=False).pvalue)


def gain_pct(base, new, way):
    """Change in percent, positive = better (NEUTRAL: plain change)."""
    if base == 0:
        return 0.0 if new == 0 else math.copysign(math.inf, new)
    change = (new - base) / abs(base) * 100
    return -change if way == LOWER else change
