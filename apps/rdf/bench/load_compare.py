#!/usr/bin/env python3
"""`tacomesh-rdf load` against pyoxigraph's `bulk_load` on three shapes of
data, in the same run, alternating (apps/rdf/README.md, "Loading").

  lubm      LUBM(N): N renamed copies of data/lubm1-inferred.nt.gz (5: 0.93 M triples)
  watdiv    WatDiv-like (make_shapes.py watdiv): tabs, 86 predicates, ~12 % plain literals
  literals  literal-heavy (make_shapes.py literals): ~70 % literal objects, escapes, UTF-8, tags, types

Both sides parse N-Triples text into an in-memory store with all their
indexes, on all the machine's cores: ours is `load`'s "loaded in" (read,
parse, dictionary, sort and index; not the store file's writing), theirs is
peers.py's load mode (Store() + bulk_load, the interpreter's start and
imports excluded). Every pair must count the same distinct triples.

    load_compare.py --cli build/apps/rdf/tacomesh-rdf --python VENV/bin/python \\
        [--rounds 3] [--triples 1000000] [--lubm-copies 5] [--workdir DIR] [--output load_compare.json]

The data files are made once in --workdir and kept (make_shapes.py's seed 7).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import load_memory  # noqa: E402  (make_copies: LUBM(N) as renamed copies)

TARGET = 0.5  # our time over pyoxigraph's, at most


def make_data(work: Path, shape: str, triples: int, copies: int) -> Path:
    if shape == "lubm":
        path = work / f"lubm{copies}-copies.nt"
        if not path.exists():
            load_memory.make_copies(load_memory.SOURCE, copies, path, False)
        return path
    path = work / f"{shape}-{triples}.nt"
    if not path.exists():
        subprocess.run([sys.executable, str(HERE / "make_shapes.py"), shape, "--triples", str(triples),
                        "--seed", "7", "-o", str(path)], check=True)
    return path


PHASES = re.compile(r"read ([0-9.]+) s, parse ([0-9.]+) s, fold dictionaries ([0-9.]+) s, sort and index ([0-9.]+) s")
STORE = re.compile(r"store: (\d+) triples, (\d+) terms, ([0-9.]+) bytes/triple .*loaded in ([0-9.]+) s")


def run_ours(cli: str, data: Path, work: Path) -> dict:
    store = work / "load_compare.store"
    p = subprocess.run([cli, "load", "--data", str(data), "--output", str(store)], capture_output=True, text=True)
    store.unlink(missing_ok=True)
    if p.returncode != 0:
        sys.exit(f"load_compare: {cli} load --data {data} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    m = STORE.search(p.stderr)
    if not m:
        sys.exit(f"load_compare: no 'store: ...' line from {cli}:\n{p.stderr[-2000:]}")
    out = {"seconds": float(m.group(4)), "triples": int(m.group(1)), "terms": int(m.group(2)),
           "store_bytes_per_triple": float(m.group(3))}
    if ph := PHASES.search(p.stderr):
        out["phases_s"] = dict(zip(["read", "parse", "fold", "index"], map(float, ph.groups())))
    return out


def run_peer(python: str, data: Path) -> dict:
    p = subprocess.run([python, str(HERE / "peers.py"), "--data", str(data), "--only", "load", "--load-runs", "1"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"load_compare: peers.py --data {data} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    load = json.loads(p.stdout)["load"]
    return {"seconds": load["runs_s"][0], "triples": load["triples"], "read_only_s": load["read_only_s"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True, help="tacomesh-rdf")
    ap.add_argument("--python", default=sys.executable, help="a Python with pyoxigraph (requirements.txt)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--triples", type=int, default=1_000_000, help="lines of the WatDiv-like and literal-heavy files")
    ap.add_argument("--lubm-copies", type=int, default=5)
    ap.add_argument("--shapes", default="lubm,watdiv,literals")
    ap.add_argument("--workdir", default="/tmp/tacomesh-load-compare")
    ap.add_argument("--output", help="JSON file for the results")
    a = ap.parse_args()
    if a.rounds < 1 or a.triples < 1 or a.lubm_copies < 1:
        ap.error("--rounds, --triples and --lubm-copies must be at least 1")
    shapes = a.shapes.split(",")
    if bad := [s for s in shapes if s not in ("lubm", "watdiv", "literals")]:
        ap.error(f"unknown shape(s) {bad}: lubm, watdiv, literals")

    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    files = {s: make_data(work, s, a.triples, a.lubm_copies) for s in shapes}
    runs = {s: {"ours": [], "pyoxigraph": []} for s in shapes}
    for r in range(a.rounds):
        for s in shapes:
            sides = [("ours", lambda: run_ours(a.cli, files[s], work)), ("pyoxigraph", lambda: run_peer(a.python, files[s]))]
            for name, run in (sides if r % 2 == 0 else sides[::-1]):
                runs[s][name].append(run())
            o, p = runs[s]["ours"][-1], runs[s]["pyoxigraph"][-1]
            if o["triples"] != p["triples"]:
                sys.exit(f"load_compare: {files[s].name}: we count {o['triples']} triples, pyoxigraph {p['triples']}")
            print(f"round {r + 1}/{a.rounds} {s:9}: ours {o['seconds']:.3f} s, pyoxigraph {p['seconds']:.3f} s, "
                  f"ratio {o['seconds'] / p['seconds']:.2f}", file=sys.stderr)

    med = statistics.median
    out = {"machine": {"nproc": os.cpu_count()}, "rounds": a.rounds, "target_ratio_at_most": TARGET, "shapes": {}}
    for s in shapes:
        o, p = runs[s]["ours"], runs[s]["pyoxigraph"]
        ratios = [x["seconds"] / y["seconds"] for x, y in zip(o, p)]
        size = files[s].stat().st_size
        n = o[0]["triples"]
        lines = sum(1 for _ in open(files[s], "rb"))
        entry = {"file": files[s].name, "bytes": size, "lines": lines, "triples": n, "terms": o[0]["terms"],
                 "bytes_per_line": size / lines,
                 "ours_s": med(x["seconds"] for x in o), "pyoxigraph_s": med(x["seconds"] for x in p),
                 "ratio_median": med(ratios), "ratio_range": [min(ratios), max(ratios)],
                 "ours_mtriples_per_s": lines / med(x["seconds"] for x in o) / 1e6,
                 "pyoxigraph_mtriples_per_s": lines / med(x["seconds"] for x in p) / 1e6,
                 "ours_mb_per_s": size / med(x["seconds"] for x in o) / 1e6,
                 "store_bytes_per_triple": o[0]["store_bytes_per_triple"], "runs": runs[s]}
        if all("phases_s" in x for x in o):
            entry["ours_phases_s"] = {k: med(x["phases_s"][k] for x in o) for k in o[0]["phases_s"]}
        out["shapes"][s] = entry
    out["within_target"] = all(e["ratio_median"] <= TARGET for e in out["shapes"].values())
    out["ok"] = True  # every pair counted the same triples (checked above)
    text = json.dumps(out, indent=1)
    if a.output:
        Path(a.output).write_text(text + "\n")
    print(text)
    print("\n| data | triples | bytes/line | ours | pyoxigraph | ours / pyoxigraph (range) |", file=sys.stderr)
    print("|---|---|---|---|---|---|", file=sys.stderr)
    for s, e in out["shapes"].items():
        print(f"| {s} | {e['triples']:,} | {e['bytes_per_line']:.0f} | {e['ours_s']:.2f} s ({e['ours_mtriples_per_s']:.2f} M/s) "
              f"| {e['pyoxigraph_s']:.2f} s | **{e['ratio_median']:.2f}** ({e['ratio_range'][0]:.2f}-{e['ratio_range'][1]:.2f}) |",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
