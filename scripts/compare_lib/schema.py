# SPDX-License-Identifier: GPL-2.0
"""compare: the metric schema: which way each metric is better, and the
headline metrics each workload shows"""
import functools
import os
import subprocess


LOWER = "lower"
HIGHER = "higher"
NEUTRAL = "neutral"

# Which way is better, by metric-name pattern (a substring, or with "^" a
# prefix); first match wins.
DIRECTIONS = [
    ("success_pct", HIGHER),
    ("_before", NEUTRAL),
    ("cache_mb_after", HIGHER),
    ("free_mb_after", NEUTRAL),
    ("churn_", HIGHER),
    ("thp_after_faults", NEUTRAL),
    ("thp_faults", HIGHER),
    ("thp_fault_rounds", NEUTRAL),
    ("thp_unmap_mb", NEUTRAL),
    ("order3_allocs", NEUTRAL),
    ("sched_lat_samples", NEUTRAL),
    ("_per_s", HIGHER),
    ("^pagealloc_", NEUTRAL),
    ("^pgalloc_", NEUTRAL),
    ("^pgfree", NEUTRAL),
    ("free_pages_order", HIGHER),
    ("compact_success", HIGHER),
    ("pgmigrate_success", NEUTRAL),
    ("thp_fault_alloc", HIGHER),
    ("successes", HIGHER),
    ("probe_samples", NEUTRAL),
    ("compact_daemon_wake", NEUTRAL),
    ("^frag_", NEUTRAL),
    ("compact_seconds", NEUTRAL),
    ("compact_migrate_scanned", NEUTRAL),
    ("compact_free_scanned", NEUTRAL),
    ("compact_isolated", NEUTRAL),
    ("_thresh_us", NEUTRAL),
    ("pcp_high", NEUTRAL),
    ("attempts", NEUTRAL),
    ("", LOWER),
]


def direction(metric):
    for pattern, way in DIRECTIONS:
        if (metric.startswith(pattern[1:]) if pattern.startswith("^")
                else pattern in metric):
            return way
    return LOWER


WORKLOADS = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "workloads")


# once per workload: a result set asks for each workload's headlines once
# per kernel and iteration, and the shell script costs tens of ms a call
@functools.lru_cache(maxsize=None)
def headlines(workload):
    """((metric, label), ...) of the workload's headline metrics, as
    scripts/workloads/run resolves its name (a base workload's "# headline:
    METRIC LABEL" lines, or the ones its variant picks); which way each is
    better is DIRECTIONS', declared once there"""
    out = subprocess.run([os.path.join(WORKLOADS, "run"), "--headlines", workload],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return ()
    return tuple((metric, label) for metric, _, label in
                 (line.strip().partition(" ") for line in out.stdout.splitlines()))
