#!/usr/bin/env bash
# Compare taco's polling round trip with an 8-byte MPI ping-pong, in the same
# session, alternating: each round runs both (the order flips every round),
# and the figure is the median of the per-round ratios taco / MPI. Single
# runs minutes apart mean little here: the host moves the vCPUs and the
# cross-core latency changes by ~4x.
#
#   bench/run_mpi_compare.sh BUILD_DIR          (ROUNDS=5 by default)
#
# Env: ROUNDS, MPIRUN_FLAGS (default "--mca btl self,vader": shared memory,
# the fastest transport here), BENCH_SMOKE=1 (tiny sizes, for CI).
# Prints one JSON object on stdout; exits non-zero if a run fails.
set -euo pipefail

build=${1:?usage: run_mpi_compare.sh BUILD_DIR}
rounds=${ROUNDS:-5}
mpirun_flags=${MPIRUN_FLAGS:---mca btl self,vader}
bin=$build/bench
[[ -x $bin/bench_invocation ]] || bin=$build
for exe in bench_invocation mpi_pingpong; do
    [[ -x $bin/$exe ]] || { echo "run_mpi_compare: $bin/$exe not built" >&2; exit 2; }
done
command -v mpirun >/dev/null || { echo "run_mpi_compare: mpirun not found" >&2; exit 2; }

# CI runs as root with no stdin: Open MPI refuses root unless told twice.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_mpi() {
    # shellcheck disable=SC2086  # flags are a word list on purpose
    timeout 300 mpirun --allow-run-as-root --oversubscribe $mpirun_flags -np 2 "$bin/mpi_pingpong" \
        </dev/null >"$tmp/mpi_$1.json" 2>"$tmp/mpi_$1.err" ||
        { cat "$tmp/mpi_$1.err" >&2; echo "run_mpi_compare: mpi_pingpong failed" >&2; exit 1; }
}
run_taco() {
    timeout 300 "$bin/bench_invocation" --benchmark_filter='^polling_round_trip' --benchmark_format=json \
        </dev/null >"$tmp/taco_$1.json" 2>"$tmp/taco_$1.err" ||
        { cat "$tmp/taco_$1.err" >&2; echo "run_mpi_compare: bench_invocation failed" >&2; exit 1; }
}

for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then run_mpi "$r"; run_taco "$r"; else run_taco "$r"; run_mpi "$r"; fi
done

python3 - "$tmp" "$rounds" "$mpirun_flags" <<'PY'
import json, statistics, sys
tmp, rounds, flags = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = []
for r in range(1, rounds + 1):
    with open(f"{tmp}/mpi_{r}.json") as f:
        mpi = json.loads(f.read().strip().splitlines()[-1])
    with open(f"{tmp}/taco_{r}.json") as f:
        bench = json.load(f)["benchmarks"]
    taco = next(b for b in bench if b["name"].startswith("polling_round_trip"))
    out.append({"round": r, "mpi_rt_ns": mpi["median_rt_ns"], "taco_rt_ns": round(taco["ours_ns"], 1),
                "raw_ring_rt_ns": round(taco["base_ns"], 1),
                "ratio_taco_mpi": round(taco["ours_ns"] / mpi["median_rt_ns"], 3)})
ratio = statistics.median(r["ratio_taco_mpi"] for r in out)
print(json.dumps({"benchmark": "taco_vs_mpi_round_trip", "mpirun_flags": flags, "rounds": out,
                  "ratio_median": round(ratio, 3), "target": 0.6, "target_met": ratio <= 0.6}, indent=1))
PY
