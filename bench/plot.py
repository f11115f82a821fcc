#!/usr/bin/env python3
"""Plot StructGPU benchmark JSON (bench/results/<family>-<device>-<date>.json) as a PNG.

    python3 bench/plot.py bench/results/X.json [Y.json ...] -o bench/results/X.png

Generic over families: every case with a finite `pct_copy` (percent of the measured
device-to-device copy bandwidth, against the family's byte floor) is drawn. One panel per
(case family, precision); x = m for batch-like families, x = n_total for families whose
cases all have nbatch == 1 (single systems); one line per (solver, layout), solid for
contiguous / dashed for interleaved; ours thick, libraries thin, host (LAPACK) dotted.
Failed cases (pass == false) are drawn as crosses so they are not mistaken for results.
With several files, the line label carries the file name.
"""
import argparse
import json
import math
import os
import sys


def load(paths):
    runs = []
    for p in paths:
        try:
            with open(p) as f:
                runs.append((p, json.load(f)))
        except (OSError, ValueError) as e:
            sys.exit(f"plot.py: cannot read {p}: {e}")
    return runs


def series_style(kind, layout):
    ls = "--" if layout == "interleaved" else "-"
    if kind == "ours":
        return dict(linestyle=ls, linewidth=2.2, marker="o", markersize=4)
    if kind == "lapack":
        return dict(linestyle=":", linewidth=1.2, marker="s", markersize=3)
    return dict(linestyle=ls, linewidth=1.0, marker="^", markersize=3)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+", help="result files written by a bench_* program")
    ap.add_argument("-o", "--out", help="PNG to write (default: first JSON with .png)")
    ap.add_argument("--metric", default="pct_copy", help="case field on the y axis (default pct_copy; e.g. gbps, ms)")
    ap.add_argument("--solvers", help="comma-separated substrings: only solvers matching one of them")
    args = ap.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = load(args.json)
    multi = len(runs) > 1
    wanted = [s for s in (args.solvers or "").split(",") if s]

    # panels[(family, precision)] -> {(label, kind, layout): [(x, y, pass)]}
    panels = {}
    titles = []
    for path, run in runs:
        tag = run.get("device") or "?"
        if multi:  # the file name keeps runs on the same device apart
            tag = os.path.splitext(os.path.basename(path))[0]
        titles.append(f"{run.get('family', '?')} on {run.get('device') or '?'} ({run.get('date', '?')[:10]}, "
                      f"{(run.get('commit') or '?')[:10]}, copy {run.get('copy_gbps') or float('nan'):.0f} GB/s)")
        cases = [c for c in run.get("cases", []) if isinstance(c.get(args.metric), (int, float))
                 and math.isfinite(c[args.metric])]
        groups = {}
        for c in cases:
            groups.setdefault((c.get("family", "?"), c.get("precision", "?")), []).append(c)
        for key, cs in groups.items():
            single = all(c.get("nbatch", 1) == 1 for c in cs)
            panel = panels.setdefault(key, {"single": single, "lines": {}})
            for c in cs:
                solver = c.get("solver", "?")
                if wanted and not any(w in solver for w in wanted):
                    continue
                label = solver + ("" if single else f" [{c.get('layout', '?')[:3]}]") + (f" @{tag}" if multi else "")
                x = c.get("n_total", c.get("m")) if single else c.get("m")
                panel["lines"].setdefault((label, c.get("kind", ""), c.get("layout", "")), []).append(
                    (x, c[args.metric], bool(c.get("pass", True))))

    if not panels:
        sys.exit("plot.py: no cases with a finite '%s' in %s" % (args.metric, ", ".join(args.json)))

    keys = sorted(panels, key=lambda k: (panels[k]["single"], k[0], k[1]))
    ncol = 2 if len(keys) > 1 else 1
    nrow = (len(keys) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(11.5 * ncol, 5.5 * nrow), squeeze=False)
    ylabel = {"pct_copy": "% of device-to-device copy bandwidth (byte floor)",
              "gbps": "GB/s against the byte floor", "ms": "time (ms)"}.get(args.metric, args.metric)
    # one colour per solver (and file), shared by its layouts: layout shows as line style
    names = sorted({lab.split(" [")[0] + lab.split("]")[-1] if " [" in lab else lab
                    for p in panels.values() for (lab, _, _) in p["lines"]})
    cmap = plt.get_cmap("tab20")
    color = {n: cmap(i % 20) for i, n in enumerate(names)}
    for ax, key in zip(axes.flat, keys):
        panel = panels[key]
        for (label, kind, layout), pts in sorted(panel["lines"].items()):
            base = label.split(" [")[0] + label.split("]")[-1] if " [" in label else label
            pts.sort()
            xs = [p[0] for p in pts]
            ys = [p[1] for p in pts]
            line, = ax.plot(xs, ys, label=label, color=color[base], **series_style(kind, layout))
            bad = [(p[0], p[1]) for p in pts if not p[2]]
            if bad:
                ax.plot([b[0] for b in bad], [b[1] for b in bad], "x", color=line.get_color(), markersize=9,
                        markeredgewidth=2)
        ax.set_xscale("log", base=2)
        if args.metric == "ms":
            ax.set_yscale("log")
        if args.metric == "pct_copy":
            ax.axhline(100, color="gray", linewidth=0.8)
        ax.set_xlabel("N = unknowns of one system" if panel["single"] else "m = unknowns per system (fixed total N)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{key[0]}, {key[1]}" + (" (single system)" if panel["single"] else " (batch)"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    for ax in list(axes.flat)[len(keys):]:
        ax.set_visible(False)
    fig.suptitle("\n".join(titles) + "\n(x = failed verification)", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.035 * (len(titles) + 1) / nrow))
    out = args.out or os.path.splitext(args.json[0])[0] + ".png"
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
