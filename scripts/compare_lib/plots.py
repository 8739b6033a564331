# SPDX-License-Identifier: GPL-2.0
"""compare: plots with gnuplot"""
import os
import subprocess
import sys
import tempfile
from .schema import headlines
from .stats import mean
from .read import read_histogram, run_file


def merged_histograms(runs):
    """{workload: {kernel: {(kind, order): {high_ns: count}}}}"""
    out = {}
    for name, workload, run in runs:
        lines = run_file(run, "histogram.txt")
        if lines is None:
            continue
        for key, buckets in read_histogram(lines).items():
            h = out.setdefault(workload, {}).setdefault(name, {}).setdefault(key, {})
            for _, high, count in buckets:
                h[high] = h.get(high, 0) + count
    return out


def gnuplot(script, cwd):
    try:
        subprocess.run(["gnuplot"], input=script.encode(), check=True,
                       cwd=cwd, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.stderr.write(f"compare: gnuplot failed, no plots: {e}\n")


def plot(runs, order, data, out, names=None):
    """PNG plots: probe-lateness CDF and allocation-latency histogram per
    kernel for each workload, and the headline metrics against the first
    kernel."""
    with tempfile.TemporaryDirectory() as tmp:
        plot_histograms(merged_histograms(runs), order, out, tmp)
        plot_headline(data, order, out, tmp, names or {})


def plot_histograms(hists, order, out, tmp):
    for workload, kernels in hists.items():
        keys = sorted({key for h in kernels.values() for key in h})
        for kind, order_ in keys:
            title = ("probe lateness CDF" if kind == "probe"
                     else f"order-{order_} allocation latency")
            stem = (f"{workload}-probe-cdf" if kind == "probe"
                    else f"{workload}-order{order_}-alloc-latency")
            plots = []
            for kernel in [k for k in order if k in kernels]:
                h = kernels[kernel].get((kind, order_))
                if not h:
                    continue
                total = sum(h.values())
                dat = f"{stem}-{kernel}.dat".replace("/", "_")
                seen = 0
                with open(os.path.join(tmp, dat), "w") as f:
                    for high in sorted(h):
                        seen += h[high]
                        y = seen / total if kind == "probe" else h[high] / total
                        f.write(f"{(high + 1) / 1000.0} {y}\n")
                plots.append(f"'{dat}' using 1:2 with linespoints title '{kernel}'")
            ylabel = "fraction of expiries at or below" if kind == "probe" \
                else "fraction of allocations"
            gnuplot(f"""set terminal png size 900,540 noenhanced
set output '{os.path.join(out, stem)}.png'
set title '{workload}: {title} (log2 buckets)'
set logscale x 2
set xlabel 'microseconds (bucket upper bound)'
set ylabel '{ylabel}'
set key bottom right
set grid
plot {", ".join(plots)}
""", tmp)


def plot_headline(data, order, out, tmp, names):
    """headline.png: one panel per workload, its headline metrics (the
    "# headline:" lines) as the mean of each kernel in % of the first"""
    panels = []
    for workload in sorted(data):
        kernels = [k for k in order if k in data[workload]]
        rows = []
        for metric, label in headlines(workload):
            base = data[workload][kernels[0]].get(metric)
            if not base or mean(base) == 0:
                continue
            rows.append((label, [mean(data[workload][k].get(metric, [0])) /
                                 mean(base) * 100 for k in kernels]))
        if rows:
            panels.append((workload, kernels, rows))
    if not panels:
        return
    cols = 2 if len(panels) > 1 else 1
    nrows = (len(panels) + cols - 1) // cols
    script = [f"set terminal png size {cols * 640},{nrows * 420} noenhanced",
              f"set output '{os.path.join(out, 'headline.png')}'",
              f"set multiplot layout {nrows},{cols}",
              "set style data histograms",
              "set style histogram clustered gap 1",
              "set style fill solid 0.8 border -1",
              "set xtics rotate by -25 font ',9'",
              "set bmargin 7", "set grid ytics", "set key top left font ',9'"]
    for i, (workload, kernels, rows) in enumerate(panels):
        name = f"headline-{i}.dat"
        with open(os.path.join(tmp, name), "w") as f:
            for label, vals in rows:
                f.write('"' + label.replace('"', "'") + '" ' +
                        " ".join(f"{v:.2f}" for v in vals) + "\n")
        plots = ", ".join(
            f"'{name}' using {j + 2}{':xtic(1)' if j == 0 else ''} title '{names.get(k, k)}'"
            for j, k in enumerate(kernels))
        top = max(v for _, vals in rows for v in vals)
        # a log scale where one bar would flatten the rest
        scale = (["set logscale y", "set yrange [1:*]"] if top > 400 else
                 ["unset logscale y", "set yrange [0:*]"])
        base = names.get(kernels[0], kernels[0])
        script += scale + [f"set title '{workload}: mean, % of {base}'",
                           f"set ylabel '% of {base}'", f"plot {plots}"]
    script.append("unset multiplot")
    gnuplot("\n".join(script) + "\n", tmp)
