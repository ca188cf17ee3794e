#!/usr/bin/env bash
# The app's benchmarks, one after the other (never two timing jobs at once):
# the paper's greedy experiment (bench_greedy, Google Benchmark JSON) and the
# multilevel search against the peers (compare.py), then the tables and plots.
#   apps/modularity/bench/run_all.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=${1:?usage: run_all.sh BUILD_DIR OUT_DIR}
out=${2:?usage: run_all.sh BUILD_DIR OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$build/apps/modularity/bench_greedy" --benchmark_repetitions=${REPS:-3} --benchmark_enable_random_interleaving=true \
  --benchmark_out="$out/greedy.json" --benchmark_out_format=json >"$out/greedy.txt"
python3 "$here/compare.py" --cluster "$build/apps/modularity/tacomesh-cluster" --json "$out/compare.json" \
  >"$out/compare.md"
python3 "$here/greedy_table.py" "$out/greedy.json" >"$out/greedy.md"
