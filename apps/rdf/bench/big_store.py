#!/usr/bin/env python3
"""LUBM at 100 M-triple scale on one machine: `tacomesh-rdf load` into a store
file, then the 14 LUBM queries on it, each in a fresh process, cold (the page
cache dropped first) and warm; with --peer-python, pyoxigraph's on-disk store
(Store(path) + bulk_load) on the same file, timed the same way.

    apps/rdf/bench/big_store.py --cli build/apps/rdf/tacomesh-rdf --copies 500 \\
        --workdir /var/tmp/lubm-big [--peer-python /path/to/venv/bin/python] --output big_store.json

The data are N renamed copies of apps/rdf/data/lubm1-inferred.nt.gz
(load_memory.make_copies: University0's own IRIs become University<1000 u>),
made once in --workdir and kept, as are the stores. Every answer is checked:
the queries that name University0's entities (all but Q2, Q6, Q9 and Q14)
give LUBM(1)'s counts, the other four LUBM(1)'s times the copies.

With --memory-limit MIB (root: a memory cgroup) our queries run again on
the store made before, in less memory than the store: the page cache of the
mapped file counts against the limit, so what a query touches is paged in
and out, and the first open's check streams the whole file through.

Cold runs need root (/proc/sys/vm/drop_caches); without it only warm runs
are made, and the report says so. Times are wall-clock of the whole process
(start, open, query, writing the rows to /dev/null) plus the parts each side
reports: our open ("mapped ... in": the whole file's bounds and checksums
are checked at the first open and after any change, timed apart with
--check-store) and "rows in" (the query), pyoxigraph's open and query as
timed inside its process.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import load_memory  # noqa: E402  (make_copies, SOURCE)

DATA = HERE.parent / "data"
SCALING = {"q02", "q06", "q09", "q14"}  # not anchored on University0: they grow with the copies

PEER = r'''
import json, sys, time
import pyoxigraph
mode, path = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
if mode == "load":
    store = pyoxigraph.Store(path)
    store.bulk_load(path=sys.argv[3], format=pyoxigraph.RdfFormat.N_TRIPLES)
    store.flush()
    print(json.dumps({"seconds": time.perf_counter() - t0}))
else:
    store = pyoxigraph.Store.read_only(path)
    t1 = time.perf_counter()
    rows = 0
    for solution in store.query(open(sys.argv[3]).read()):
        rows += 1
        for value in solution:
            if value is not None:
                str(value)
    print(json.dumps({"open": t1 - t0, "query": time.perf_counter() - t1, "rows": rows}))
'''


def expected_rows(copies: int) -> dict[str, int]:
    out = {}
    for line in (DATA / "lubm1.answers.tsv").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, count = line.split("\t")[:2]
        name = name.lower().removesuffix(".rq")
        if re.fullmatch(r"q\d+", name):
            name = f"q{int(name[1:]):02d}"
        out[name] = int(count) * (copies if name in SCALING else 1)
    return out


def drop_caches() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def run_kinds(cold: bool):
    """Each run's kind, cold first if asked for: the page cache is dropped before it."""
    for kind in (["cold"] if cold else []) + ["warm"]:
        if kind == "cold":
            drop_caches()
        yield kind


def memory_cgroup(limit: int) -> Path:
    """A memory cgroup of `limit` bytes (v1's memory controller, else v2's):
    the page cache of what its processes read, the store's mapped pages
    among it, counts against the limit, so a store larger than it must be
    paged in and out to answer."""
    v1 = Path("/sys/fs/cgroup/memory")
    group = (v1 if v1.is_dir() else Path("/sys/fs/cgroup")) / "tacomesh-big-store"
    group.mkdir(exist_ok=True)
    (group / ("memory.limit_in_bytes" if v1.is_dir() else "memory.max")).write_text(f"{limit}\n")
    return group


CGROUP: Path | None = None  # set by --memory-limit: our processes run in it


def timed(cmd: list[str], stdout=subprocess.PIPE, **kw) -> tuple[subprocess.CompletedProcess, float, int]:
    """Run under /usr/bin/time: the process, its wall seconds and peak RSS in bytes."""
    if CGROUP is not None:
        cmd = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(CGROUP), *cmd]
    p = subprocess.run(["/usr/bin/time", "-f", "@@time %M %e", *cmd], stdout=stdout, stderr=subprocess.PIPE,
                       text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"big_store: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    peak_kb, wall = [l for l in p.stderr.splitlines() if l.startswith("@@time ")][-1].split()[1:3]
    return p, float(wall), int(peak_kb) * 1024


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def ours(args, nt: Path, queries: list[Path], want: dict, cold: bool) -> dict:
    store = Path(args.workdir) / f"lubm-{args.copies}.store"
    result = {}
    if args.memory_limit and not store.exists():
        sys.exit(f"big_store: --memory-limit queries a store made before: {store} is missing")
    if (not store.exists() or args.reload) and not args.memory_limit:
        p, wall, peak = timed([args.cli, "load", "--data", str(nt), "--output", str(store)])
        m = re.search(r"store: (\d+) triples, (\d+) terms.*loaded in ([0-9.]+) s", p.stderr)
        result["load"] = {"wall_seconds": wall, "peak_bytes": peak, "store_bytes": store.stat().st_size,
                          "triples": int(m[1]), "terms": int(m[2]), "loaded_seconds": float(m[3])}
        print(f"ours: loaded {int(m[1]):,} triples in {wall:.1f} s, peak {peak / 2**30:.2f} GiB, "
              f"store {store.stat().st_size / 2**30:.2f} GiB", file=sys.stderr, flush=True)
    # The record of checked store files (rdf/checked_stores.hpp): this
    # directory's own. The first open checks the whole file, as after any
    # change (--check-store forces it: timed here cold and warm); the
    # queries' opens after it find the file recorded and unchanged.
    env = dict(os.environ, XDG_CACHE_HOME=str(Path(args.workdir) / "cache"))

    def query(q: Path, *extra: str) -> dict:
        p, wall, peak = timed([args.cli, "query", "--data", str(store), str(q), *extra], env=env,
                              stdout=subprocess.DEVNULL)
        opened = re.search(r"(mapped and checked|mapped \(checked before, unchanged since\)) in ([0-9.]+) s", p.stderr)
        rows = re.search(r"(\d+) rows in ([0-9.]+) ms", p.stderr)
        if not opened or not rows:
            sys.exit(f"big_store: no open or rows line from {q.name}:\n{p.stderr[-2000:]}")
        if int(rows[1]) != want[q.stem]:
            sys.exit(f"big_store: {q.stem} gave {rows[1]} rows, {want[q.stem]} expected")
        return {"wall_seconds": wall, "open": opened[1], "open_seconds": float(opened[2]),
                "query_seconds": float(rows[2]) / 1000, "peak_bytes": peak, "rows": int(rows[1])}

    result["check"] = {}
    for kind in run_kinds(cold):
        result["check"][kind] = query(queries[0], "--check-store")
    print("ours: the whole file checked in " + ", ".join(
        f"{k} {v['open_seconds']:.2f} s (peak {v['peak_bytes'] / 2**30:.2f} GiB)" for k, v in result["check"].items()),
        file=sys.stderr, flush=True)
    result["queries"] = {}
    for q in queries:
        runs = {}
        for kind in run_kinds(cold):
            runs[kind] = query(q)
        result["queries"][q.stem] = runs
        print(f"ours {q.stem}: " + ", ".join(f"{k} {v['wall_seconds']:.2f} s (open {v['open_seconds']:.2f}, "
                                            f"query {v['query_seconds']:.3f})" for k, v in runs.items()), file=sys.stderr, flush=True)
    return result


def peer(args, nt: Path, queries: list[Path], want: dict, cold: bool) -> dict:
    store = Path(args.workdir) / f"lubm-{args.copies}.oxigraph"
    result = {}
    if not store.exists() or args.reload:
        shutil.rmtree(store, ignore_errors=True)
        p, wall, peak = timed([args.peer_python, "-c", PEER, "load", str(store), str(nt)])
        inside = json.loads(p.stdout.splitlines()[-1])
        size = du(store)
        result["load"] = {"wall_seconds": wall, "peak_bytes": peak, "store_bytes": size, **inside}
        print(f"pyoxigraph: loaded in {wall:.1f} s, peak {peak / 2**30:.2f} GiB, "
              f"store {size / 2**30:.2f} GiB", file=sys.stderr, flush=True)
    result["queries"] = {}
    for q in queries:
        runs = {}
        for kind in run_kinds(cold):
            try:
                p, wall, peak = timed([args.peer_python, "-c", PEER, "query", str(store), str(q)],
                                      timeout=args.peer_timeout)
            except subprocess.TimeoutExpired:
                runs[kind] = {"timed_out_after": args.peer_timeout}
                continue
            inside = json.loads(p.stdout.splitlines()[-1])
            if inside["rows"] != want[q.stem]:
                sys.exit(f"big_store: pyoxigraph's {q.stem} gave {inside['rows']} rows, {want[q.stem]} expected")
            runs[kind] = {"wall_seconds": wall, "open_seconds": inside["open"], "query_seconds": inside["query"],
                          "peak_bytes": peak, "rows": inside["rows"]}
        result["queries"][q.stem] = runs
        print(f"pyoxigraph {q.stem}: " + ", ".join(
            f"{k} {v['wall_seconds']:.2f} s" if "wall_seconds" in v else f"{k} over {v['timed_out_after']} s"
            for k, v in runs.items()), file=sys.stderr, flush=True)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="tacomesh-rdf")
    ap.add_argument("--copies", type=int, default=500, help="copies of LUBM(1) (500: about 90 M triples)")
    ap.add_argument("--workdir", required=True, help="where the data file and the stores are made and kept")
    ap.add_argument("--peer-python", help="a Python with pyoxigraph (apps/rdf/bench/make_venv.sh)")
    ap.add_argument("--peer-timeout", type=float, default=600, help="seconds a pyoxigraph query may take")
    ap.add_argument("--queries", nargs="*", help="the query files (default: the 14 LUBM queries)")
    ap.add_argument("--reload", action="store_true", help="load again even if a store is kept")
    ap.add_argument("--memory-limit", type=int, metavar="MIB",
                    help="run our side (load skipped: the store must exist) in a memory cgroup of MIB MiB, "
                         "smaller than the store, and pyoxigraph not at all")
    ap.add_argument("--warm-only", action="store_true",
                    help="no cold runs (the page cache is the machine's: not beside other work, as in CI)")
    ap.add_argument("--output", help="the JSON report ('-': standard output; progress goes to standard error)")
    args = ap.parse_args()
    if args.memory_limit:
        global CGROUP
        CGROUP = memory_cgroup(args.memory_limit << 20)
        args.peer_python = None
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    nt = Path(args.workdir) / f"lubm-{args.copies}.nt"
    if not nt.exists():
        t = time.time()
        load_memory.make_copies(load_memory.SOURCE, args.copies, nt, False)
        print(f"made {nt} ({nt.stat().st_size / 2**30:.1f} GiB) in {time.time() - t:.0f} s", file=sys.stderr, flush=True)
    queries = [Path(q) for q in args.queries] if args.queries else sorted((DATA / "queries").glob("q*.rq"))
    want = expected_rows(args.copies)
    cold = not args.warm_only and drop_caches()
    if not cold and not args.warm_only:
        print("big_store: cannot drop the page cache (not root?): warm runs only", file=sys.stderr)
    report = {"copies": args.copies, "data_bytes": nt.stat().st_size, "cold_runs": cold,
              "memory_limit_bytes": (args.memory_limit or 0) << 20,
              "cpus": os.cpu_count(), "ours": ours(args, nt, queries, want, cold)}
    if args.peer_python:
        report["pyoxigraph"] = peer(args, nt, queries, want, cold)
    if args.output == "-":
        print(json.dumps(report, indent=1))
    elif args.output:
        Path(args.output).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
