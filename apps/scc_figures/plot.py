#!/usr/bin/env python3
"""PNG plots of scc_figures' JSON beside the papers' figures.

    scc_figures --json > figures.json
    plot.py figures.json OUTDIR [--memory MEMORY.json] [--patents PATENTS.json]

(MEMORY.json: scc_figures --set memory --json, MESH Figures 4 and 5;
PATENTS.json: scc_figures --set patents --json, MESH Figure 7.)

The papers' own plots are not in the text we have, only the values their
text states; those are drawn as marks beside the modelled curves:
CCI paper (round trip ~2000 / ~3000 cycles; reduce at 48 cores 11000 /
14000, growing with log N), MESH paper Figure 6 (Mix 7 at 15 cores, WT 6
at 13-14, NCM flat from 12 on; Figure 4: flat to 3 readers of a
controller, then linear; Figure 5: 300 N + 7 500 cycles, 47 100 for 128
lines, 582 000 for the whole L2, 80 more a modified line), RDF paper
Figure 1 (LUBM 32.74 at 48).
"""
import json
import math
import os
import sys


def main():
    args = sys.argv[1:]
    extra = {}
    for flag in ("--memory", "--patents"):
        if flag in args:
            i = args.index(flag)
            if i + 1 >= len(args):
                sys.exit(f"plot.py: {flag} needs a file")
            extra[flag] = args[i + 1]
            del args[i:i + 2]
    if len(args) != 2:
        sys.exit("usage: plot.py FIGURES.json OUTDIR [--memory MEMORY.json] [--patents PATENTS.json]")
    try:
        import matplotlib
    except ImportError:
        sys.exit("plot.py needs matplotlib (Debian: apt-get install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(args[0]) as f:
        fig = json.load(f)
    out = args[1]
    os.makedirs(out, exist_ok=True)

    def cores(d):
        return sorted((int(k), v) for k, v in d.items())

    def finish(p, ax, xlabel, ylabel, title, name, legend_size=None):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.legend(fontsize=legend_size)
        p.tight_layout()
        p.savefig(os.path.join(out, name), dpi=100)

    # CCI Figure 2: round trip.
    p, ax = plt.subplots(figsize=(5, 3.5))
    modes = ["polling", "halting"]
    ax.bar([0, 2], [fig["round_trip_cycles"][m] for m in modes], label="modelled")
    ax.bar([0.8, 2.8], [2000, 3000], label="paper (text)", alpha=0.6)
    ax.set_xticks([0.4, 2.4], modes)
    ax.set_ylabel("cycles")
    ax.set_title("CCI Fig. 2: round trip of a sync call")
    ax.legend()
    p.tight_layout()
    p.savefig(os.path.join(out, "cci_fig2_round_trip.png"), dpi=100)

    # CCI Figure 4: reduce.
    p, ax = plt.subplots(figsize=(5, 3.5))
    xs, ys = zip(*cores(fig["reduce_cycles_polling"]))
    ax.plot(xs, ys, "o-", label="modelled, polling")
    ax.plot([48], [fig["reduce48_cycles"]["halting"]], "s", label="modelled, hlt")
    ax.plot([48], [11000], "x", ms=10, label="paper, polling")
    ax.plot([48], [14000], "+", ms=10, label="paper, hlt")
    ref = [11000 * math.log2(n) / math.log2(48) for n in xs]
    ax.plot(xs, ref, ":", label="paper's 11000 scaled by log2 N")
    finish(p, ax, "cores", "cycles", "CCI Fig. 4: reduce over N cores", "cci_fig4_reduce.png", 8)

    # MESH Figure 6: world trade.
    p, ax = plt.subplots(figsize=(6, 4))
    for v in ["dcm", "ncm", "wt", "mix"]:
        xs, ys = zip(*cores(fig["worldtrade_speedup"][v]))
        ax.plot(xs, ys, "o-", label="modelled " + v.upper())
    ax.plot([15], [7], "*", ms=14, label="paper: Mix 7 at 15")
    ax.plot([13.5], [6], "P", ms=10, label="paper: WT 6 at 13-14")
    finish(p, ax, "cores", "speed-up vs 1-core DCM", "MESH Fig. 6: world trade, 64 moves, Broadcast", "mesh_fig6_world_trade.png", 8)

    # RDF Figure 1: task-parallel.
    p, ax = plt.subplots(figsize=(5, 3.5))
    xs, ys = zip(*cores(fig["rdf_task_speedup"]))
    ax.plot(xs, ys, "o-", label="modelled, LUBM(1)")
    ax.plot(xs, [x - 1 if x > 1 else 1 for x in xs], ":", label="n - 1 workers")
    ax.plot([48], [32.74], "*", ms=14, label="paper: LUBM 32.74 at 48")
    finish(p, ax, "cores", "speed-up vs 1 core", "RDF Fig. 1: task-parallel queries", "rdf_fig1_task_parallel.png", 8)

    if "--memory" in extra:
        with open(extra["--memory"]) as f:
            mem = json.load(f)
        # MESH Figure 4: uncached reads.
        p, ax = plt.subplots(figsize=(5, 3.5))
        for k, label in (("one_controller", "one controller"), ("four_controllers", "spread over four")):
            xs, ys = zip(*cores(mem["mesh_fig4_read_cycles"][k]))
            ax.plot(xs, ys, "o-", label="modelled, " + label)
        one = mem["mesh_fig4_read_cycles"]["one_controller"]["1"]
        xs = list(range(1, 49))
        ax.plot(xs, [one * max(1, n / 3) for n in xs], ":", label="paper's shape: flat to 3, then linear")
        finish(p, ax, "concurrent readers", "cycles per uncached read", "MESH Fig. 4: controller contention",
               "mesh_fig4_contention.png", 8)
        # MESH Figure 5: the L2 flush.
        p, ax = plt.subplots(figsize=(5, 3.5))
        for k in ("clean", "modified"):
            xs, ys = zip(*cores(mem["mesh_fig5_flush_cycles"][k]))
            ax.plot(xs, ys, "o-", label="modelled, " + k)
        xs = [1, 128]
        ax.plot(xs, [300 * n + 7500 for n in xs], ":", label="paper: 300 N + 7 500")
        ax.plot([128], [47100], "x", ms=10, label="paper: 4 KB page, 47 100")
        finish(p, ax, "lines", "cycles", "MESH Fig. 5: L2 flush of N lines (whole: %d)" % mem["mesh_fig5_flush_cycles"]["whole_cache"],
               "mesh_fig5_flush.png", 8)

    if "--patents" in extra:
        with open(extra["--patents"]) as f:
            pat = json.load(f)
        p, ax = plt.subplots(figsize=(6, 4))
        for v in ["dcm", "ncm", "wt", "mix"]:
            xs, ys = zip(*cores(pat["patents_speedup"][v]))
            ax.plot(xs, ys, "o-", label="modelled " + v.upper())
        finish(p, ax, "cores", "speed-up vs 1-core DCM",
               "MESH Fig. 7 stand-in: %s, %d moves" % (pat["graph"], pat["moves"]), "mesh_fig7_patents.png", 8)


if __name__ == "__main__":
    main()
