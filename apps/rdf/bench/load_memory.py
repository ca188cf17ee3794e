#!/usr/bin/env python3
"""Peak memory and time of `tacomesh-rdf load` on LUBM(N) as N renamed
copies of LUBM(1), against the store it builds, and (with --baseline) against
another build of tacomesh-rdf in the same run, alternating.

The target: peak resident memory, as /usr/bin/time reports it
(mapped input pages count), at most the final store + 256 MB at any size.
The store's size is the store file `load` writes (its arrays, as in memory).

    apps/rdf/bench/load_memory.py --cli build/apps/rdf/tacomesh-rdf \\
        [--baseline OLD/tacomesh-rdf] --copies 30 --rounds 2 [--gzip] --output load_memory.json

The data file is made once in --workdir (N copies of apps/rdf/data/
lubm1-inferred.nt.gz, University0 renamed University<1000 u> in its own IRIs,
as rdf/lubm_scale.hpp does) and kept for later runs.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "data" / "lubm1-inferred.nt.gz"
BUDGET = 256 << 20

OWN = re.compile(rb"University0(?=[.>])")  # University0's own IRIs; University01 and the like are others


def make_copies(source: Path, n: int, out: Path, gz: bool) -> None:
    one = gzip.open(source, "rb").read()
    tmp = out.with_suffix(out.suffix + ".part")
    opener = (lambda p: gzip.open(p, "wb", compresslevel=1)) if gz else (lambda p: open(p, "wb"))
    with opener(tmp) as f:
        f.write(one)
        for u in range(1, n):
            f.write(OWN.sub(b"University%d" % (1000 * u), one))
    tmp.rename(out)


def run_load(cli: str, data: Path, store: Path) -> dict:
    """One load: peak RSS and wall time from /usr/bin/time, the store file's size."""
    if store.exists():
        store.unlink()
    cmd = ["/usr/bin/time", "-f", "@@time %M %e", cli, "load", "--data", str(data), "--output", str(store)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"load_memory: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    line = [l for l in p.stderr.splitlines() if l.startswith("@@time ")][-1]
    peak_kb, wall = line.split()[1:3]
    m = re.search(r"store: (\d+) triples.*loaded in ([0-9.]+) s", p.stderr)
    if not m:
        sys.exit(f"load_memory: no 'store: ...' line from {cli}:\n{p.stderr[-2000:]}")
    store_bytes = store.stat().st_size
    store.unlink()
    return {"peak_bytes": int(peak_kb) * 1024, "wall_s": float(wall), "load_s": float(m.group(2)),
            "triples": int(m.group(1)), "store_bytes": store_bytes,
            "over_store_bytes": int(peak_kb) * 1024 - store_bytes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True, help="tacomesh-rdf to measure")
    ap.add_argument("--baseline", help="another tacomesh-rdf, run alternately in the same run")
    ap.add_argument("--copies", type=int, default=30, help="LUBM(1) copies (30: 5.56 M triples, 0.95 GB of text)")
    ap.add_argument("--gzip", action="store_true", help="the data file gzip'd (level 1)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--workdir", default="/tmp/tacomesh-load-memory")
    ap.add_argument("--output", help="JSON file for the results")
    a = ap.parse_args()

    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    data = work / f"lubm{a.copies}-copies.nt{'.gz' if a.gzip else ''}"
    if not data.exists():
        print(f"making {data} ...", file=sys.stderr)
        make_copies(SOURCE, a.copies, data, a.gzip)
    clis = {"ours": a.cli} | ({"baseline": a.baseline} if a.baseline else {})
    runs: dict[str, list] = {k: [] for k in clis}
    for r in range(a.rounds):
        for name, cli in (clis.items() if r % 2 == 0 else reversed(list(clis.items()))):
            x = run_load(cli, data, work / "store.tmrdf")
            runs[name].append(x)
            print(f"round {r} {name:8}: peak {x['peak_bytes'] / 2**20:7.0f} MB, store {x['store_bytes'] / 2**20:6.0f} MB, "
                  f"peak - store {x['over_store_bytes'] / 2**20:6.0f} MB, load {x['load_s']:.2f} s", file=sys.stderr)
    med = lambda xs: statistics.median(xs)
    out = {"data": {"file": data.name, "bytes": data.stat().st_size, "copies": a.copies,
                    "triples": runs["ours"][0]["triples"]},
           "machine": {"nproc": os.cpu_count()},
           "budget_over_store_bytes": BUDGET, "runs": runs}
    for name in clis:
        out[name] = {"peak_bytes": med([x["peak_bytes"] for x in runs[name]]),
                     "over_store_bytes": med([x["over_store_bytes"] for x in runs[name]]),
                     "load_s": med([x["load_s"] for x in runs[name]]),
                     "store_bytes": runs[name][0]["store_bytes"]}
    out["ours"]["within_budget"] = out["ours"]["over_store_bytes"] <= BUDGET
    if a.baseline:
        out["ratios"] = {"load_time_ours_over_baseline": [o["load_s"] / b["load_s"]
                                                          for o, b in zip(runs["ours"], runs["baseline"])],
                         "peak_ours_over_baseline": [o["peak_bytes"] / b["peak_bytes"]
                                                     for o, b in zip(runs["ours"], runs["baseline"])]}
    text = json.dumps(out, indent=1)
    if a.output:
        Path(a.output).write_text(text + "\n")
    print(text)
    return 0 if out["ours"]["within_budget"] else 1


if __name__ == "__main__":
    sys.exit(main())
