#!/usr/bin/env python3
"""PNG plots of the app's benchmarks (matplotlib):

  speedup_<graph>.png  greedy vertex moving: speed-up vs cores for every map
                       variant, one panel per platform, Broadcast solid and
                       Timestamp dashed (the MESH paper's Figures 6 and 7,
                       relative to 1-core DCM + Broadcast)
  quality_time.png     the multilevel search and the peers: Q vs time, one
                       panel per graph (compare.py's JSON)

  plot.py --greedy greedy.json --compare compare.json --out DIR

Each PNG is read back after it is written (a plot that does not decode is an
error), so a smoke run proves they render.
"""
import argparse
import json
import os
import statistics
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.image as mpimg
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot.py needs matplotlib: apt-get install python3-matplotlib (then run it with /usr/bin/python3) "
             "or pip install matplotlib")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import greedy_table  # noqa: E402


def saved(fig, path):
    fig.savefig(path, dpi=110)
    plt.close(fig)
    img = mpimg.imread(path)  # decodes the PNG: a broken file raises here
    if img.shape[0] < 100 or img.shape[1] < 100:
        sys.exit(f"{path}: only {img.shape[1]}x{img.shape[0]} pixels")
    print(f"wrote {path} ({img.shape[1]}x{img.shape[0]})")


def plot_greedy(path, out):
    data = greedy_table.load(path)
    for graph in sorted({k[0] for k in data}):
        platforms = [p for p in ("threads", "processes") if (graph, p, "dcm", "broadcast", 1) in data]
        fig, axes = plt.subplots(1, len(platforms), figsize=(5.5 * len(platforms), 4.2), squeeze=False)
        for ax, platform in zip(axes[0], platforms):
            base = data[(graph, platform, "dcm", "broadcast", 1)][0]
            cores = sorted({k[4] for k in data if k[0] == graph and k[1] == platform})
            for maps, colour in zip(("dcm", "ncm", "wt", "mix"), ("C3", "C0", "C2", "C1")):
                for ctl, style in (("broadcast", "-"), ("timestamp", "--")):
                    pts = [(c, base / data[(graph, platform, maps, ctl, c)][0]) for c in cores
                           if (graph, platform, maps, ctl, c) in data]
                    if pts:
                        ax.plot(*zip(*pts), style, color=colour, marker="o", label=f"{maps} {ctl}")
            over = [c for c in cores if any(data[k][2] for k in data if k[4] == c)]
            if over:
                ax.axvspan(min(over) - 0.5, max(cores) + 0.5, color="0.92", zorder=0)
                ax.text(min(over) - 0.4, ax.get_ylim()[1] * 0.95, "oversubscribed", fontsize=8, va="top")
            ax.set_title(f"{graph}, {platform}")
            ax.set_xlabel("cores")
            ax.set_ylabel("speed-up vs 1-core DCM + Broadcast")
            ax.set_xticks(cores)
            ax.grid(alpha=0.3)
        axes[0][-1].legend(fontsize=7, ncol=2)
        fig.tight_layout()
        saved(fig, os.path.join(out, f"speedup_{graph}.png"))


def plot_compare(path, out):
    doc = json.load(open(path))
    recs = doc["records"]
    graphs = []
    for r in recs:
        if r["graph"] not in graphs:
            graphs.append(r["graph"])
    tools = sorted({r["tool"] for r in recs}, key=lambda t: (t != "tacomesh", t))
    cols = 5
    rows = (len(graphs) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.8 * rows), squeeze=False)
    for i, graph in enumerate(graphs):
        ax = axes[i // cols][i % cols]
        for j, tool in enumerate(tools):
            rs = [r for r in recs if r["graph"] == graph and r["tool"] == tool]
            if not rs:
                continue
            t = [r["seconds"] * 1e3 for r in rs]
            q = [r["modularity"] for r in rs]
            ax.scatter(t, q, s=14, color=f"C{j}", label=tool, marker="*" if tool == "tacomesh" else "o")
            ax.scatter([statistics.median(t)], [statistics.median(q)], s=60, color=f"C{j}", edgecolors="k")
        ax.set_xscale("log")
        ax.set_title(graph, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for k in range(len(graphs), rows * cols):
        axes[k // cols][k % cols].axis("off")
    axes[0][0].set_ylabel("modularity Q")
    axes[-1][0].set_xlabel("time (ms, log)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(tools), fontsize=8)
    fig.suptitle(f"Q vs time per tool (tacomesh on {doc.get('cores', '?')} cores; big marker = median)")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    saved(fig, os.path.join(out, "quality_time.png"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--greedy", help="bench_greedy's JSON")
    ap.add_argument("--compare", help="compare.py's JSON")
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    if not (a.greedy or a.compare):
        ap.error("give --greedy and/or --compare")
    os.makedirs(a.out, exist_ok=True)
    if a.greedy:
        plot_greedy(a.greedy, a.out)
    if a.compare:
        plot_compare(a.compare, a.out)


if __name__ == "__main__":
    main()
