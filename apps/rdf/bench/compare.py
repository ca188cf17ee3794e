#!/usr/bin/env python3
"""tacomesh-rdf against its peers in the same run (apps/rdf/README.md).

Alternates, ROUNDS times, our benchmark binary (bench_rdf: load, the 14
queries on one core, the SPARQL 1.1 feature queries of data/queries11 on one
core, data-parallel latency on LUBM(1) and LUBM(5) and
task-parallel throughput on 1 and 2 cores, inference) and peers.py (pyoxigraph: load, memory, the same
14 queries; owlrl: the closure, once, with --owlrl), so that the host's
vCPU placement moves both alike. Reports ratios, not bare times, as JSON
and as a markdown table.

  compare.py --bench build/apps/rdf/bench_rdf --python VENV/bin/python [--rounds 3] [--owlrl]
             [--output results.json]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
data = os.path.join(here, "..", "data")


def run_ours(bench, smoke):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        flt = "load|query/|sparql11/|data5?/q../threads/cores:[12]/|task/threads/cores:[12]/|infer/threads/cores:[12]/"
        env = dict(os.environ, **({"BENCH_SMOKE": "1"} if smoke else {}))
        subprocess.run([bench, f"--benchmark_filter={flt}", f"--benchmark_out={out.name}", "--benchmark_out_format=json"],
                       check=True, stdout=subprocess.DEVNULL, env=env)
        b = json.load(open(out.name))["benchmarks"]
    # Google Benchmark times in the unit the entry names; make everything ms.
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    return {x["name"].split("/iterations")[0].split("/manual_time")[0]: dict(x, ms=x["real_time"] * scale[x["time_unit"]]) for x in b}


def run_peer(python, modes, smoke, queries="queries", expected="lubm"):
    args = [python, os.path.join(here, "peers.py"), "--data", os.path.join(data, "lubm1-inferred.nt.gz"),
            "--queries", os.path.join(data, queries), "--only", modes, "--expected", expected]
    if "infer" in modes:
        args += ["--infer-data", os.path.join(data, "lubm1-raw.nt.gz"), "--ontology", os.path.join(data, "univ-bench.owl")]
    if smoke:
        args += ["--runs", "1", "--load-runs", "1"]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="bench_rdf binary")
    ap.add_argument("--python", default=sys.executable, help="a Python with requirements.txt installed")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--owlrl", action="store_true", help="also time owlrl's closure (about a minute)")
    ap.add_argument("--smoke", action="store_true", help="tiny runs: checks the script, not the speed")
    ap.add_argument("--output")
    a = ap.parse_args()

    ours, peers = [], []
    for r in range(a.rounds):
        print(f"round {r + 1}/{a.rounds}: bench_rdf", file=sys.stderr)
        ours.append(run_ours(a.bench, a.smoke))
        modes = "load,memory,queries" + (",infer" if a.owlrl and r == 0 else "")
        print(f"round {r + 1}/{a.rounds}: peers ({modes})", file=sys.stderr)
        peers.append(run_peer(a.python, modes, a.smoke))
        # The SPARQL 1.1 feature queries (data/queries11), in the same round.
        peers[-1]["queries11"] = run_peer(a.python, "queries", a.smoke, "queries11", "none")["queries"]

    med = statistics.median
    def o(name, key="ms"):
        return med(x[name][key] for x in ours)
    qs = [f"q{i:02d}" for i in range(1, 15)]
    res = {"rounds": a.rounds, "peer": peers[0]["peer"], "queries": {}}
    load_ratio = [x["load/lubm1_inferred"]["ms"] / (p["load"]["median_s"] * 1e3) for x, p in zip(ours, peers)]
    res["load"] = {"ours_ms": o("load/lubm1_inferred"), "pyoxigraph_ms": med(p["load"]["median_s"] * 1e3 for p in peers),
                   "ratio": med(load_ratio), "target": "<= 0.5"}
    res["memory"] = {"ours_bytes_per_triple": o("load/lubm1_inferred", "bytes_per_triple"),
                     "pyoxigraph_bytes_per_triple": med(p["memory"]["bytes_per_triple"] for p in peers)}
    sums = []
    for x, p in zip(ours, peers):
        sums.append((sum(x[f"query/{q}"]["ms"] for q in qs), sum(p["queries"]["per_query"][q]["median_ms"] for q in qs)))
    for q in qs:
        ratio = med(x[f"query/{q}"]["ms"] / p["queries"]["per_query"][q]["median_ms"] for x, p in zip(ours, peers))
        res["queries"][q] = {"ours_ms": o(f"query/{q}"), "pyoxigraph_ms": med(p["queries"]["per_query"][q]["median_ms"] for p in peers),
                             "ratio": ratio, "rows": ours[0][f"query/{q}"]["rows"]}
    res["sum"] = {"ours_ms": med(s[0] for s in sums), "pyoxigraph_ms": med(s[1] for s in sums),
                  "ratio": med(s[0] / s[1] for s in sums), "target": "<= 0.5, and no query slower"}
    # Each SPARQL 1.1 feature query: our time over pyoxigraph's, and whether
    # the two found the same number of solutions (the differential test
    # compares the answers themselves).
    res["sparql11"] = {}
    for name in sorted(k.split("/", 1)[1] for k in ours[0] if k.startswith("sparql11/")):
        pq = [p["queries11"]["per_query"][name] for p in peers]
        res["sparql11"][name] = {"ours_ms": o(f"sparql11/{name}"), "pyoxigraph_ms": med(q["median_ms"] for q in pq),
                                 "ratio": med(x[f"sparql11/{name}"]["ms"] / q["median_ms"] for x, q in zip(ours, pq)),
                                 "rows": ours[0][f"sparql11/{name}"]["rows"], "pyoxigraph_rows": pq[0]["rows"],
                                 "target": "<= 0.5"}
    if res["sparql11"]:
        res["sparql11_max_ratio"] = max(v["ratio"] for v in res["sparql11"].values())
        res["sparql11_rows_agree"] = all(v["rows"] == v["pyoxigraph_rows"] for v in res["sparql11"].values())
    res["task_speedup_2v1"] = med(x["task/threads/cores:2"]["queries_per_s"] / x["task/threads/cores:1"]["queries_per_s"] for x in ours)
    for key, dataset in (("data_speedup_2v1", "data"), ("data5_speedup_2v1", "data5")):
        if f"{dataset}/q02/threads/cores:1" in ours[0]:  # no LUBM(5) entries in a smoke run
            res[key] = {q: med(x[f"{dataset}/{q}/threads/cores:1"]["ms"] / x[f"{dataset}/{q}/threads/cores:2"]["ms"] for x in ours)
                        for q in ("q02", "q06", "q08", "q09", "q14")}
    res["infer"] = {"ours_1core_ms": o("infer/threads/cores:1"), "ours_2core_ms": o("infer/threads/cores:2"),
                    "added": ours[0]["infer/threads/cores:1"]["added"]}
    if "infer" in peers[0] and isinstance(peers[0]["infer"], dict) and "expand_s" in peers[0]["infer"]:
        pi = peers[0]["infer"]
        res["infer"].update(owlrl_ms=pi["expand_s"] * 1e3, owlrl_added=pi["triples_added"],
                            ratio_1core=res["infer"]["ours_1core_ms"] / (pi["expand_s"] * 1e3))

    out = json.dumps(res, indent=1)
    if a.output:
        open(a.output, "w").write(out + "\n")
    else:
        print(out)
    t = ["| measure | tacomesh-rdf | peer | ratio (target) |", "|---|---|---|---|",
         f"| load, 185k triples (.gz) | {res['load']['ours_ms']:.0f} ms | {res['load']['pyoxigraph_ms']:.0f} ms | {res['load']['ratio']:.2f} (<= 0.5) |",
         f"| memory | {res['memory']['ours_bytes_per_triple']:.0f} B/triple | {res['memory']['pyoxigraph_bytes_per_triple']:.0f} B/triple | "
         f"{res['memory']['ours_bytes_per_triple'] / res['memory']['pyoxigraph_bytes_per_triple']:.2f} (<= 1) |",
         f"| sum of Q1..Q14, one core | {res['sum']['ours_ms']:.2f} ms | {res['sum']['pyoxigraph_ms']:.1f} ms | {res['sum']['ratio']:.3f} (<= 0.5) |",
         f"| slowest query ratio | | | {max(v['ratio'] for v in res['queries'].values()):.3f} (<= 1) |",
         f"| task-parallel, 2 cores vs 1 | | | {res['task_speedup_2v1']:.2f}x (>= 1.8) |"]
    for name, v in res["sparql11"].items():
        t.append(f"| SPARQL 1.1 {name}, one core | {v['ours_ms']:.3f} ms | {v['pyoxigraph_ms']:.3f} ms | {v['ratio']:.3f} (<= 0.5)"
                 + ("" if v["rows"] == v["pyoxigraph_rows"] else f" ROWS DIFFER: {v['rows']} vs {v['pyoxigraph_rows']}") + " |")
    for key, name in (("data_speedup_2v1", "LUBM(1)"), ("data5_speedup_2v1", "LUBM(5)")):
        for q, s in res.get(key, {}).items():
            t.append(f"| data-parallel {q}, {name}, 2 cores vs 1 | | | {s:.2f}x (>= 1.6) |")
    if "owlrl_ms" in res["infer"]:
        t.append(f"| inference, lubm1-raw | {res['infer']['ours_1core_ms']:.0f} ms (+{res['infer']['added']:.0f}) | "
                 f"{res['infer']['owlrl_ms']:.0f} ms (+{res['infer']['owlrl_added']}) | {res['infer']['ratio_1core']:.4f} |")
    print("\n".join(t), file=sys.stderr)


if __name__ == "__main__":
    main()
