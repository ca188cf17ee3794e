#!/usr/bin/env python3
"""Markdown tables for platforms/scc/README.md from bench_scc / bench_scc_apps
JSON (--benchmark_out=F --benchmark_out_format=json):

    scc_table.py bench_scc.json apps.json [apps_slow.json ...]

TACO figures: modelled cycles beside the papers'. Apps: the speed-up of each
variant at each core count against the experiment's baseline (1-core DCM +
Broadcast; RDF: 1 core), one table per apps file (its compute_scale named)."""
import json
import re
import sys


def load(path):
    return [b for b in json.load(open(path))["benchmarks"] if not b.get("error_occurred")]


def name(b):
    return b["name"].replace("/iterations:1", "")


def taco_table(bench):
    print("| measure | modelled cycles | paper |")
    print("|---|---|---|")
    for b in bench:
        paper = f"{int(b['paper_cycles']):,}" if "paper_cycles" in b else ""
        print(f"| {name(b)} | {int(b['modelled_cycles']):,} | {paper} |")


def apps_table(bench):
    rows, cores = {}, set()
    scale = bench[0].get("compute_scale", 1) if bench else 1
    for b in bench:
        m = re.match(r"(.*)/cores:(\d+)$", name(b))
        if not m or "speedup" not in b:
            continue
        n = int(m.group(2))
        cores.add(n)
        rows.setdefault(m.group(1), {})[n] = b["speedup"]
    cores = sorted(cores)
    print(f"compute charged at {scale:g} x host CPU time (cost_model::compute_cycles_per_ns x {scale:g})\n")
    print("| speed-up | " + " | ".join(str(c) for c in cores) + " |")
    print("|---|" + "---|" * len(cores))
    for row, by in rows.items():
        print(f"| {row} | " + " | ".join(f"{by[c]:.2f}" if c in by else "" for c in cores) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    taco_table(load(sys.argv[1]))
    for path in sys.argv[2:]:
        print()
        apps_table(load(path))
