#!/usr/bin/env bash
# The two apps on MPI ranks beside POSIX core processes with the same core
# count, in one run, runs alternating (platforms/mpi/README.md, "The apps"):
#
#   greedy   tacomesh-cluster --algorithm greedy on cond-mat, the first
#            STEPS moves (the MESH paper's experiment: every move is a
#            consistency event on the shared clustering): seconds
#   task     tacomesh-rdf bench --model task, the 14 LUBM queries x REPEAT:
#            queries per second
#
#   bench/platforms/mpi/apps_table.sh BUILD_DIR [RANKS...]    (default: 1 2 4)
#
# Prints one JSON object per line (app, ranks, platform, figure, oversubscribed)
# and a table of medians on stderr. ROUNDS (3), STEPS (300), REPEAT (20).
set -euo pipefail
build=${1:?usage: apps_table.sh BUILD_DIR [RANKS...]}; shift
ranks=("$@"); if [ $# -eq 0 ]; then ranks=(1 2 4); fi
root=$(cd "$(dirname "$0")/../../.." && pwd)
rounds=${ROUNDS:-3} steps=${STEPS:-300} repeat=${REPEAT:-20}
cluster=$build/apps/modularity/tacomesh-cluster rdf=$build/apps/rdf/tacomesh-rdf
graph=$root/apps/modularity/data/cond-mat.graph.gz lubm=$root/apps/rdf/data
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun --oversubscribe --mca btl self,vader)
cpus=$(nproc)
out=$(mktemp); trap 'rm -f "$out"' EXIT

greedy() { # n, platform
  local args=(--algorithm greedy --max-steps "$steps" --json --quiet "$graph")
  if [ "$2" = mpi ]; then "${mpirun[@]}" -np "$1" "$cluster" --platform mpi "${args[@]}"
  else "$cluster" --platform processes --cores "$1" "${args[@]}"; fi |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])'
}
task() { # n, platform
  local args=(--data "$lubm/lubm1-inferred.nt.gz" --model task --repeat "$repeat" --json --quiet "$lubm"/queries/q*.rq)
  if [ "$2" = mpi ]; then "${mpirun[@]}" -np "$1" "$rdf" bench --platform mpi "${args[@]}"
  else "$rdf" bench --platform processes --cores "$1" "${args[@]}"; fi |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["task"]["queries_per_second"])'
}

for ((r = 0; r < rounds; ++r)); do
  for n in "${ranks[@]}"; do
    over=$([ "$n" -gt "$cpus" ] && echo true || echo false)
    for app in greedy task; do
      for platform in processes mpi; do # alternating, same run
        v=$($app "$n" "$platform" </dev/null)
        echo "{\"app\": \"$app\", \"ranks\": $n, \"platform\": \"$platform\", \"value\": $v, \"oversubscribed\": $over}" | tee -a "$out"
      done
    done
  done
done

python3 - "$out" <<'PY' >&2
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(app, n, p): return statistics.median(r["value"] for r in rows if (r["app"], r["ranks"], r["platform"]) == (app, n, p))
ns = sorted({r["ranks"] for r in rows})
over = {r["ranks"]: r["oversubscribed"] for r in rows}
print("| cores | greedy s, processes | greedy s, mpi | mpi / processes | task q/s, processes | task q/s, mpi | mpi / processes |")
print("|---|---|---|---|---|---|---|")
for n in ns:
    gp, gm, tp, tm = med("greedy", n, "processes"), med("greedy", n, "mpi"), med("task", n, "processes"), med("task", n, "mpi")
    label = f"{n}{' (oversubscribed)' if over[n] else ''}"
    print(f"| {label} | {gp:.3f} | {gm:.3f} | {gm / gp:.2f}x | {tp:.0f} | {tm:.0f} | {tm / tp:.2f}x |")
PY
