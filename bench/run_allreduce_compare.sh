#!/usr/bin/env bash
# Compare taco's 2-core reduce with MPI_Allreduce on 2 ranks, in the same
# session, alternating: each round runs both (the order flips every round),
# and the figure per size is the median of the per-round ratios taco / MPI.
# Single runs minutes apart mean little here: the host moves the vCPUs and
# the cross-core latency changes by ~4x.
#   one double:            bench_collective reduce_2core          vs MPI_Allreduce(count 1)
#   n = 64, 4096, 1048576: bench_collective reduce_vector/count:n vs MPI_Allreduce(count n)
#                          (a vector of n doubles, taco::elementwise(std::plus<double>{}))
#
#   bench/run_allreduce_compare.sh BUILD_DIR          (ROUNDS=5 by default)
#
# Env: ROUNDS, COUNTS (default "64 4096 1048576"), MPIRUN_FLAGS (default
# "--mca btl self,vader": shared memory, the fastest transport here),
# BENCH_SMOKE=1 (tiny sizes, for CI).
# Prints one JSON object on stdout; exits non-zero if a run fails.
set -euo pipefail

build=${1:?usage: run_allreduce_compare.sh BUILD_DIR}
rounds=${ROUNDS:-5}
counts=${COUNTS:-64 4096 1048576}
mpirun_flags=${MPIRUN_FLAGS:---mca btl self,vader}
target=1.0
bin=$build/bench
[[ -x $bin/bench_collective ]] || bin=$build
for exe in bench_collective mpi_allreduce; do
    [[ -x $bin/$exe ]] || { echo "run_allreduce_compare: $bin/$exe not built" >&2; exit 2; }
done
command -v mpirun >/dev/null || { echo "run_allreduce_compare: mpirun not found" >&2; exit 2; }
smoke=0
[[ -n ${BENCH_SMOKE:-} && ${BENCH_SMOKE} != 0 ]] && smoke=1

# CI runs as root with no stdin: Open MPI refuses root unless told twice.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Batches and operations per batch of reduce_vector/count:n (bench_collective.cpp,
# vector_pairs / vector_batch), so that MPI times batches of the same length.
vector_ops() { if ((smoke)); then echo 1; else echo $((65536 / $1 > 0 ? 65536 / $1 : 1)); fi; }
vector_batches() { if ((smoke)); then echo 2; elif (($1 >= 1048576)); then echo 30; else echo 100; fi; }

mpi_once() { # output file, mpi_allreduce args...
    local out=$1; shift
    # shellcheck disable=SC2086  # flags are a word list on purpose
    timeout 300 mpirun --allow-run-as-root --oversubscribe $mpirun_flags -np 2 "$bin/mpi_allreduce" "$@" \
        </dev/null >"$out" 2>"$out.err" ||
        { cat "$out.err" >&2; echo "run_allreduce_compare: mpi_allreduce $* failed" >&2; exit 1; }
}
run_mpi() {
    mpi_once "$tmp/mpi_$1_1.json"
    for n in $counts; do
        mpi_once "$tmp/mpi_$1_$n.json" --count "$n" --ops "$(vector_ops "$n")" --batches "$(vector_batches "$n")"
    done
}
run_taco() {
    timeout 600 "$bin/bench_collective" --benchmark_filter='^reduce_(2core|vector)' --benchmark_format=json \
        </dev/null >"$tmp/taco_$1.json" 2>"$tmp/taco_$1.err" ||
        { cat "$tmp/taco_$1.err" >&2; echo "run_allreduce_compare: bench_collective failed" >&2; exit 1; }
}

for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then run_mpi "$r"; run_taco "$r"; else run_taco "$r"; run_mpi "$r"; fi
done

python3 - "$tmp" "$rounds" "$mpirun_flags" "$target" "$counts" <<'PY'
import json, statistics, sys
tmp, rounds, flags, target, counts = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5].split()
def mpi(r, n):
    with open(f"{tmp}/mpi_{r}_{n}.json") as f:
        return json.loads(f.read().strip().splitlines()[-1])
def taco(r, name):
    with open(f"{tmp}/taco_{r}.json") as f:
        b = next((b for b in json.load(f)["benchmarks"] if b["name"].startswith(name + "/") or b["name"] == name), None)
    if b is None or b.get("error_occurred"):
        sys.exit(f"run_allreduce_compare: {name} failed: {b and b.get('error_message')}")
    return b
sizes = {}
for n, name in [("1", "reduce_2core")] + [(n, f"reduce_vector/count:{n}") for n in counts]:
    out = []
    for r in range(1, rounds + 1):
        m, t = mpi(r, n), taco(r, name)
        if n != "1" and int(t["batch"]) != m["ops_per_batch"]:
            sys.exit(f"run_allreduce_compare: {name} timed batches of {t['batch']}, MPI of {m['ops_per_batch']}")
        row = {"round": r, "mpi_allreduce_ns": m["median_ns"], "taco_reduce_ns": round(t["ours_ns"], 1),
               # taco's baseline in the same run: the round trip (one double),
               # or fetching one member's vector (n doubles)
               "taco_base_ns": round(t["base_ns"], 1),
               "ratio_taco_mpi": round(t["ours_ns"] / m["median_ns"], 3)}
        out.append(row)
    ratio = statistics.median(r["ratio_taco_mpi"] for r in out)
    sizes[n] = {"count": int(n), "bytes": 8 * int(n), "rounds": out, "ratio_median": round(ratio, 3),
                "target_met": ratio <= target}
one = sizes["1"]
print(json.dumps({"benchmark": "taco_reduce_vs_mpi_allreduce", "mpirun_flags": flags, "target": target,
                  # the one-double figures at the top, as before
                  "bytes": 8, "rounds": one["rounds"], "ratio_median": one["ratio_median"],
                  "target_met": all(s["target_met"] for s in sizes.values()),
                  "counts": {n: s for n, s in sizes.items() if n != "1"}}, indent=1))
PY
