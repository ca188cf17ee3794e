#!/usr/bin/env python3
"""Tables of the greedy experiment from bench_greedy's JSON: per graph and
platform, the median time of the steps and the speed-up relative to 1-core
DCM + Broadcast on the same platform (the MESH paper's baseline).

  greedy_table.py greedy.json [--csv speedups.csv]
"""
import json
import statistics
import sys
from collections import defaultdict


def load(path):
    """{(graph, platform, maps, controller, cores): (median ms, steps, oversubscribed)}"""
    runs = defaultdict(list)
    info = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        parts = name.split("/")
        if parts[0] != "greedy":
            continue
        _, graph, platform, maps, ctl, cores = parts[:6]
        key = (graph, platform, maps, ctl, int(cores.split(":")[1]))
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        runs[key].append(b["real_time"] * unit)
        info[key] = (b.get("steps", 0), b.get("oversubscribed", 0))
    return {k: (statistics.median(v), *info[k]) for k, v in runs.items()}


def main():
    data = load(sys.argv[1])
    graphs = sorted({k[0] for k in data})
    for graph in graphs:
        for platform in ("threads", "processes"):
            base = data.get((graph, platform, "dcm", "broadcast", 1))
            if not base:
                continue
            cores = sorted({k[4] for k in data if k[0] == graph and k[1] == platform})
            steps = int(base[1])
            print(f"\n{graph}, {platform}, {steps} steps; speed-up vs 1-core dcm/broadcast ({base[0]:.1f} ms)\n")
            head = " | ".join(f"{c} cores{' (oversubscribed)' if any(data[k][2] for k in data if k[4] == c) else ''}"
                              for c in cores)
            print(f"| maps | controller | {head} |")
            print("|---|---" + "|---" * len(cores) + "|")
            for maps in ("dcm", "ncm", "wt", "mix"):
                for ctl in ("none", "broadcast", "overlapped", "timestamp"):
                    row = [data.get((graph, platform, maps, ctl, c)) for c in cores]
                    if not any(row):
                        continue
                    cells = [f"{base[0] / r[0]:.2f}x ({r[0]:.1f} ms)" if r else "-" for r in row]
                    print(f"| {maps} | {ctl} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
