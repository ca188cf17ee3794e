#!/usr/bin/env bash
# The hot-path speed targets, each a same-run ratio against its
# raw baseline, RUNS times in fresh processes (3 by default), so that a
# target that holds only in some runs shows:
#
#   polling round trip     / raw ring round trip       <= 1.5   bench_invocation
#   one-way rate           / raw ring rate             >= 0.5   bench_invocation
#   protothread resume     / plain non-inlined call    <= 2.0   bench_tasks
#   coroutine switch       / inline Boost.Context fiber <= 1.3  bench_tasks
#   2-core reduce          / MPI_Allreduce (2 ranks)   <= 1.0   run_allreduce_compare.sh (if MPI is built)
#
#   bench/run_targets.sh BUILD_DIR [RUNS]
#
# Run it on a quiet machine (no build, no other benchmark): the pairs
# alternate, but two timing jobs at once still disturb each other. Prints
# one JSON object; "all_met" is true only if every run of every target held.
# Exits non-zero if a benchmark fails (not if a target is missed).
set -euo pipefail

build=${1:?usage: run_targets.sh BUILD_DIR [RUNS]}
runs=${2:-3}
bin=$build/bench
[[ -x $bin/bench_invocation ]] || bin=$build
for exe in bench_invocation bench_tasks; do
    [[ -x $bin/$exe ]] || { echo "run_targets: $bin/$exe not built" >&2; exit 2; }
done
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for ((r = 1; r <= runs; r++)); do
    timeout 600 "$bin/bench_invocation" --benchmark_filter='^(polling_round_trip|one_way_rate)/' \
        --benchmark_format=json </dev/null >"$tmp/inv_$r.json"
    timeout 600 "$bin/bench_tasks" --benchmark_filter='^(protothread_resume|coroutine_switch)/direct/' \
        --benchmark_format=json </dev/null >"$tmp/tasks_$r.json"
    if [[ -x $bin/mpi_allreduce ]] && command -v mpirun >/dev/null; then
        ROUNDS=1 "$here/run_allreduce_compare.sh" "$build" >"$tmp/reduce_$r.json"
    fi
done

python3 - "$tmp" "$runs" <<'PY'
import json, os, sys
tmp, runs = sys.argv[1], int(sys.argv[2])
# name prefix in the benchmark JSON, file, target, True if higher is better
targets = {
    "polling_round_trip": ("inv", 1.5, False),
    "one_way_rate": ("inv", 0.5, True),
    "protothread_resume/direct": ("tasks", 2.0, False),
    "coroutine_switch/direct": ("tasks", 1.3, False),
}
out, all_met, oversubscribed = {}, True, False
for name, (file, target, higher) in targets.items():
    ratios, base_ns = [], []
    for r in range(1, runs + 1):
        with open(f"{tmp}/{file}_{r}.json") as f:
            bench = json.load(f)["benchmarks"]
        b = next(b for b in bench if b["name"].startswith(name + "/"))
        if b.get("error_occurred"):
            sys.exit(f"run_targets: {name} failed: {b.get('error_message')}")
        ratios.append(round(b["ratio_median"], 3))
        base_ns.append(round(b["base_ns"], 1))
        oversubscribed |= bool(b.get("oversubscribed"))
    met = all((x >= target) if higher else (x <= target) for x in ratios)
    all_met &= met
    # base_ns: the baseline's time per operation in each run; for the round
    # trip it tells the host's phase (raw ring ~100 ns fast, ~400 ns slow).
    out[name] = {"ratios": ratios, "base_ns": base_ns, "target": (">= " if higher else "<= ") + str(target),
                 "met_in_every_run": met}
if os.path.exists(f"{tmp}/reduce_1.json"):
    ratios = []
    for r in range(1, runs + 1):
        with open(f"{tmp}/reduce_{r}.json") as f:
            ratios.append(json.load(f)["ratio_median"])
    met = all(x <= 1.0 for x in ratios)
    all_met &= met
    out["reduce_2core_vs_mpi_allreduce"] = {"ratios": ratios, "target": "<= 1.0", "met_in_every_run": met}
print(json.dumps({"benchmark": "hot_path_targets", "runs": runs, "oversubscribed": oversubscribed,
                  "targets": out, "all_met": all_met}, indent=1))
PY
