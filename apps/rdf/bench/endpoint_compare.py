#!/usr/bin/env python3
"""tacomesh-rdf serve against Oxigraph's SPARQL server, in the same run, with
the same client, on the same machine (apps/rdf/README.md, "The endpoint").

  endpoint_compare.py --tacomesh build/apps/rdf/tacomesh-rdf --oxigraph VENV/bin/oxigraph
                      --data apps/rdf/data/lubm1-inferred.nt.gz --queries apps/rdf/data/queries
                      --output endpoint_compare.json
                      [--client build/apps/rdf/bench/rdf_endpoint_load] [--answers FILE|none]
                      [--connections 1,4] [--pairs 3] [--cores 1,2] [--warmup 2] [--duration 10]
                      [--get] [--smoke]

The client is rdf_endpoint_load (endpoint_load.cpp; default: beside
tacomesh-rdf, under bench/): C keep-alive connections, each sending the
queries in turn (Q1..Q14), the next as soon as the last is answered, JSON
results (Accept: application/sparql-results+json), POST as
application/sparql-query (--get: GET ?query=). It counts the requests that
end in the timed window and their latencies, and checks that every response
is 200 with a SPARQL JSON body, counting its rows.

Each run starts its server afresh (ours: `tacomesh-rdf serve --data FILE
--cores N`, which loads the data; Oxigraph: `oxigraph serve-read-only` over
a store that `oxigraph load` made once, then `oxigraph optimize`d), runs the
client (warm-up, then the window), reads the server's CPU time from /proc,
and stops the server. For each C, a pair is one run of ours for each --cores
value and one of Oxigraph, back to back, in alternating order (pairs 2, 4, ...
Oxigraph first), so that the shared host's load moves both alike; the
report gives each pair's throughput ratio (ours / Oxigraph) and their
median, not bare times. Every query's rows must be the same in every run,
equal to Oxigraph's in the same pair and to --answers (default: the data
directory's lubm1.answers.tsv for an lubm1 file): a fast wrong answer
cannot win.

CPU budget: neither server is pinned; both may use every CPU of the machine,
which the client (and the idle driver) share. tacomesh-rdf serve --cores N
runs N query cores plus core 0, the dispatcher, plus cpp-httplib's HTTP
threads; Oxigraph answers each request on its connection's thread. Runs
with N + 1 > nproc are labelled oversubscribed.

The JSON summary goes to stdout and --output; progress and a markdown table
go to stderr. Exit status: 0; 1 on any error, refused request or row-count
mismatch; 2 for bad usage or a missing program of ours; 77 (skipped) when
the oxigraph executable is not there (pip install oxigraph==0.5.13).
--smoke: one pair at C=1, one --cores value, about 10 s in all.
"""
import argparse
import gzip
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from peers import read_answers  # this directory's: the answers file's reader

SKIP = 77
here = os.path.dirname(os.path.abspath(__file__))
ACCEPT = "application/sparql-results+json"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def fail_usage(msg):
    log(f"endpoint_compare.py: {msg}")
    sys.exit(2)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """User + system CPU time of process pid (all its threads), from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


def threads_of(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def machine():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0)), "cpu_model": model,
            "kernel": platform.release(),
            "client": "the same machine as the servers, over 127.0.0.1"}


class Server:
    """One server process for one run: started, probed until it answers, stopped."""

    def __init__(self, name, argv, url, workdir):
        self.name, self.argv, self.url = name, argv, url
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.proc = None

    def start(self, query, timeout=120):
        t0 = time.perf_counter()
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode} before answering: "
                                   f"{open(self.log_path).read()[-2000:]}")
            try:
                req = urllib.request.Request(self.url, data=query.encode(), method="POST",
                                             headers={"Content-Type": "application/sparql-query", "Accept": ACCEPT})
                with urllib.request.urlopen(req, timeout=5) as r:
                    if r.status == 200:
                        json.load(r)
                        break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not answer within {timeout} s: {open(self.log_path).read()[-2000:]}")
            time.sleep(0.05)
        return time.perf_counter() - t0

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()
        self.proc = None


def load_oxigraph(oxigraph, data, store):
    """oxigraph load (a .gz decompressed into its standard input), then optimize; seconds."""
    base = data[:-3] if data.endswith(".gz") else data
    ext = os.path.splitext(base)[1].lstrip(".") or "nt"
    t0 = time.perf_counter()
    p = subprocess.Popen([oxigraph, "load", "--location", store, "--format", ext], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    opener = gzip.open if data.endswith(".gz") else open
    with opener(data, "rb") as f:
        try:
            shutil.copyfileobj(f, p.stdin, 1 << 20)
        except BrokenPipeError:
            pass
    p.stdin.close()
    out = p.stdout.read().decode(errors="replace")
    if p.wait() != 0:
        raise RuntimeError(f"oxigraph load failed ({p.returncode}): {out[-2000:]}")
    load_s = time.perf_counter() - t0
    r = subprocess.run([oxigraph, "optimize", "--location", store], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"oxigraph optimize failed: {r.stderr[-2000:]}")
    return load_s


def run_client(a, server, conns, queries):
    """One run: the server started, the client's warm-up and window, the server stopped."""
    with open(queries[0]) as f:
        probe = f.read()
    start_s = server.start(probe)
    try:
        pid = server.proc.pid
        cmd = [a.client, "--host", "127.0.0.1", "--port", str(server.port), "--path", server.path,
               "--connections", str(conns), "--warmup", str(a.warmup), "--duration", str(a.duration)]
        if a.get:
            cmd.append("--get")
        cmd += queries
        cpu0, t0 = cpu_seconds(pid), time.perf_counter()
        client = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The server's threads and memory, sampled in the middle of the window.
        time.sleep(a.warmup + a.duration / 2)
        threads, rss = threads_of(pid), rss_mb(pid)
        out, err = client.communicate()
        cpu1, t1 = cpu_seconds(pid), time.perf_counter()
    finally:
        server.stop()
    try:
        r = json.loads(out)
    except ValueError:
        raise RuntimeError(f"the client printed no JSON (exit {client.returncode}): {err[-2000:]}")
    r["client_exit"] = client.returncode
    r["server"] = {"start_s": round(start_s, 3), "threads": threads, "rss_mb": rss,
                   "cpu_s": round(cpu1 - cpu0, 3), "cpu_share": round((cpu1 - cpu0) / (t1 - t0), 3),
                   "cpu_ms_per_request": round((cpu1 - cpu0) * 1e3 / max(1, r["requests_all"]), 4)}
    return r


def summarise(r):
    """A run's figures for the JSON: no raw samples."""
    lat = r["latency"]
    return {"throughput_qps": round(r["throughput_qps"], 2), "requests": r["requests"], "errors": r["errors"],
            "latency_ms": {k: round(lat[f"{k}_ms"], 4) for k in ("p50", "p90", "p99", "mean", "max")},
            "per_query": {q: {"n": v["n"], "p50_ms": round(v["p50_ms"], 4), "p90_ms": round(v["p90_ms"], 4),
                              "p99_ms": round(v["p99_ms"], 4), "rows": v["rows"], "bytes": v["bytes"]}
                          for q, v in r["per_query"].items()},
            "client_cpu_share": round(r["client_cpu_share"], 4), "server": r["server"]}


def check_rows(label, run, expected, problems):
    """Every query answered with one row count, and that the expected one if known."""
    if run["errors"] or run["client_exit"] != 0:
        problems.append(f"{label}: {run['errors']} failed requests, e.g. {run['error_samples'][:3]}")
    for q, v in run["per_query"].items():
        if len(v["rows"]) != 1:
            problems.append(f"{label}: {q} answered with different row counts {v['rows']}")
        elif q in expected and v["rows"][0] != expected[q]:
            problems.append(f"{label}: {q} has {v['rows'][0]} rows, not the expected {expected[q]}")


def med(xs):
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tacomesh", required=True, help="the tacomesh-rdf binary")
    ap.add_argument("--oxigraph", default=shutil.which("oxigraph"), help="the oxigraph executable (PyPI: oxigraph)")
    ap.add_argument("--data", required=True, help="N-Triples (plain or .gz)")
    ap.add_argument("--queries", required=True, help="a directory of *.rq, sent in name order")
    ap.add_argument("--output", help="where to write the JSON summary (also printed on stdout)")
    ap.add_argument("--client", help="rdf_endpoint_load (default: bench/rdf_endpoint_load beside --tacomesh)")
    ap.add_argument("--answers", help="'query.rq<TAB>rows' file; 'none': no expected counts "
                                      "(default: lubm1.answers.tsv beside an lubm1 --data)")
    ap.add_argument("--connections", default="1,4", help="comma-separated C values (default 1,4)")
    ap.add_argument("--pairs", type=int, default=3, help="pairs of runs per C (default 3)")
    ap.add_argument("--cores", default=None, help="tacomesh-rdf serve --cores values, comma-separated "
                                                  "(default: 1,2 and nproc if other)")
    ap.add_argument("--warmup", type=float, default=2.0, help="seconds not counted at the start of a run")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds counted per run")
    ap.add_argument("--get", action="store_true", help="GET ?query= instead of POST application/sparql-query")
    ap.add_argument("--workdir", help="for Oxigraph's store and the servers' logs (default: a temporary directory)")
    ap.add_argument("--smoke", action="store_true", help="one pair at C=1, one --cores value, short runs")
    a = ap.parse_args()

    if not a.oxigraph or not (os.path.isfile(a.oxigraph) and os.access(a.oxigraph, os.X_OK)):
        print(f"SKIPPED: the oxigraph executable is not installed ({a.oxigraph or 'not on PATH'}; "
              "pip install oxigraph==0.5.13 into a venv and pass --oxigraph VENV/bin/oxigraph)")
        sys.exit(SKIP)
    a.client = a.client or os.path.join(os.path.dirname(os.path.abspath(a.tacomesh)), "bench", "rdf_endpoint_load")
    for what, path in (("--tacomesh", a.tacomesh), ("--client", a.client)):
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            fail_usage(f"{what} {path}: no such executable (the client is the target rdf_endpoint_load)")
    if not os.path.isfile(a.data):
        fail_usage(f"--data {a.data}: no such file")
    queries = sorted(os.path.join(a.queries, f) for f in os.listdir(a.queries) if f.endswith(".rq"))
    if not queries:
        fail_usage(f"--queries {a.queries}: no .rq files")
    if a.answers is None:
        guess = os.path.join(os.path.dirname(os.path.abspath(a.data)), "lubm1.answers.tsv")
        a.answers = guess if os.path.basename(a.data).startswith("lubm1-") and os.path.isfile(guess) else "none"
    expected = {} if a.answers == "none" else read_answers(a.answers)

    nproc = os.cpu_count()
    if a.smoke:
        a.pairs, a.warmup, a.duration = 1, 0.5, 2.0
        conns = [1]
        cores = [int(a.cores.split(",")[0])] if a.cores else [min(2, nproc)]
    else:
        conns = [int(c) for c in a.connections.split(",")]
        cores = [int(c) for c in a.cores.split(",")] if a.cores else sorted({1, 2, nproc})
    if a.pairs < 1 or any(c < 1 for c in conns + cores):
        fail_usage("--pairs, --connections and --cores must be at least 1")

    ox_version = subprocess.run([a.oxigraph, "--version"], capture_output=True, text=True).stdout.strip()
    workdir = a.workdir or tempfile.mkdtemp(prefix="endpoint_compare.")
    os.makedirs(workdir, exist_ok=True)
    store = os.path.join(workdir, "oxigraph-store")
    shutil.rmtree(store, ignore_errors=True)
    res = {"machine": machine(), "loadavg_start": os.getloadavg()}
    log(f"machine: nproc {nproc}, {res['machine']['cpu_model']}; the client runs on this machine too")
    log(f"oxigraph load + optimize of {a.data} into {store}")
    ox_load_s = load_oxigraph(a.oxigraph, a.data, store)

    def ours(n):
        port = free_port()
        s = Server(f"tacomesh-cores{n}", [a.tacomesh, "serve", "--data", a.data, "--port", str(port), "--cores", str(n),
                                          "--quiet"], f"http://127.0.0.1:{port}/sparql", workdir)
        s.port, s.path = port, "/sparql"
        return s

    def oxi():
        port = free_port()
        s = Server("oxigraph", [a.oxigraph, "serve-read-only", "--location", store, "--bind", f"127.0.0.1:{port}"],
                   f"http://127.0.0.1:{port}/query", workdir)
        s.port, s.path = port, "/query"
        return s

    def oversubscribed(n):
        return n + 1 > nproc

    res["setup"] = {
        "data": os.path.basename(a.data), "queries": [os.path.basename(q) for q in queries],
        "request": ("GET ?query=" if a.get else "POST application/sparql-query") + f", Accept: {ACCEPT}, keep-alive",
        "client": "rdf_endpoint_load (C++, HTTP/1.1 on a plain socket): C connections, each sending the queries "
                  "in turn, the next when the last is answered; connection k starts at query k*14/C",
        "warmup_s": a.warmup, "window_s": a.duration, "pairs": a.pairs, "connections": conns,
        "order": "each pair: ours at each --cores value, then Oxigraph; pairs 2, 4, ... Oxigraph first; "
                 "every run starts its server afresh",
        "cpu_budget": f"neither server pinned: both may use all {nproc} CPUs, shared with the client on the "
                      f"same machine. tacomesh-rdf serve --cores N = N query cores + core 0 (dispatcher) + "
                      f"HTTP threads; Oxigraph: a thread per connection",
        "tacomesh": {f"cores={n}": ("oversubscribed: " if oversubscribed(n) else "") +
                     f"{n} query core{'s' if n > 1 else ''} + dispatcher = {n + 1} core threads on {nproc} CPUs"
                     for n in cores},
        "oxigraph": {"version": ox_version, "store": "RocksDB directory: oxigraph load, then oxigraph optimize",
                     "server": "oxigraph serve-read-only", "load_and_optimize_s": round(ox_load_s, 2)},
        "expected_rows": expected, "answers_file": None if a.answers == "none" else os.path.basename(a.answers),
    }
    problems = []
    res["runs"] = {}
    for c in conns:
        pairs = []
        for p in range(a.pairs):
            order = [("ours", n) for n in cores] + [("oxigraph", None)]
            if p % 2 == 1:
                order = order[-1:] + order[:-1]
            pair = {"ours": {}, "oxigraph": None}
            for who, n in order:
                label = f"C={c} pair {p + 1}: " + (f"tacomesh --cores {n}" if who == "ours" else "oxigraph")
                r = run_client(a, ours(n) if who == "ours" else oxi(), c, queries)
                log(f"{label}: {r['throughput_qps']:.1f} q/s, p50 {r['latency']['p50_ms']:.3f} ms, "
                    f"p99 {r['latency']['p99_ms']:.3f} ms, errors {r['errors']}, client CPU "
                    f"{100 * r['client_cpu_share']:.0f}%, server CPU {100 * r['server']['cpu_share']:.0f}%")
                check_rows(label, r, expected if who == "ours" else {}, problems)
                s = summarise(r)
                if who == "ours":
                    pair["ours"][f"cores={n}"] = s
                else:
                    pair["oxigraph"] = s
            ox = pair["oxigraph"]
            for key, s in pair["ours"].items():
                for q, v in s["per_query"].items():
                    if v["rows"] != ox["per_query"][q]["rows"]:
                        problems.append(f"C={c} pair {p + 1}: {q} rows: ours ({key}) {v['rows']}, "
                                        f"Oxigraph {ox['per_query'][q]['rows']}")
            pair["ratio"] = {k: round(s["throughput_qps"] / ox["throughput_qps"], 3) if ox["throughput_qps"] else None
                             for k, s in pair["ours"].items()}
            pairs.append(pair)

        def median_run(runs):
            """Medians over the pairs of a server's throughput and percentiles."""
            qs = runs[0]["per_query"].keys()
            return {"throughput_qps": round(med([r["throughput_qps"] for r in runs]), 2),
                    "latency_ms": {k: round(med([r["latency_ms"][k] for r in runs]), 4) for k in ("p50", "p90", "p99")},
                    "per_query_ms": {q: {k: round(med([r["per_query"][q][f"{k}_ms"] for r in runs]), 4)
                                         for k in ("p50", "p90", "p99")} for q in qs},
                    "client_cpu_share": round(med([r["client_cpu_share"] for r in runs]), 4),
                    "server_cpu_share": round(med([r["server"]["cpu_share"] for r in runs]), 3),
                    "server_cpu_ms_per_request": round(med([r["server"]["cpu_ms_per_request"] for r in runs]), 4),
                    "server_threads": runs[0]["server"]["threads"]}

        summary = {"oxigraph": median_run([p["oxigraph"] for p in pairs]), "ours": {}, "ratio": {},
                   "rows": {q: v["rows"][0] if len(v["rows"]) == 1 else v["rows"]
                            for q, v in pairs[0]["oxigraph"]["per_query"].items()}}
        for key in pairs[0]["ours"]:
            summary["ours"][key] = median_run([p["ours"][key] for p in pairs])
            rs = [p["ratio"][key] for p in pairs]
            summary["ratio"][key] = {"per_pair": rs, "median": round(med(rs), 3), "min": min(rs)}
        summary["best_cores"] = max(summary["ratio"], key=lambda k: summary["ratio"][k]["median"])
        # The pairs keep each run's overall figures; the per-query ones are in the summary.
        for pair in pairs:
            for r in list(pair["ours"].values()) + [pair["oxigraph"]]:
                del r["per_query"]
        res["runs"][f"C={c}"] = {"summary": summary, "pairs": pairs}

    # The best --cores: the highest median ratio at the most C values, ties to the higher sum.
    keys = list(res["runs"][f"C={conns[0]}"]["summary"]["ratio"])
    wins = {k: sum(res["runs"][f"C={c}"]["summary"]["best_cores"] == k for c in conns) for k in keys}
    total = {k: sum(res["runs"][f"C={c}"]["summary"]["ratio"][k]["median"] for c in conns) for k in keys}
    res["best_cores"] = max(keys, key=lambda k: (wins[k], total[k]))
    # Per C, the best --cores: its median ratio, throughputs and overall percentiles.
    res["headline"] = {}
    for c in conns:
        s = res["runs"][f"C={c}"]["summary"]
        k = s["best_cores"]
        res["headline"][f"C={c}"] = {
            "best_cores": k, "ratio_median": s["ratio"][k]["median"], "ratio_per_pair": s["ratio"][k]["per_pair"],
            "ours_qps": s["ours"][k]["throughput_qps"], "oxigraph_qps": s["oxigraph"]["throughput_qps"],
            "ours_latency_ms": s["ours"][k]["latency_ms"], "oxigraph_latency_ms": s["oxigraph"]["latency_ms"]}
    res["loadavg_end"] = os.getloadavg()
    res["problems"] = problems
    res["ok"] = not problems

    out = json.dumps(res, indent=1)
    if a.output:
        with open(a.output, "w") as f:
            f.write(out + "\n")
    print(out)

    # The markdown table, on stderr.
    log("")
    log("| C | server | q/s (median) | ratio ours/Oxigraph per pair (median) | p50 ms | p90 ms | p99 ms | server CPU ms/req |")
    log("|---|---|---|---|---|---|---|---|")
    for c in conns:
        s = res["runs"][f"C={c}"]["summary"]
        for key, v in s["ours"].items():
            r = s["ratio"][key]
            label = f"tacomesh {key.replace('=', ' ')}" + (" (oversubscribed)" if oversubscribed(int(key.split('=')[1])) else "")
            log(f"| {c} | {label} | {v['throughput_qps']:.0f} | {', '.join(f'{x:.2f}' for x in r['per_pair'])} "
                f"(**{r['median']:.2f}**) | {v['latency_ms']['p50']:.3f} | {v['latency_ms']['p90']:.3f} | "
                f"{v['latency_ms']['p99']:.3f} | {v['server_cpu_ms_per_request']:.3f} |")
        v = s["oxigraph"]
        log(f"| {c} | Oxigraph {ox_version.split()[-1] if ox_version else ''} | {v['throughput_qps']:.1f} | | "
            f"{v['latency_ms']['p50']:.3f} | {v['latency_ms']['p90']:.3f} | {v['latency_ms']['p99']:.3f} | "
            f"{v['server_cpu_ms_per_request']:.3f} |")
    log(f"best --cores: {res['best_cores']}; machine: nproc {nproc}, client on the same machine")
    for p in problems:
        log(f"PROBLEM: {p}")
    if a.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(0 if not problems else 1)


if __name__ == "__main__":
    main()
