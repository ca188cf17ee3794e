#!/usr/bin/env python3
"""Checks compare.py's JSON (its smoke run, apps/modularity/bench/CMakeLists.txt):
every run has a Q and a time, every run on a graph with known communities
(data/NAME.communities) an NMI in [0, 1], and every tacomesh run its peak
resident memory (and, when it ran with --memory-cores K, a run on K cores on
every graph).

  check_compare.py OUT.json GRAPH_WITH_COMMUNITIES...
"""
import json
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        out = json.load(f)
    records = out["records"]
    memory_cores = out.get("memory_cores")
    known = set(sys.argv[2:])
    failed = []
    if not records:
        failed.append("no records")
    for r in records:
        what = f"{r.get('graph')} / {r.get('tool')} / seed {r.get('seed')}"
        if not isinstance(r.get("modularity"), float) or not r.get("seconds", -1) >= 0:
            failed.append(f"{what}: no modularity or time")
        if r["graph"] in known and not 0 <= r.get("nmi", -1) <= 1:
            failed.append(f"{what}: NMI {r.get('nmi')!r}, the graph's communities are known")
        if r["tool"] in ("tacomesh", "tacomesh-memory") and not r.get("peak_rss_bytes", 0) > 0:
            failed.append(f"{what}: peak_rss_bytes {r.get('peak_rss_bytes')!r}")
    for g in known:
        if not any(r["graph"] == g for r in records):
            failed.append(f"{g}: not in the records")
    if memory_cores:
        for g in {r["graph"] for r in records}:
            if not any(r["graph"] == g and r["tool"] == "tacomesh-memory" and r.get("cores") == memory_cores
                       for r in records):
                failed.append(f"{g}: no run on --memory-cores {memory_cores}")
    for line in failed:
        print("FAILED:", line)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
