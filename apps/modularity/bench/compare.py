#!/usr/bin/env python3
"""tacomesh-cluster's multilevel search against the peers, in the same run.

For every graph (peers.py reads them) and every seed, each tool runs once, in
turn, so that the host's slow and fast phases fall on all tools alike:

  tacomesh            tacomesh-cluster --json --seed s --cores C GRAPH (the
                      time it reports: the clustering alone, cores already
                      started and the graph in MESH, as the peers' times
                      exclude building their graph objects)
  igraph-leiden       community_leiden(..., n_iterations=2), igraph's default
  igraph-leiden-stable  community_leiden(..., n_iterations=-1): iterate until
                      the partition is stable (the quality the graphs README
                      lists for Leiden)
  igraph-louvain, networkx-louvain, networkit-plm   as in peers.py

Every Q is computed by igraph from the returned membership. Where the data
directory holds NAME.communities (a planted or known community id per vertex,
one a line: make_graphs.py writes them for LFR graphs), every run's NMI
against it too (igraph's compare_communities). tacomesh-cluster's peak
resident memory is what it reports, its process's VmHWM (the whole run,
reading the file included; wait4's ru_maxrss would add this script's own
60 MB, which the child holds until its exec); the peers run inside this
script, so theirs is not measured. Writes JSON records {graph, n, m, tool, seed, modularity, seconds,
nmi?, peak_rss_bytes?} (with --memory-cores K, one more per graph, tool
"tacomesh-memory": a run on K cores for its peak) and prints a markdown table of medians, with
tacomesh's ratios to igraph Leiden (time) and its Q minus Leiden's, then,
where there is something to say, one of NMI and memory per edge.

  compare.py --cluster build/apps/modularity/tacomesh-cluster --json out.json
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import peers


def prep_leiden_stable(n, edges, weights, ig):
    w = list(weights)

    def run(seed):
        random.seed(seed)
        t0 = time.perf_counter()
        c = ig.community_leiden(objective_function="modularity", weights=w, n_iterations=-1)
        return c.membership, time.perf_counter() - t0

    return run


def run_tacomesh(binary, path, seed, cores, extra=(), timeout=600):
    """(membership, report) of one tacomesh-cluster run: its --output and its --json object."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as out:
        cmd = [binary, "--json", "--quiet", "--seed", str(seed), "--cores", str(cores), "--output", out.name]
        res = subprocess.run(cmd + list(extra) + [path], capture_output=True, text=True, timeout=timeout)
        if res.returncode != 0:
            sys.exit(f"tacomesh-cluster failed on {path}: {res.stderr}")
        return [int(x) for x in out.read().split()], json.loads(res.stdout)


def prep_tacomesh(binary, path, cores, extra):
    def run(seed):
        membership, report = run_tacomesh(binary, path, seed, cores, extra)
        return membership, report["seconds"], {"peak_rss_bytes": report["peak_rss_bytes"]}

    return run


def read_truth(data, name, n):
    """NAME.communities, if there is one: a community id per vertex."""
    path = os.path.join(data, name + ".communities")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        try:
            truth = [int(x) for x in f.read().split()]
        except ValueError as e:
            sys.exit(f"{path}: not one integer community id a line ({e})")
    if len(truth) != n:
        sys.exit(f"{path}: {len(truth)} community ids for a graph of {n} vertices")
    return truth


def graph_file(data, name):
    return os.path.join(data, "WorldImport1999.el" if name == "world-trade" else name + ".graph.gz")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cluster", required=True, help="the tacomesh-cluster binary")
    ap.add_argument("--data", default=os.path.join(here, "..", "data"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--graphs", help="comma-separated subset of graph names")
    ap.add_argument("--tools", help="comma-separated subset of peer tools (tacomesh always runs)")
    ap.add_argument("--extra", default="", help="more tacomesh-cluster options, space-separated")
    ap.add_argument("--memory-cores", type=int, metavar="K",
                    help="also run tacomesh once per graph on K cores (seed 1), for its peak memory against the "
                         "--cores runs' (memory flat in cores: the ratio)")
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args()

    wanted = set(args.graphs.split(",")) if args.graphs else None
    # igraph-leiden-stable is this script's own tool, not one of peers.py's.
    asked = args.tools.split(",") if args.tools else None
    tools = peers.available_tools([t for t in asked if t != "igraph-leiden-stable"] if asked else None)
    makers = {t: peers.TOOLS[t] for t in tools}
    if not asked or "igraph-leiden-stable" in asked:
        makers["igraph-leiden-stable"] = prep_leiden_stable
    graphs = peers.load_graphs(args.data, wanted)
    print("versions:", ", ".join(f"{k} {v}" for k, v in peers.versions().items()), file=sys.stderr)
    oversubscribed = args.cores > (os.cpu_count() or 1)
    k = args.memory_cores

    import igraph

    records = []
    for name, n, edges, weights, weighted in graphs:
        ig = peers.make_igraph(n, edges, weights)
        qweights = weights if weighted else None
        truth = read_truth(args.data, name, n)
        runs = {"tacomesh": prep_tacomesh(args.cluster, graph_file(args.data, name), args.cores, args.extra.split())}
        runs.update({t: make(n, edges, weights, ig) for t, make in makers.items()})
        for r in runs.values():  # untimed warm-up: first calls, page cache
            r(99)
        for seed in range(1, args.seeds + 1):
            for tool, run in runs.items():
                membership, secs, *more = run(seed)
                q = ig.modularity(membership, weights=qweights)
                record = {"graph": name, "n": n, "m": len(edges), "tool": tool, "seed": seed,
                          "modularity": q, "seconds": secs, "cores": args.cores if tool == "tacomesh" else None}
                if truth is not None:
                    record["nmi"] = igraph.compare_communities(truth, membership, method="nmi")
                for extra in more:
                    record.update(extra)
                records.append(record)
        if args.memory_cores:
            membership, secs, more = prep_tacomesh(args.cluster, graph_file(args.data, name), args.memory_cores,
                                                   args.extra.split())(1)
            records.append({"graph": name, "n": n, "m": len(edges), "tool": "tacomesh-memory", "seed": 1,
                            "modularity": ig.modularity(membership, weights=qweights), "seconds": secs,
                            "cores": args.memory_cores, **more})
            if truth is not None:
                records[-1]["nmi"] = igraph.compare_communities(truth, membership, method="nmi")
        print(f"{name} done", file=sys.stderr)

    # The table: median Q / median ms per tool and graph.
    tool_names = ["tacomesh"] + [t for t in makers]
    med = {}
    for r in records:
        med.setdefault((r["graph"], r["tool"]), []).append(r)
    print(f"| graph | n | m | " + " | ".join(tool_names) + " | Q - Leiden(stable) | time / Leiden | time / Leiden(stable) |")
    print("|---" * (len(tool_names) + 6) + "|")
    for name, n, edges, _, _ in graphs:
        cells = []
        q = {}
        t = {}
        for tool in tool_names:
            rs = med.get((name, tool), [])
            if not rs:
                cells.append("-")
                continue
            q[tool] = statistics.median(x["modularity"] for x in rs)
            t[tool] = statistics.median(x["seconds"] for x in rs)
            cells.append(f"{q[tool]:.5f} / {t[tool] * 1e3:.1f} ms")
        dq = f"{q['tacomesh'] - q['igraph-leiden-stable']:+.5f}" if "igraph-leiden-stable" in q else "-"
        r1 = f"{t['tacomesh'] / t['igraph-leiden']:.2f}" if "igraph-leiden" in t else "-"
        r2 = f"{t['tacomesh'] / t['igraph-leiden-stable']:.2f}" if "igraph-leiden-stable" in t else "-"
        print(f"| {name} | {n} | {len(edges)} | " + " | ".join(cells) + f" | {dq} | {r1} | {r2} |")
    print(f"\ntacomesh on {args.cores} cores{' (oversubscribed)' if oversubscribed else ''}; medians over seeds 1..{args.seeds}")
    if k:
        print(f"peak memory also on {k} cores{' (oversubscribed)' if k > (os.cpu_count() or 1) else ''}, seed 1")

    # NMI against the known communities, and tacomesh's peak memory per edge.
    nmi_graphs = {r["graph"] for r in records if "nmi" in r}
    more_cols = f" | peak on {k} cores | / on {args.cores}" if k else ""
    print("\n| graph | m | " + " | ".join(f"NMI {t}" for t in tool_names) + " | tacomesh peak RSS | bytes / edge" +
          more_cols + " |")
    print("|---" * (len(tool_names) + 4 + (2 if k else 0)) + "|")
    for name, n, edges, _, _ in graphs:
        cells = []
        for tool in tool_names:
            rs = [x["nmi"] for x in med.get((name, tool), []) if "nmi" in x]
            cells.append(f"{statistics.median(rs):.4f}" if rs else "-")
        rss = [x["peak_rss_bytes"] for x in med.get((name, "tacomesh"), []) if "peak_rss_bytes" in x]
        peak = max(rss) if rss else None
        mem = f"{peak / 2**20:.1f} MiB | {peak / len(edges):.0f}" if peak else "- | -"
        if k:
            wide = [x["peak_rss_bytes"] for x in med.get((name, "tacomesh-memory"), [])]
            mem += f" | {wide[0] / 2**20:.1f} MiB | {wide[0] / peak:.2f}x" if wide and peak else " | - | -"
        print(f"| {name}{'' if name in nmi_graphs else ' (no known communities)'} | {len(edges)} | " + " | ".join(cells) + f" | {mem} |")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cores": args.cores, "memory_cores": k, "oversubscribed": oversubscribed, "versions": peers.versions(),
                       "records": records}, f, indent=1)


if __name__ == "__main__":
    main()
