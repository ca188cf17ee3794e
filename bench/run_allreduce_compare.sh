#!/usr/bin/env bash
# Compare taco's 2-core reduce of one double (bench_collective reduce_2core)
# with MPI_Allreduce of one double on 2 ranks, in the same session,
# alternating: each round runs both (the order flips every round), and the
# figure is the median of the per-round ratios taco / MPI. Single runs
# minutes apart mean little here: the host moves the vCPUs and the cross-core
# latency changes by ~4x.
#
#   bench/run_allreduce_compare.sh BUILD_DIR          (ROUNDS=5 by default)
#
# Env: ROUNDS, MPIRUN_FLAGS (default "--mca btl self,vader": shared memory,
# the fastest transport here), BENCH_SMOKE=1 (tiny sizes, for CI).
# Prints one JSON object on stdout; exits non-zero if a run fails.
set -euo pipefail

build=${1:?usage: run_allreduce_compare.sh BUILD_DIR}
rounds=${ROUNDS:-5}
mpirun_flags=${MPIRUN_FLAGS:---mca btl self,vader}
target=1.0
bin=$build/bench
[[ -x $bin/bench_collective ]] || bin=$build
for exe in bench_collective mpi_allreduce; do
    [[ -x $bin/$exe ]] || { echo "run_allreduce_compare: $bin/$exe not built" >&2; exit 2; }
done
command -v mpirun >/dev/null || { echo "run_allreduce_compare: mpirun not found" >&2; exit 2; }

# CI runs as root with no stdin: Open MPI refuses root unless told twice.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_mpi() {
    # shellcheck disable=SC2086  # flags are a word list on purpose
    timeout 300 mpirun --allow-run-as-root --oversubscribe $mpirun_flags -np 2 "$bin/mpi_allreduce" \
        </dev/null >"$tmp/mpi_$1.json" 2>"$tmp/mpi_$1.err" ||
        { cat "$tmp/mpi_$1.err" >&2; echo "run_allreduce_compare: mpi_allreduce failed" >&2; exit 1; }
}
run_taco() {
    timeout 300 "$bin/bench_collective" --benchmark_filter='^reduce_2core' --benchmark_format=json \
        </dev/null >"$tmp/taco_$1.json" 2>"$tmp/taco_$1.err" ||
        { cat "$tmp/taco_$1.err" >&2; echo "run_allreduce_compare: bench_collective failed" >&2; exit 1; }
}

for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then run_mpi "$r"; run_taco "$r"; else run_taco "$r"; run_mpi "$r"; fi
done

python3 - "$tmp" "$rounds" "$mpirun_flags" "$target" <<'PY'
import json, statistics, sys
tmp, rounds, flags, target = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
out = []
for r in range(1, rounds + 1):
    with open(f"{tmp}/mpi_{r}.json") as f:
        mpi = json.loads(f.read().strip().splitlines()[-1])
    with open(f"{tmp}/taco_{r}.json") as f:
        bench = json.load(f)["benchmarks"]
    taco = next(b for b in bench if b["name"].startswith("reduce_2core"))
    if taco.get("error_occurred"):
        sys.exit(f"run_allreduce_compare: reduce_2core failed: {taco.get('error_message')}")
    out.append({"round": r, "mpi_allreduce_ns": mpi["median_ns"], "taco_reduce_ns": round(taco["ours_ns"], 1),
                # taco's round trip in the same run: the reduce's own floor
                "taco_round_trip_ns": round(taco["base_ns"], 1),
                "ratio_taco_mpi": round(taco["ours_ns"] / mpi["median_ns"], 3)})
ratio = statistics.median(r["ratio_taco_mpi"] for r in out)
print(json.dumps({"benchmark": "taco_reduce_vs_mpi_allreduce", "bytes": 8, "mpirun_flags": flags, "rounds": out,
                  "ratio_median": round(ratio, 3), "target": target, "target_met": ratio <= target}, indent=1))
PY
