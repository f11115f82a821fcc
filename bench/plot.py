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

Files of family "trsv" (bench_trsv) get their own layout (plot_trsv below): one row per
precision with the panels single trsv op=N, single trsv op=T, several right-hand sides and
batched; x = n (order of one system), colour = solver, line style = variant (LN solid,
LT dashed, UN dash-dot, UT dotted); the variable-order batched run is written into the
batched panel as text. Files of different families cannot be mixed in one plot.
"""
import argparse
import json
import lzma
import math
import os
import sys


def save_png(fig, out):
    """Save as a 256-colour palette PNG when Pillow is present (the plots are flat colours: about a
    third of the RGBA size, which keeps bench/results small enough for the device tool's 64 MiB carry)."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    fig.savefig(out, dpi=110)
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(out) as im:
        q = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    q.save(out, optimize=True)


def load(paths):
    runs = []
    for p in paths:
        try:
            with (lzma.open(p, "rt") if p.endswith(".xz") else open(p)) as f:  # (older results are stored xz-compressed)
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
    families = {run.get("family", "?") for _, run in runs}
    if "trsv" in families:
        if len(families) > 1:
            sys.exit("plot.py: cannot mix trsv results with other families (%s)" % ", ".join(sorted(families)))
        return plot_trsv(runs, args, plt)
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
    save_png(fig, out)
    print(out)


# ---------------------------------------------------------------- bench_trsv (family "trsv")
TRSV_STYLE = {"LN": "-", "LT": "--", "UN": "-.", "UT": ":"}
TRSV_COLOR = {"ours": "tab:red", "ours:sg_trsv_plan_solve": "tab:orange", "cublas:trsv": "tab:blue", "cublas:trsm": "tab:green",
              "cublas:trsmBatched": "tab:blue",
              # read-only references of the batched family (kind "read", dotted): no solve
              "read:triangle-sweep": "black", "read:rowsum": "tab:olive", "read:square-sweep": "silver"}
TRSV_RHS_COLOR = {("ours", 4): "tab:red", ("ours", 16): "darkred", ("cublas", 4): "tab:green",
                  ("cublas", 16): "darkgreen"}


def trsv_value(c, metric):
    v = c.get(metric)
    if v is None and metric == "ms" and isinstance(c.get("us"), (int, float)):
        v = c["us"] / 1000.0
    return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def plot_trsv(runs, args, plt):
    """One row per precision: single N | single T | nrhs | batched (panels without data are dropped)."""
    multi = len(runs) > 1
    wanted = [s for s in (args.solvers or "").split(",") if s]
    cols = [("single", ("LN", "UN"), "single system, op(A) = A (lower solid, upper dash-dot)"),
            ("single", ("LT", "UT"), "single system, op(A) = A^T (lower dashed, upper dotted)"),
            ("nrhs", ("LN", "LT", "UN", "UT"), "several right-hand sides (k columns)"),
            ("batched", ("LN", "LT", "UN", "UT"), "batched, one column per system")]
    # lines[(prec, col)][(label, color, style, thick)] -> [(n, y, pass)]; notes[prec] -> [text]
    lines, notes, titles = {}, {}, []
    for path, run in runs:
        tag = os.path.splitext(os.path.basename(path))[0] if multi else ""
        titles.append(f"trsv on {run.get('device') or '?'} ({(run.get('date') or '?')[:10]}, "
                      f"{(run.get('commit') or '?')[:10]}, copy {run.get('copy_gbps') or float('nan'):.0f} GB/s); "
                      f"floor = word*(n(n+1)/2 + 2n*nrhs) bytes per system")
        for c in run.get("cases", []):
            y = trsv_value(c, args.metric)
            solver, kind, var = c.get("solver", "?"), c.get("kind", "?"), c.get("variant", "?")
            if y is None or (wanted and not any(w in solver for w in wanted)):
                continue
            prec, fam = c.get("precision", "?"), c.get("family", "?")
            short = "ours" if kind == "ours" else solver.replace("(grouped)", "")
            if fam == "batched-var":  # one text line per (variant, file): "LN: ours 55.1, cublas:trsmBatched 4.2"
                bad = "" if c.get("pass", True) else " FAILED"
                line = notes.setdefault(prec, {}).setdefault((var, tag), [f"{var}{' @' + tag if multi else ''} "
                                                                          f"({c.get('nbatch')} systems):"])
                line.append(f"{short} {y:.3g}{bad}")
                continue
            for ci, (cfam, cvars, _) in enumerate(cols):
                if fam != cfam or var not in cvars:
                    continue
                if fam == "nrhs":
                    k = c.get("nrhs", 0)
                    label = f"{short} k={k} {var}"
                    color = TRSV_RHS_COLOR.get(("ours" if kind == "ours" else "cublas", k), "gray")
                else:
                    label = f"{short} {var}"
                    color = TRSV_COLOR.get(short, "gray")
                if multi:
                    label += f" @{tag}"
                key = (label, color, ":" if kind == "read" else TRSV_STYLE.get(var, "-"), kind == "ours")
                lines.setdefault((prec, ci), {}).setdefault(key, []).append((c.get("n"), y, bool(c.get("pass", True))))
    if not lines and not notes:
        sys.exit("plot.py: no trsv cases with a finite '%s' in %s" % (args.metric, ", ".join(args.json)))

    precs = sorted({p for p, _ in lines} | set(notes), key=lambda p: (p != "fp64", p))
    used = sorted({ci for _, ci in lines} | ({3} if notes else set()))
    nrow, ncol = len(precs), len(used)
    fig, axes = plt.subplots(nrow, ncol, figsize=(max(7.0 * ncol, 12.0), 5.2 * nrow), squeeze=False)
    ylabel = {"pct_copy": "% of device-to-device copy bandwidth (byte floor)",
              "gbps": "GB/s against the byte floor", "us": "time per call (us)", "ms": "time per call (ms)"}.get(
        args.metric, args.metric)
    for r, prec in enumerate(precs):
        for cc, ci in enumerate(used):
            ax = axes[r][cc]
            for (label, color, style, thick), pts in sorted(lines.get((prec, ci), {}).items()):
                pts.sort()
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, color=color, linestyle=style,
                        linewidth=2.2 if thick else 1.1, marker="o" if thick else "^", markersize=4 if thick else 3)
                bad = [p for p in pts if not p[2]]
                if bad:
                    ax.plot([b[0] for b in bad], [b[1] for b in bad], "x", color=color, markersize=9, markeredgewidth=2)
            ax.set_xscale("log", base=2)
            if args.metric in ("us", "ms") or (ci < 2 and args.metric in ("pct_copy", "gbps")):
                ax.set_yscale("log")  # single systems: the targets span ~1 % (small n) to 85 % (large n)
            if args.metric == "pct_copy":
                ax.axhline(100, color="gray", linewidth=0.8)
                if ci < 2:
                    ax.axhline(85, color="gray", linewidth=0.8, linestyle="--")  # the target at n >= 16384
            if ci == 3 and notes.get(prec):
                text = "\n".join(" ".join(v[:1]) + " " + ", ".join(v[1:]) for _, v in sorted(notes[prec].items()))
                ax.text(0.01, 0.99, f"random orders 1..512 ({args.metric}):\n" + text, transform=ax.transAxes, fontsize=6.5,
                        va="top", ha="left", bbox=dict(facecolor="white", alpha=0.8, edgecolor="lightgray"))
            ax.set_xlabel("n (order of one system)")
            ax.set_ylabel(ylabel)
            ax.set_title(f"{prec}: {cols[ci][2]}", fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=6.5, loc="lower right" if ci < 2 else "best")
    fig.suptitle("\n".join(titles) + "\n(x = failed verification; dashed gray = 85% target)", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.03 * (len(titles) + 1) / nrow))
    out = args.out or os.path.splitext(args.json[0])[0] + ".png"
    save_png(fig, out)
    print(out)


if __name__ == "__main__":
    main()
