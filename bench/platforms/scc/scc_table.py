#!/usr/bin/env python3
"""The markdown table of platforms/scc/README.md from bench_scc's JSON
(--benchmark_out=F --benchmark_out_format=json): modelled cycles beside the
papers'. (The apps' figures are scc_figures', apps/scc_figures.)

    scc_table.py bench_scc.json"""
import json
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


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    taco_table(load(sys.argv[1]))
