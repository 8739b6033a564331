# SPDX-License-Identifier: GPL-2.0
"""compare: reading result sets: meta.json, metrics, histograms,
traces"""
import functools
import json
import os
import sys

# A run of a bench is a directory of files (iter-N/metrics.txt, ...); in
# an archived set it is one file, iter-N.txt, holding them all, each after
# a line "==> NAME <==" (scripts/bench-archive), since a directory and
# files of a few hundred bytes each take a disk block.
PACK_HEADER = ("==> ", " <==")


@functools.lru_cache(maxsize=None)
def read_pack(path):
    """{file name: [lines]} of an archived run"""
    files, lines = {}, None
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith(PACK_HEADER[0]) and line.endswith(PACK_HEADER[1]):
                name = line[len(PACK_HEADER[0]):-len(PACK_HEADER[1])]
                lines = files.setdefault(name, [])
            elif lines is not None:
                lines.append(line)
    return files


def run_file(run, name):
    """the lines of a run's file NAME, or None if the run has none"""
    if not os.path.isdir(run):
        return read_pack(run).get(name)
    path = os.path.join(run, name)
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return f.read().splitlines()


def read_metrics(lines):
    values = {}
    for line in lines:
        key, sep, value = line.partition(":")
        if not sep:
            continue
        try:
            values[key.strip()] = float(value.strip())
        except ValueError:
            pass
    return values


def read_tools(runs):
    """{workload: "tool version"} from the "tool:" lines of metrics.txt"""
    tools = {}
    for _, workload, run in runs:
        lines = None if workload in tools else run_file(run, "metrics.txt")
        for line in lines or []:
            if line.startswith("tool:"):
                tools[workload] = line.split(":", 1)[1].strip()
    return tools


# Frames of the scheduler itself, skipped when naming what a woken task
# waited for: the first frame after them is the code that rescheduled.
SCHED_FRAMES = ("__schedule", "schedule", "preempt_schedule",
                "__cond_resched", "_cond_resched", "__traceiter",
                "trace", "probe_wakeup", "_raw_", "ret_from_", "irqentry",
                "asm_", "sysvec_", "raw_irqentry", "preempt_schedule_irq",
                "__do_softirq", "irq_exit")


def read_wakeup(lines):
    """(latency_us, task switched from, first frame outside the scheduler
    at the switch) of a wakeup_rt tracer max trace"""
    latency, prev, frame = None, "?", "?"
    for line in lines:
        s = line.strip()
        if s.startswith("# latency:"):
            latency = float(s.split()[2])
        elif "==>" in s and prev == "?":
            prev = s.split()[0].rsplit("-", 1)[0]
        elif s.startswith("=> ") and frame == "?":
            name = s[3:].strip()
            if not name.startswith(SCHED_FRAMES):
                frame = name
    if latency is None:
        return None
    return latency, prev, frame


def load_wakeups(runs):
    """{workload: {kernel: [(latency, prev task, frame)]}} from wakeup.txt"""
    out = {}
    for name, workload, run in runs:
        lines = run_file(run, "wakeup.txt")
        entry = read_wakeup(lines) if lines is not None else None
        if entry:
            out.setdefault(workload, {}).setdefault(name, []).append(entry)
    return out


def read_irqsoff(lines):
    """(latency_us, "start..end", caller) of an irqsoff tracer max trace.

    The section's ends are often the out-of-line lock functions; the
    first stack frame after them names the code that held the lock."""
    latency, start, end, caller = None, "?", "?", "?"
    for line in lines:
        line = line.strip()
        if line.startswith("# latency:"):
            latency = float(line.split()[2])
        elif line.startswith("#  => started at:"):
            start = line.split(":", 1)[1].strip()
        elif line.startswith("#  => ended at:"):
            end = line.split(":", 1)[1].strip()
        elif line.startswith("=> ") and caller == "?":
            frame = line[3:].strip()
            if frame not in (start, end) and \
                    not frame.startswith(("_raw_", "trace")):
                caller = frame
    if latency is None:
        return None
    return latency, f"{start}..{end}", caller


def load_offenders(runs):
    """{workload: {kernel: [(latency, event, caller)]}} from irqsoff.txt"""
    out = {}
    for name, workload, run in runs:
        lines = run_file(run, "irqsoff.txt")
        entry = read_irqsoff(lines) if lines is not None else None
        if entry:
            out.setdefault(workload, {}).setdefault(name, []).append(entry)
    return out


def load_sections(runs):
    """{workload: {kernel: {"start..end": [max_usecs, count]}}, iterations}
    from irqs-off-sections.txt: every section over the workload's
    threshold, one "usecs start end" line each, or condensed by
    scripts/bench-archive to "max_usecs start end count" lines"""
    out, iterations = {}, {}
    for name, workload, run in runs:
        lines = run_file(run, "irqs-off-sections.txt")
        if lines is None:
            continue
        iterations[(workload, name)] = iterations.get((workload, name), 0) + 1
        groups = out.setdefault(workload, {}).setdefault(name, {})
        for line in lines:
            fields = line.split()
            usecs, start, end = float(fields[0]), fields[1], fields[2]
            count = int(fields[3]) if len(fields) > 3 else 1
            group = groups.setdefault(f"{start}..{end}", [0.0, 0])
            group[0] = max(group[0], usecs)
            group[1] += count
    return out, iterations


def read_histogram(lines):
    """{("probe", 0) or ("alloc", order): [(low_ns, high_ns, count)]}"""
    hist = {}
    for line in lines:
        if line.startswith("#"):
            continue
        kind, order, low, high, count = line.split()
        hist.setdefault((kind, int(order)), []).append(
            (int(low), int(high), int(count)))
    return hist


def percentile(buckets, fraction):
    """Upper bound of the log2 bucket holding the given fraction."""
    total = sum(c for _, _, c in buckets)
    seen = 0
    for _, high, count in sorted(buckets):
        seen += count
        if seen >= fraction * total:
            return high
    return 0


def histogram_metrics(lines):
    """p50/p99/p99.9 of probe lateness and allocation latency (bucket
    upper bounds, so within a factor of two)."""
    out = {}
    for (kind, order), buckets in read_histogram(lines).items():
        name = "probe_lateness" if kind == "probe" else f"order{order}_alloc_latency"
        for label, frac in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999)):
            out[f"{name}_{label}_ns"] = float(percentile(buckets, frac))
    return out


def load_runs(result_dirs):
    """-> meta list, kernel order, [(kernel, workload, run)]: a run is an
    iteration directory, or its archived file (read_pack)

    With several result directories, a kernel of a later one is named
    NAME@<directory name>."""
    metas, order, runs = [], [], []
    for index, rdir in enumerate(result_dirs):
        meta_path = os.path.join(rdir, "meta.json")
        if not os.path.isfile(meta_path):
            sys.exit(f"compare: {rdir} is not a result directory (no meta.json)")
        with open(meta_path) as f:
            meta = json.load(f)
        metas.append(meta)
        meta["dir"] = os.path.basename(os.path.normpath(rdir))
        suffix = "" if index == 0 else "@" + meta["dir"]
        for kernel in meta["kernels"]:
            name = kernel + suffix
            order.append(name)
            for workload in meta["workloads"]:
                wdir = os.path.join(rdir, kernel, workload)
                if os.path.isdir(wdir):
                    runs.extend((name, workload, os.path.join(wdir, it))
                                for it in sorted(os.listdir(wdir)))
    return metas, order, runs


# Sections that are the harness's, not the kernel's: under icount a vCPU
# that idles until its next timer shows a section of about a tick at
# interrupt entry in every period, whatever the kernel (thousands per
# rtlat run), and a request to the 9p root file system is served by QEMU
# while the vCPU waits with interrupts off.  The sections that matter are
# taken and given back by the code that disabled interrupts.
IRQ_ENTRY = ("sysvec_", "irqentry_", "asm_", "irq_exit", "p9_")


def sections_metrics(lines):
    """irqs_off_held_max_us: the longest IRQs-off section in
    irqs-off-sections.txt neither begun nor ended at interrupt entry or
    in the 9p client"""
    longest = 0.0
    for line in lines:
        fields = line.split()
        if len(fields) < 3 or fields[1].startswith(IRQ_ENTRY) or \
                fields[2].startswith(IRQ_ENTRY):
            continue
        longest = max(longest, float(fields[0]))
    return {"irqs_off_held_max_us": longest}


def load_metrics(runs):
    """{workload: {kernel: {metric: [values]}}} from metrics.txt, plus the
    percentiles of histogram.txt and the sections of
    irqs-off-sections.txt"""
    data = {}
    for name, workload, run in runs:
        lines = run_file(run, "metrics.txt")
        if lines is None:
            continue
        values = read_metrics(lines)
        lines = run_file(run, "histogram.txt")
        if lines is not None:
            values.update(histogram_metrics(lines))
        lines = run_file(run, "irqs-off-sections.txt")
        if lines is not None:
            values.update(sections_metrics(lines))
        for key, value in values.items():
            data.setdefault(workload, {}).setdefault(
                name, {}).setdefault(key, []).append(value)
    return data
