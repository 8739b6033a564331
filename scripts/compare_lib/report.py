# SPDX-License-Identifier: GPL-2.0
"""compare: rendering: the full report, the summary tables, the
offenders"""
import os
import sys
from .schema import direction, headlines
from .stats import ALPHA, mean, stddev, welch_p, gain_pct


def render_wakeups(wakeups, order):
    """The longest wakeup latency of the SCHED_FIFO thread per iteration,
    grouped by the task it waited for and where that task rescheduled."""
    lines = []
    for workload in sorted(wakeups):
        lines.append(f"== {workload}: longest wakeup latency of the "
                     "highest-priority task per iteration (wakeup_rt "
                     "tracer): the task it waited for, and where that "
                     "task gave up the CPU")
        for kernel in [k for k in order if k in wakeups[workload]]:
            groups = {}
            for latency, prev, frame in wakeups[workload][kernel]:
                groups.setdefault((prev, frame), []).append(latency)
            lines.append(f"  {kernel}:")
            for (prev, frame), lats in sorted(groups.items(),
                                              key=lambda g: -max(g[1])):
                lines.append(f"    {prev} at {frame}: max {max(lats):.0f} us, "
                             f"mean {mean(lats):.0f} us, count {len(lats)}")
        lines.append("")
    return "\n".join(lines) + "\n" if lines else ""


def render_offenders(offenders, order):
    """The longest IRQs-off section of each iteration, grouped by where it
    was: "Event start..end (caller)  max us  count"."""
    lines = []
    for workload in sorted(offenders):
        lines.append(f"== {workload}: longest IRQs-off section per iteration "
                     "(irqsoff tracer)")
        for kernel in [k for k in order if k in offenders[workload]]:
            groups = {}
            for latency, event, caller in offenders[workload][kernel]:
                groups.setdefault((event, caller), []).append(latency)
            lines.append(f"  {kernel}:")
            for (event, caller), lats in sorted(
                    groups.items(), key=lambda g: -max(g[1])):
                lines.append(f"    Event {event} via {caller}: max "
                             f"{max(lats):.0f} us, mean {mean(lats):.0f} us, "
                             f"count {len(lats)}")
        lines.append("")
    return "\n".join(lines) + "\n"


def render_sections(sections, iterations, order, top=8):
    """Every IRQs-off section over the threshold, whole runs: the seeds'
    "Event start..end  max us  count" table, longest first."""
    lines = []
    for workload in sorted(sections):
        lines.append(f"== {workload}: IRQs-off sections over the threshold, "
                     "all iterations (preemptirq events; ends are the "
                     "callers of the irq disable/enable)")
        for kernel in [k for k in order if k in sections[workload]]:
            groups = sections[workload][kernel]
            total = sum(count for _, count in groups.values())
            lines.append(f"  {kernel}: {total} sections in "
                         f"{iterations[(workload, kernel)]} iterations")
            for event, (longest, count) in sorted(
                    groups.items(), key=lambda g: (-g[1][0], g[0]))[:top]:
                lines.append(f"    Event {event} {longest:.0f} us "
                             f"count {count}")
        lines.append("")
    return "\n".join(lines) + "\n" if lines else ""


def build_rows(data, order):
    """One row per workload, metric and kernel: n, mean, stddev, min, max,
    direction, change against the first kernel in percent (positive =
    better), Welch's p and whether it is significant"""
    rows = []
    for workload in sorted(data):
        kernels = [k for k in order if k in data[workload]]
        base = kernels[0]
        for metric in sorted({m for k in kernels for m in data[workload][k]}):
            bxs = data[workload][base].get(metric)
            if not bxs:
                continue
            way = direction(metric)
            for k in kernels:
                xs = data[workload][k].get(metric)
                if not xs:
                    continue
                p = welch_p(bxs, xs) if k != base else None
                rows.append({
                    "workload": workload, "metric": metric,
                    "kernel": k, "n": len(xs), "mean": mean(xs),
                    "stddev": stddev(xs), "min": min(xs),
                    "max": max(xs), "better": way,
                    "change_pct": round(gain_pct(mean(bxs), mean(xs), way), 4),
                    "p_value": None if p is None else round(p, 6),
                    "significant": p is not None and p < ALPHA})
    return rows


def render_header(metas, tools):
    lines = ["compaction-latency benchmark report"]
    for m in metas:
        phases = m.get("phase_seconds")
        if isinstance(phases, dict):    # a merged set (scripts/bench-merge)
            phases = ", timed phases " + ", ".join(
                f"{w} {s} s" for w, s in phases.items() if s is not None)
        else:
            phases = (f", timed phases {phases} s" if phases is not None
                      else "")
        lines.append(f"  run {m['started']}: {m['iterations']} iterations, "
                     f"profile {m['profile']}{phases}, host {m['host_cpus']} CPUs / "
                     f"{m['host_mem_gb']} GiB")
        accels = m["accelerator"]
        if isinstance(accels, str):
            accels = {w: accels for w in m["workloads"]}
        for workload, accel in accels.items():
            tool = (tools or {}).get(workload)
            lines.append(f"    {workload}: {accel}" +
                         (f"; client: {tool}" if tool else ""))
        if m.get("icount_runs_at_once", 1) > 1:
            lines.append(f"    icount runs {m['icount_runs_at_once']} at once, "
                         "each on its own host CPU")
    if any("TCG" in str(m["accelerator"]) for m in metas):
        lines.append("  TCG: absolute times are emulated-guest times, comparable "
                     "only within one run; under multi-threaded TCG they carry "
                     "host noise, under icount they do not.")
    lines.append("  % is the change against the first column, positive = better; "
                 f"*x%* = significant (Welch's t-test, p < {ALPHA}).")
    lines.append("")
    return lines


def render_rows(rows, order):
    """The MMTests-style table of build_rows(): per workload and metric,
    Amean (with the change), Stddev, Min and Max, one column per kernel"""
    lines = []
    by_workload = {}
    for r in rows:
        by_workload.setdefault(r["workload"], {}).setdefault(
            r["metric"], {})[r["kernel"]] = r
    for workload in sorted(by_workload):
        metrics = by_workload[workload]
        kernels = [k for k in order if any(k in m for m in metrics.values())]
        base = kernels[0]
        lines.append(f"== {workload}")
        header = f"{'':8s}{'':34s}" + "".join(f"{k:>24s}" for k in kernels)
        for i, metric in enumerate(sorted(metrics)):
            cells = metrics[metric]
            way = cells[base]["better"]
            lines.append("")
            lines.append(header if i == 0 else "")
            for label, key in (("Amean", "mean"), ("Stddev", "stddev"),
                               ("Min", "min"), ("Max", "max")):
                out = []
                for k in kernels:
                    r = cells.get(k)
                    if not r:
                        out.append(f"{'-':>24s}")
                    elif label != "Amean":
                        out.append(f"{r[key]:14.2f}{'':10s}")
                    elif k == base:
                        out.append(f"{r['mean']:14.2f} ({0:7.2f}%)")
                    else:
                        o, c = ("*", "*") if r["significant"] else ("(", ")")
                        out.append(f"{r['mean']:14.2f} {o}{r['change_pct']:7.2f}%{c}")
                name = f"{metric} ({way})" if label == "Amean" else ""
                lines.append(f"{label:8s}{name:34s}" + "".join(out))
        lines.append("")
    return lines


def render(metas, data, order, tools=None):
    """(report text, rows)"""
    rows = build_rows(data, order)
    return "\n".join(render_header(metas, tools) + render_rows(rows, order)) + "\n", rows


SERIES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "..", "patches")


def current_series(tree):
    """the patch files of patches/TREE/series, in order; None if none"""
    try:
        with open(os.path.join(SERIES_DIR, tree, "series")) as f:
            return [line.strip() for line in f
                    if line.strip() and not line.startswith("#")]
    except OSError:
        return None


def is_prefix(patches, tree):
    """whether meta.json's patch list ("FILE sha256:... diff:...") is the
    first N patches of TREE's series as it is now (by file name), or,
    for a tree without one, files numbered 0001 to N in order"""
    files = [entry.split()[0] for entry in patches]
    series = current_series(tree)
    if series is not None:
        return files == series[:len(files)]
    numbers = [f.split("-", 1)[0] for f in files]
    return numbers == [f"{i:04d}" for i in range(1, len(files) + 1)]


def display_names(metas, order):
    """{kernel: name in the summary}: vanilla, +1, +1..N by the patches
    meta.json lists for it when they are the series' first N (is_prefix),
    else the kernel's own name, as are kernels that would share a name;
    keeping an @<directory> suffix"""
    names, own = {}, {}
    for kernel in order:
        base, at, suffix = kernel.partition("@")
        # a kernel of another base, BASE:VARIANT, is shown as "BASE NAME"
        tree, colon, variant = base.rpartition(":")
        index = 0
        if at:
            index = next((i for i, m in enumerate(metas)
                          if m.get("dir") == suffix), 0)
        patches = metas[index].get("series", {}).get(base)
        if patches is None:
            name = base
        elif not patches:
            name = "vanilla"
        elif not is_prefix(patches, tree):
            name = variant
        elif len(patches) == 1:
            name = "+1"
        else:
            name = f"+1..{len(patches)}"
        if colon and patches is not None:
            name = f"{tree} {name}"
            own[kernel] = f"{tree} {variant}" + (at + suffix if at else "")
        names[kernel] = name + (at + suffix if at else "")
    shown = list(names.values())
    for kernel, name in names.items():
        if shown.count(name) > 1 and kernel in own:
            names[kernel] = own[kernel]
    return names


def fmt_pair(m, sd):
    """mean +- stddev as the tables show them: whole numbers above 1000
    or where both are whole, else 2 decimals"""
    if abs(m) >= 1000 or (m == int(m) and sd == int(sd)):
        return f"{m:.0f} +- {sd:.0f}"
    return f"{m:.2f} +- {sd:.2f}"


def summary_rows(data, order, workload):
    """(runs, kernels, [(label, [(mean, stddev, p) per kernel])]) of the
    workload's headline metrics"""
    kernels = [k for k in order if k in data.get(workload, {})]
    rows, runs = [], set()
    for metric, label in headlines(workload):
        series = [data[workload][k].get(metric) for k in kernels]
        if not kernels or not series[0]:
            continue
        cells = []
        for k, xs in zip(kernels, series):
            if not xs:
                cells.append(None)
                continue
            runs.add(len(xs))
            p = welch_p(series[0], xs) if k != kernels[0] else None
            cells.append((mean(xs), stddev(xs), p))
        rows.append((label, cells))
    return runs, kernels, rows


def render_summary(metas, data, order, workloads):
    """The headline tables, one per workload, as the README and the cover
    letter show them: columns as narrow as their cells"""
    names = display_names(metas, order)
    out = []
    for workload in workloads:
        runs, kernels, rows = summary_rows(data, order, workload)
        if not rows:
            continue
        n = "-".join(str(r) for r in sorted(runs)[::max(1, len(runs) - 1)])
        title = f"{workload} ({n} runs each)"
        cells = [[None if c is None else fmt_pair(c[0], c[1]) for c in r[1]]
                 for r in rows]
        width = max(len(r[0]) for r in rows) + 1
        cols = [max([len(names[k])] + [len(c[i] or "-") for c in cells]) + 2
                for i, k in enumerate(kernels)]
        # a long title goes on a line of its own, to keep within 75 columns
        # (73 here: changelogs and the README indent the table by two)
        line_width = (max(width, len(title) + 1) + sum(cols)
                      + 8 * (len(kernels) - 1))
        if (len(title) >= width + cols[0] - len(names[kernels[0]]) or
                line_width > 73):
            out.append(title)
            title = ""
        width = max(width, len(title) + 1)
        head = f"{title:<{width}s}"
        for i, k in enumerate(kernels):
            head += f"{names[k]:>{cols[i]}s}" + (f"{'p':>8s}" if i else "")
        out.append(head.rstrip())
        for (label, stats), texts in zip(rows, cells):
            line = f"{label:<{width}s}"
            for i, (cell, text) in enumerate(zip(stats, texts)):
                line += f"{text or '-':>{cols[i]}s}"
                if not i:
                    continue
                p = cell[2] if cell else None
                star = "*" if p is not None and p < ALPHA else " "
                line += f"{p:7.3f}{star}" if p is not None else f"{'-':>7s} "
            out.append(line.rstrip())
        out.append("")
    if out:
        out.append(f"mean +- stddev; p: Welch's t-test against {names[order[0]]}, "
                   f"* p < {ALPHA}")
    return "\n".join(out) + "\n"


def workload_columns(metas, data, order, kernel, workloads):
    """--workload-columns: one table of KERNEL's runs whose columns are
    the workloads (variants of one workload, as a sysctl set otherwise),
    the first the baseline, with the first workload's headline metrics"""
    if kernel not in order:
        sys.exit(f"compare: no kernel '{kernel}' in the result directories")
    table = {}
    for w in workloads:
        if kernel not in data.get(w, {}):
            sys.exit(f"compare: no runs of workload '{w}' on kernel '{kernel}'")
        table[w] = data[w][kernel]
    name = display_names(metas, [kernel])[kernel]
    return (f"kernel {name}, by workload:\n" +
            render_summary(metas, {workloads[0]: table}, workloads,
                           [workloads[0]]))
