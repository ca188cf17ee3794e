#!/usr/bin/env python3
"""Measure peer RDF engines (pyoxigraph, owlrl/rdflib) on the same data and
queries as the project's RDF app, single-threaded, and print one JSON object.

Run it with the Python of a venv that has requirements.txt installed, e.g.

    python3 -m venv /work/venv-rdf          # any CPython 3.11 (pyenv's or Debian's)
    /work/venv-rdf/bin/pip install -r apps/rdf/bench/requirements.txt
    /work/venv-rdf/bin/python apps/rdf/bench/peers.py \\
        --data apps/rdf/data/lubm1-inferred.nt.gz \\
        --queries apps/rdf/data/queries \\
        --infer-data apps/rdf/data/lubm1-raw.nt.gz \\
        --ontology apps/rdf/data/univ-bench.owl \\
        --output peers.json

Modes (--only, comma-separated; default: all that have their inputs):
  load     pyoxigraph in-memory Store() + bulk_load of --data, --load-runs times,
           each with a fresh store; the time runs from opening the file (a .gz
           is decompressed as a stream into the parser) to bulk_load returning.
  memory   in a fresh subprocess: RSS (/proc/self/statm resident pages * page
           size) after gc.collect() once the store is loaded, minus the same
           before Store() was created; divided by len(store).
  queries  every *.rq in --queries (sorted): one untimed run, then --runs timed
           runs; one run = store.query(text) + iterating every solution and
           str() of every bound term. Reports the median. Result counts are
           checked against --expected (default: the published LUBM(1,0)
           counts for files named q01..q14; a mismatch goes to "warnings").
  infer    (needs --infer-data and --ontology) in a subprocess with a
           timeout: rdflib Graph <- raw data + ontology (RDF/XML), then
           owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g) is timed.

Progress goes to stderr; the JSON goes to stdout (and to --output if given).
The figures are indicative: run one timing job at a time on a quiet machine.
"""

import argparse
import gc
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# Published LUBM(1,0) answer counts (on the OWL-RL-closed data): the one copy.
LUBM_ANSWERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "lubm1.answers.tsv")


def read_answers(path):
    """{query name: rows} from an answers file ('q01.rq<TAB>4' lines, '#' comments)."""
    answers = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, count = line.split()
                answers[os.path.splitext(name)[0]] = int(count)
    return answers

ALL_MODES = ("load", "memory", "queries", "infer")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def log(msg):
    print(f"[peers {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE_SIZE


def proc_status(field):
    """A field of /proc/self/status: kB values are returned in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                parts = line.split()
                value = int(parts[1])
                return value * 1024 if len(parts) > 2 and parts[2] == "kB" else value
    return None


def pkg_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return None


def open_data(path):
    """A binary stream of the file, decompressed on the fly if it ends in .gz."""
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def rdf_format(path):
    import pyoxigraph
    name = path[:-3] if path.endswith(".gz") else path
    ext = os.path.splitext(name)[1].lstrip(".")
    fmt = pyoxigraph.RdfFormat.from_extension(ext)
    if fmt is None:
        raise SystemExit(f"cannot guess the RDF format of {path!r} from its extension")
    return fmt


def load_store(path):
    """Fresh in-memory store loaded from path. This whole function is what 'load' times."""
    import pyoxigraph
    fmt = rdf_format(path)
    store = pyoxigraph.Store()
    with open_data(path) as f:
        store.bulk_load(f, fmt)
    return store


def median(xs):
    return statistics.median(xs) if xs else None


# ---------------------------------------------------------------- load

def mode_load(args):
    walls, cpus = [], []
    store = None
    triples = None
    for i in range(args.load_runs):
        store = None
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        store = load_store(args.data)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        triples = len(store)
        walls.append(wall)
        cpus.append(cpu)
        log(f"load run {i + 1}/{args.load_runs}: {wall:.3f} s wall, {cpu:.3f} s cpu, {triples} triples")
    # For information: decompression alone (read the whole stream, discard).
    t0 = time.perf_counter()
    with open_data(args.data) as f:
        while f.read(1 << 20):
            pass
    decompress = time.perf_counter() - t0
    result = {
        "timed": ("from opening the file (a .gz file is gunzipped as a stream by Python's gzip "
                  "module and fed to the parser) through pyoxigraph.Store() creation and "
                  "store.bulk_load(stream, format) returning: decompression + N-Triples parse + "
                  "in-memory index build; excludes interpreter start and imports"),
        "runs_s": walls,
        "median_s": median(walls),
        "min_s": min(walls),
        "cpu_runs_s": cpus,
        "read_only_s": decompress,
        "read_only_note": "time to just read (and gunzip) the file to the end, once, included in the load time",
        "triples": triples,
        "threads_after_load": proc_status("Threads"),
    }
    return result, store


# ---------------------------------------------------------------- memory

def child_memory(args):
    """Runs in a fresh interpreter: prints a JSON object on stdout."""
    import pyoxigraph  # noqa: F401  (import before the 'before' sample)
    fmt = rdf_format(args.data)  # noqa: F841  (warm everything up)
    gc.collect()
    before = rss_bytes()
    store = load_store(args.data)
    gc.collect()
    after = rss_bytes()
    n = len(store)
    delta = after - before
    json.dump({
        "rss_before_bytes": before,
        "rss_after_bytes": after,
        "rss_delta_bytes": delta,
        "triples": n,
        "bytes_per_triple": delta / n if n else None,
        "peak_rss_bytes": proc_status("VmHWM"),
        "peak_delta_bytes": proc_status("VmHWM") - before,
    }, sys.stdout)
    sys.stdout.flush()


def run_child(args, child_mode, timeout=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--_child", child_mode]
    if args.data:
        cmd += ["--data", args.data]
    if args.infer_data:
        cmd += ["--infer-data", args.infer_data]
    if args.ontology:
        cmd += ["--ontology", args.ontology]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, timeout=timeout, text=True)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "timeout_s": timeout,
                "elapsed_s": time.perf_counter() - t0}
    if proc.returncode != 0:
        return {"status": "error", "returncode": proc.returncode,
                "elapsed_s": time.perf_counter() - t0}
    out = json.loads(proc.stdout)
    out["status"] = "ok"
    return out


def mode_memory(args):
    log("memory: loading in a fresh subprocess")
    res = run_child(args, "memory")
    res["method"] = ("fresh subprocess; RSS = /proc/self/statm resident pages * page size; "
                     "before = after imports and gc.collect(), before Store(); "
                     "after = after bulk_load and gc.collect(), store alive; "
                     "bytes_per_triple = (after - before) / len(store); "
                     "peak = VmHWM of the subprocess")
    if res.get("status") == "ok":
        log(f"memory: {res['rss_delta_bytes'] / 2**20:.1f} MiB for {res['triples']} triples, "
            f"{res['bytes_per_triple']:.1f} bytes/triple")
    return res


# ---------------------------------------------------------------- queries

def run_query(store, text):
    """One run: parse + plan + execute + materialise every term as a string."""
    import pyoxigraph
    result = store.query(text)
    if isinstance(result, pyoxigraph.QuerySolutions):
        rows = 0
        for solution in result:
            rows += 1
            for value in solution:
                if value is not None:
                    str(value)
        return rows
    if isinstance(result, pyoxigraph.QueryBoolean):
        return 1 if bool(result) else 0
    rows = 0  # QueryTriples (CONSTRUCT / DESCRIBE)
    for triple in result:
        rows += 1
        str(triple.subject), str(triple.predicate), str(triple.object)
    return rows


def parse_expected(spec, names):
    """{query name: expected count} from --expected."""
    if spec in (None, "", "none"):
        return {}
    if spec == "lubm":
        lubm = read_answers(LUBM_ANSWERS)
        return {n: lubm[n] for n in names if n in lubm}
    items = [s.strip() for s in spec.split(",") if s.strip()]
    if all("=" in s for s in items):
        return {k.strip(): int(v) for k, v in (s.split("=", 1) for s in items)}
    if len(items) != len(names):
        raise SystemExit(f"--expected has {len(items)} counts but there are {len(names)} queries")
    return {n: int(v) for n, v in zip(names, items)}


def mode_queries(args, store, warnings):
    files = sorted(f for f in os.listdir(args.queries) if f.endswith(".rq"))
    names = [os.path.splitext(f)[0] for f in files]
    expected = parse_expected(args.expected, names)
    per_query = {}
    for f, name in zip(files, names):
        with open(os.path.join(args.queries, f), encoding="utf-8") as fh:
            text = fh.read()
        rows = run_query(store, text)  # untimed warm-up
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            r = run_query(store, text)
            times.append((time.perf_counter() - t0) * 1000.0)
            if r != rows:
                warnings.append(f"{name}: row count changed between runs ({rows} then {r})")
        entry = {"median_ms": median(times), "min_ms": min(times), "runs_ms": times, "rows": rows}
        if name in expected:
            entry["expected_rows"] = expected[name]
            entry["count_ok"] = rows == expected[name]
            if rows != expected[name]:
                warnings.append(f"{name}: pyoxigraph returned {rows} rows, expected {expected[name]}")
        per_query[name] = entry
        log(f"query {name}: {entry['median_ms']:.2f} ms median, {rows} rows"
            + ("" if entry.get("count_ok", True) else f" (EXPECTED {expected[name]})"))
    medians = [q["median_ms"] for q in per_query.values()]
    checked = [q for q in per_query.values() if "count_ok" in q]
    return {
        "timed": ("per run: store.query(text) + iterating every solution + str() of every "
                  "bound term (parse + plan + execute + materialise); one untimed run first"),
        "runs": args.runs,
        "per_query": per_query,
        "sum_median_ms": sum(medians),
        "counts_checked": len(checked),
        "counts_ok": sum(1 for q in checked if q["count_ok"]),
    }


# ---------------------------------------------------------------- infer

def child_infer(args):
    """Runs in a subprocess (killed on timeout): prints a JSON object on stdout."""
    import owlrl
    import rdflib
    from rdflib import RDF, Literal

    g = rdflib.Graph()
    t0 = time.perf_counter()
    with open_data(args.infer_data) as f:
        g.parse(source=f, format="nt")
    data_triples = len(g)
    g.parse(args.ontology, format="xml")
    load_s = time.perf_counter() - t0
    before = len(g)
    types_before = sum(1 for _ in g.triples((None, RDF.type, None)))
    log(f"infer: rdflib loaded {data_triples} data + {before - data_triples} ontology triples "
        f"in {load_s:.2f} s; running owlrl OWL-RL closure")
    t0, c0 = time.perf_counter(), time.process_time()
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
    expand_s, expand_cpu = time.perf_counter() - t0, time.process_time() - c0
    after = len(g)
    types_after = sum(1 for _ in g.triples((None, RDF.type, None)))
    literal_subjects = sum(1 for s, _, _ in g if isinstance(s, Literal))
    log(f"infer: closure {expand_s:.1f} s, {before} -> {after} triples")
    json.dump({
        "load_s": load_s,
        "load_timed": "rdflib Graph.parse of the data (gunzipped stream, format nt) + ontology (RDF/XML)",
        "expand_s": expand_s,
        "expand_cpu_s": expand_cpu,
        "expand_timed": "owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g) only",
        "data_triples": data_triples,
        "ontology_triples": before - data_triples,
        "triples_before": before,
        "triples_after": after,
        "triples_added": after - before,
        "rdf_type_before": types_before,
        "rdf_type_after": types_after,
        "literal_subject_triples_after": literal_subjects,
        "triples_after_without_literal_subjects": after - literal_subjects,
        "peak_rss_bytes": proc_status("VmHWM"),
    }, sys.stdout)
    sys.stdout.flush()


def mode_infer(args):
    log(f"infer: owlrl in a subprocess (timeout {args.infer_timeout} s)")
    res = run_child(args, "infer", timeout=args.infer_timeout)
    if res.get("status") == "timeout":
        log(f"infer: TIMEOUT after {args.infer_timeout} s")
    return res


# ---------------------------------------------------------------- main

def build_parser():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--data", metavar="FILE.nt[.gz]",
                   help="RDF file for load/memory/queries (N-Triples, optionally gzipped), "
                        "e.g. /work/shared/data/lubm/lubm1-inferred.nt.gz")
    p.add_argument("--queries", metavar="DIR",
                   help="directory of *.rq SPARQL files, run in sorted order, "
                        "e.g. /work/shared/data/lubm/queries")
    p.add_argument("--expected", default="lubm", metavar="SPEC",
                   help="expected row counts: 'lubm' (default: the published LUBM(1,0) counts for "
                        "queries named q01..q14, right for the inferred file), 'none', "
                        "'q01=4,q02=0,...', or one count per query in sorted order '4,0,6,...'")
    p.add_argument("--infer-data", metavar="RAW.nt[.gz]",
                   help="raw (not inferred) data for owlrl, e.g. /work/shared/data/lubm/lubm1-raw.nt.gz")
    p.add_argument("--ontology", metavar="ONTO.owl",
                   help="ontology in RDF/XML for owlrl, e.g. /work/shared/data/lubm/univ-bench.owl")
    p.add_argument("--only", metavar="MODES",
                   help="comma-separated subset of " + ",".join(ALL_MODES) +
                        " (default: every mode whose inputs are given)")
    p.add_argument("--load-runs", type=int, default=3, metavar="N",
                   help="fresh-store loads to time (default 3)")
    p.add_argument("--runs", type=int, default=5, metavar="N",
                   help="timed runs per query after one untimed run (default 5)")
    p.add_argument("--infer-timeout", type=float, default=1800, metavar="SECONDS",
                   help="kill the owlrl subprocess after this long and report a timeout (default 1800)")
    p.add_argument("--cpu", type=int, metavar="N",
                   help="pin this process and its subprocesses to CPU N (default: no pinning; "
                        "all measured code is single-threaded anyway)")
    p.add_argument("--output", metavar="FILE", help="also write the JSON to FILE")
    p.add_argument("--_child", help=argparse.SUPPRESS)
    return p


def main():
    args = build_parser().parse_args()

    if args._child == "memory":
        return child_memory(args)
    if args._child == "infer":
        return child_infer(args)

    if args.only:
        modes = [m.strip() for m in args.only.split(",") if m.strip()]
        bad = [m for m in modes if m not in ALL_MODES]
        if bad:
            raise SystemExit(f"unknown mode(s) {bad}; choose from {ALL_MODES}")
    else:
        modes = [m for m in ALL_MODES
                 if (m in ("load", "memory") and args.data)
                 or (m == "queries" and args.data and args.queries)
                 or (m == "infer" and args.infer_data and args.ontology)]
        if not modes:
            build_parser().print_usage(sys.stderr)
            raise SystemExit("nothing to do: give --data (and --queries), or --infer-data and --ontology")
    need = {"load": ["data"], "memory": ["data"], "queries": ["data", "queries"],
            "infer": ["infer_data", "ontology"]}
    for m in modes:
        for a in need[m]:
            if not getattr(args, a):
                raise SystemExit(f"mode {m} needs --{a.replace('_', '-')}")
    for a in ("data", "infer_data", "ontology"):
        if getattr(args, a):
            setattr(args, a, os.path.abspath(getattr(args, a)))

    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})

    import pyoxigraph
    report = {
        "peer": {
            "engine": "pyoxigraph (in-memory Store) / owlrl on rdflib",
            "pyoxigraph": pyoxigraph.__version__,
            "owlrl": pkg_version("owlrl"),
            "rdflib": pkg_version("rdflib"),
            "python": platform.python_version(),
            "python_executable": sys.executable,
        },
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "affinity": sorted(os.sched_getaffinity(0)),
            "pinned_cpu": args.cpu,
        },
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "modes": modes,
        "inputs": {k: getattr(args, k) for k in ("data", "queries", "infer_data", "ontology")},
        "warnings": [],
    }
    warnings = report["warnings"]
    if args.data:
        report["inputs"]["data_bytes"] = os.path.getsize(args.data)

    # memory first: its subprocess is independent of this process's state.
    if "memory" in modes:
        report["memory"] = mode_memory(args)
        if report["memory"].get("status") != "ok":
            warnings.append(f"memory: subprocess {report['memory'].get('status')}")

    store = None
    if "load" in modes:
        report["load"], store = mode_load(args)
    if "queries" in modes:
        if store is None:
            log("queries: loading the store (untimed)")
            store = load_store(args.data)
        report["queries"] = mode_queries(args, store, warnings)
        log(f"queries: sum of medians {report['queries']['sum_median_ms']:.1f} ms, "
            f"counts {report['queries']['counts_ok']}/{report['queries']['counts_checked']} as expected")
    store = None
    gc.collect()

    if "infer" in modes:
        report["infer"] = mode_infer(args)
        if report["infer"].get("status") != "ok":
            warnings.append(f"infer: {report['infer'].get('status')}")

    text = json.dumps(report, indent=2)
    print(text)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text + "\n")
        log(f"wrote {args.output}")


if __name__ == "__main__":
    main()
