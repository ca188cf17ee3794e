#!/usr/bin/env python3
"""The store sharded over MPI ranks (`tacomesh-rdf --model shard`) against
the single store on one core, in the same run, alternating: per-rank
resident memory against the one process's, and the LUBM queries' times.

    apps/rdf/bench/shard_compare.py --cli build/apps/rdf/tacomesh-rdf \\
        --data lubm10.store --answers apps/rdf/data/lubm10.answers.tsv \\
        --ranks 1 2 4 --rounds 2 --runs 5 --output shard_compare.json

One core: `bench --model single` under /usr/bin/time (its peak resident
memory, the whole store in one process). Sharded: `bench --model shard
--platform mpi` under mpirun, whose JSON gives each rank's part and its
process's resident memory after the load (VmRSS) and peak (VmHWM). Rank 0
reads the data and deals it out, so its peak holds the whole store once;
the other ranks never do. More ranks than CPUs are oversubscribed: the
report says so, and their times are not speed-ups.

Each query's row count is checked against --answers (a `qNN.rq rows` file)
where given; a wrong count fails the run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = HERE.parent / "data" / "queries"


def read_answers(path: Path) -> dict[str, int]:
    out = {}
    for line in path.read_text().splitlines():
        f = line.split()
        if f and not f[0].startswith("#"):
            out[f[0]] = int(f[1])
    return out


def run_single(cli: str, data: str, queries: list[str], runs: int) -> dict:
    with tempfile.NamedTemporaryFile("r") as peak:
        out = subprocess.run(["/usr/bin/time", "-o", peak.name, "-f", "%M", cli, "bench", "--model", "single", "--quiet",
                              "--json", "--runs", str(runs), "--data", data, *queries],
                             check=True, capture_output=True, text=True).stdout
        report = json.loads(out)
        report["peak_resident_bytes"] = int(peak.read().split()[-1]) * 1024
    return report


def run_sharded(cli: str, mpirun: list[str], ranks: int, data: str, queries: list[str], runs: int) -> dict:
    out = subprocess.run([*mpirun, "-np", str(ranks), cli, "bench", "--model", "shard", "--platform", "mpi", "--quiet",
                          "--json", "--runs", str(runs), "--data", data, *queries],
                         check=True, capture_output=True, text=True,
                         env={**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}).stdout
    return json.loads(out)


def medians(report: dict, model: str) -> dict[str, tuple[int, float]]:
    return {q["query"]: (q["rows"], q["median_ms"]) for q in report[model]["queries"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--data", required=True, help="N-Triples or a store file (tacomesh-rdf load)")
    ap.add_argument("--answers", type=Path, help="qNN.rq rows per line: each count is checked")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mpirun", default="mpirun --oversubscribe --allow-run-as-root --mca btl self,vader")
    ap.add_argument("--output", help="the figures as JSON to this file ('-': standard output, the table then on stderr)")
    a = ap.parse_args()
    table = sys.stderr if a.output == "-" else sys.stdout
    queries = [str(QUERIES / f"q{i:02d}.rq") for i in range(1, 15)]
    expected = read_answers(a.answers) if a.answers else None
    cpus = os.cpu_count() or 1
    single_runs, sharded_runs = [], {n: [] for n in a.ranks}
    for _ in range(a.rounds):  # alternating, so the host's phases fall on both
        single_runs.append(run_single(a.cli, a.data, queries, a.runs))
        for n in a.ranks:
            sharded_runs[n].append(run_sharded(a.cli, a.mpirun.split(), n, a.data, queries, a.runs))
    wrong = []

    def check(label: str, m: dict[str, tuple[int, float]]) -> None:
        for q, (rows, _) in m.items():
            if expected is not None and rows != expected.get(q):
                wrong.append(f"{label}: {q}: {rows} rows, expected {expected.get(q)}")

    one = [medians(r, "single") for r in single_runs]
    for m in one:
        check("one core", m)
    mb = lambda b: b / 2**20
    whole_peak = statistics.median(r["peak_resident_bytes"] for r in single_runs)
    result = {"data": a.data, "cpus": cpus, "rounds": a.rounds, "runs": a.runs,
              "single": {"peak_resident_bytes": whole_peak,
                         "sum_ms": statistics.median(r["single"]["sum_ms"] for r in single_runs)},
              "sharded": {}}
    print(file=table, *[f"{a.data}: {single_runs[0]['triples']} triples; one core: peak resident {mb(whole_peak):.1f} MB, "
          f"the 14 queries {result['single']['sum_ms']:.2f} ms (sum of medians)"])
    print("| ranks | per rank: indexes MB | dictionary MB | resident after load MB (rank 0; others max) "
          "| peak MB (rank 0; others max) | 14 queries / one core (per round) |", file=table)
    print("|---|---|---|---|---|---|", file=table)
    for n in a.ranks:
        runs = sharded_runs[n]
        for r in runs:
            check(f"{n} ranks", medians(r, "shard"))
        shards = runs[-1]["shards"]
        others = shards[1:] or shards
        ratios = [r["shard"]["sum_ms"] / s["single"]["sum_ms"] for r, s in zip(runs, single_runs)]
        per_query = {q: statistics.median(medians(r, "shard")[q][1] / o[q][1] if o[q][1] > 0 else 0 for r, o in zip(runs, one))
                     for q in one[0]}
        result["sharded"][str(n)] = {
            "oversubscribed": n > cpus, "shards": shards, "sum_ms": [r["shard"]["sum_ms"] for r in runs],
            "sum_ratio_to_one_core": ratios, "sum_ratio_median": statistics.median(ratios),
            "largest_index_bytes": max(s["index_bytes"] for s in shards),
            "rank0_peak_resident_bytes": shards[0]["peak_resident_bytes"],
            "others_max_resident_bytes": max(s["resident_bytes"] for s in others),
            "per_query_ratio_to_one_core": per_query}
        print(f"| {n}{' (oversubscribed)' if n > cpus else ''} | {max(mb(s['index_bytes']) for s in shards):.1f} "
              f"| {mb(shards[0]['dictionary_bytes']):.1f} | {mb(shards[0]['resident_bytes']):.1f}; "
              f"{max(mb(s['resident_bytes']) for s in others):.1f} | {mb(shards[0]['peak_resident_bytes']):.1f}; "
              f"{max(mb(s['peak_resident_bytes']) for s in others):.1f} | {', '.join(f'{x:.2f}x' for x in ratios)} |", file=table)
    if a.output == "-":
        print(json.dumps(result, indent=1))
    elif a.output:
        Path(a.output).write_text(json.dumps(result, indent=1) + "\n")
    for w in wrong:
        print("WRONG:", w, file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
