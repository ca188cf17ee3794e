#!/usr/bin/env python3
"""Plot scaling.py's JSON: time and peak memory against edges, log-log.

Two panels, one line per tool through its value at each graph size: the
clustering time (median over the seeds, the small dots are the single runs)
and the peak resident memory (the largest over the seeds; what each tool's
peak includes: scaling.py's docstring). A dotted grey line through
tacomesh's smallest graph grows in proportion to the edges: a tool's line
parallel to it scales linearly, a steeper one worse. Needs matplotlib
(Debian's python3-matplotlib, so run it with /usr/bin/python3 where the
peers' Python has none); the PNG is read back after it is written, as
plot.py's are.

  plot_scaling.py scaling.json --out scaling.png
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402  (matplotlib with the Agg backend, and plot.saved)

plt = plot.plt
MIB = 2**20


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", help="scaling.py's --json output")
    ap.add_argument("--out", required=True, help="the PNG to write")
    args = ap.parse_args()
    with open(args.json) as f:
        doc = json.load(f)
    records = doc["records"]
    if not records:
        sys.exit(f"{args.json}: no runs")
    tools = sorted({r["tool"] for r in records}, key=lambda t: (t != "tacomesh", t))

    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4.3))
    lines = {}  # tool -> (edges, median seconds, peak MiB), by graph size
    for j, tool in enumerate(tools):
        runs = {}
        for r in records:
            if r["tool"] == tool:
                runs.setdefault(r["m"], []).append(r)
        ms = sorted(runs)
        lines[tool] = (ms, [statistics.median(r["seconds"] for r in runs[m]) for m in ms],
                       [max(r["peak_rss_bytes"] for r in runs[m]) / MIB for m in ms])
        style = {"color": f"C{j}", "marker": "*" if tool == "tacomesh" else "o", "label": tool}
        ax_t.plot(ms, lines[tool][1], **style)
        ax_t.scatter([r["m"] for m in ms for r in runs[m]], [r["seconds"] for m in ms for r in runs[m]],
                     s=6, color=f"C{j}")
        ax_m.plot(ms, lines[tool][2], **style)
    ms, secs, mib = lines["tacomesh"]
    for ax, y0 in ((ax_t, secs[0]), (ax_m, mib[0])):
        ax.plot(ms, [y0 * m / ms[0] for m in ms], ":", color="0.6", label="∝ edges")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("undirected edges m")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    ax_t.set_ylabel("clustering time (s)")
    ax_m.set_ylabel("peak resident memory (MiB)")
    ax_t.set_title("time: median over seeds", fontsize=10)
    ax_m.set_title("peak memory (peers: during the clustering call)", fontsize=10)
    threads = {"tacomesh": f"{doc['cores']} cores", "igraph-leiden": "1 thread", "networkit-plm": "2 threads"}
    fig.suptitle(f"{doc['family'].upper()} graphs; " + ", ".join(f"{t} on {threads[t]}" for t in tools), fontsize=10)
    fig.tight_layout()
    plot.saved(fig, args.out)


if __name__ == "__main__":
    main()
