#!/usr/bin/env bash
# CI smoke run of every benchmark binary and script, at tiny sizes
# (BENCH_SMOKE=1): checks that they run, finish and print valid results,
# not how fast anything is. Well under a minute; exits non-zero on failure.
#   bench/smoke.sh BUILD_DIR
set -uo pipefail

build=${1:?usage: smoke.sh BUILD_DIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$build/bench
[[ -x $bin/bench_invocation ]] || bin=$build
if [[ ! -x $bin/bench_invocation || ! -x $bin/instr_invocation ]]; then
    echo "smoke.sh: bench_invocation / instr_invocation not built under $build (ninja -C $build bench_invocation instr_invocation)" >&2
    exit 2
fi
export BENCH_SMOKE=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0 skipped=0

# Every external command runs under a time limit, so a hang fails the step.
limit() { timeout 120 "$@"; }

step() { # name command...
    local name=$1; shift
    local t0=$SECONDS
    if "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; then
        echo "ok    $name ($((SECONDS - t0)) s)"
        passed=$((passed + 1))
    else
        echo "FAIL  $name (exit $?)"; sed 's/^/    /' "$tmp/err" | tail -20; sed 's/^/    /' "$tmp/out" | tail -20
        failed=$((failed + 1))
    fi
}
skip() { echo "skip  $1 ($2)"; skipped=$((skipped + 1)); }

# Valid JSON with every expected benchmark present and none in error.
check_bench_json() {
    python3 - "$1" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))["benchmarks"]
names = [b["name"] for b in bench]
want = ["polling_round_trip", "one_way_rate", "sleeping_round_trip", "channel_memory/tree/cores:48",
        "channel_memory/all_to_all/cores:48", "channel_memory/tree/cores:256", "channel_memory/all_to_all/cores:256"]
missing = [w for w in want if not any(n.startswith(w) for n in names)]
errors = [b["name"] for b in bench if b.get("error_occurred")]
bad = [b["name"] for b in bench if "ratio_median" in b and not b["ratio_median"] > 0]
if missing or errors or bad:
    sys.exit(f"missing {missing}, errors {errors}, no ratio {bad}")
PY
}
bench_invocation() {
    limit "$bin/bench_invocation" --benchmark_min_time=0.01 --benchmark_format=json --benchmark_out="$tmp/bench.json" \
        --benchmark_out_format=json && check_bench_json "$tmp/bench.json"
}
json_ok() { limit "$@" | python3 -c 'import json, sys; json.load(sys.stdin)'; }

step "bench_invocation" bench_invocation
step "instr_invocation async" limit "$bin/instr_invocation" async 1000
step "instr_invocation round_trip" limit "$bin/instr_invocation" round_trip 1000
if command -v valgrind >/dev/null; then
    step "count_instructions.sh" json_ok "$here/count_instructions.sh" "$build" 200
else
    skip "count_instructions.sh" "no valgrind"
fi
if [[ -x $bin/mpi_pingpong ]] && command -v mpirun >/dev/null; then
    step "run_mpi_compare.sh (mpi_pingpong + polling_round_trip)" json_ok env ROUNDS=1 "$here/run_mpi_compare.sh" "$build"
else
    skip "run_mpi_compare.sh" "mpi_pingpong not built or no mpirun"
fi

# Collectives: bench_collective (every benchmark present, no errors, ratios
# and model figures positive) and the taco reduce vs MPI_Allreduce script.
check_collective_json() {
    python3 - "$1" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))["benchmarks"]
names = [b["name"] for b in bench]
want = ["reduce_2core", "reduce_model"] + [f"reduce_scaling/{t}/members:{n}"
        for t in ("flat", "kary2", "kary4", "binomial") for n in (2, 4, 8, 16, 32, 64)]
missing = [w for w in want if not any(n == w or n.startswith(w + "/") for n in names)]
errors = [b["name"] for b in bench if b.get("error_occurred")]
bad = [b["name"] for b in bench if "ratio_median" in b and not b["ratio_median"] > 0]
model = next((b for b in bench if b["name"].startswith("reduce_model")), {})
bad += [k for k in ("binomial_48_us", "kary2_48_us", "kary4_48_us", "binomial_1024_us", "member_ns")
        if not model.get(k, 0) > 0]
if missing or errors or bad:
    sys.exit(f"missing {missing}, errors {errors}, bad {bad}")
PY
}
bench_collective() {
    [[ -x $bin/bench_collective ]] || { echo "bench_collective not built under $build" >&2; return 2; }
    limit "$bin/bench_collective" --benchmark_format=json --benchmark_out="$tmp/coll.json" \
        --benchmark_out_format=json && check_collective_json "$tmp/coll.json"
}
step "bench_collective" bench_collective
if [[ -x $bin/mpi_allreduce ]] && command -v mpirun >/dev/null; then
    step "run_allreduce_compare.sh (mpi_allreduce + reduce_2core)" json_ok env ROUNDS=1 "$here/run_allreduce_compare.sh" "$build"
else
    skip "run_allreduce_compare.sh" "mpi_allreduce not built or no mpirun"
fi

# MESH shared objects (bench/README.md, "Shared objects"): bench_mesh, every
# benchmark present in both execution modes, none in error (each checks that
# another core saw the last write), every ratio positive.
check_mesh_json() {
    python3 - "$1" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))["benchmarks"]
names = [b["name"] for b in bench]
ctls = ("noop", "broadcast", "overlapped_broadcast", "timestamp")
want = []
for m in ("threads", "processes"):
    want += [f"reader_acquire/{m}/{c}" for c in ctls]
    want += [f"writer_release/{m}/{c}/bytes:{n}" for c in ctls for n in (64, 4096, 65536, 1048576)]
    want += [f"broadcast_release/{m}/cores:{n}" for n in (2, 4, 8, 16)]
want += [f"broadcast_overlap/processes/bytes:{n}" for n in (65536, 1048576)]
want += [f"one_change/processes/{c}/{v}/bytes:262144" for c in ctls[1:] for v in ("dcm", "ncm", "wt")]
want += [f"map_ops/processes/{c}/{v}/bytes:{n}" for c in ctls for v in ("dcm", "ncm", "wt") for n in (4096, 65536, 262144)]
want += ["integrity_1mib/processes/cores:2", "integrity_1mib/processes/cores:4"]
want += [f"hash_map/{k}/cores:1" for k in ("insert", "lookup")] + [f"hash_map/{k}/processes/cores:2" for k in ("insert", "lookup")]
missing = [w for w in want if not any(n == w or n.startswith(w + "/") for n in names)]
errors = [b["name"] for b in bench if b.get("error_occurred")]
bad = [b["name"] for b in bench if "ratio_median" in b and not b["ratio_median"] > 0]
bad += [b["name"] for b in bench if b["name"].startswith("broadcast_overlap") and not b.get("rt_ns", 0) > 0]
bad += [b["name"] for b in bench if b["name"].startswith("map_ops")
        and not all(b.get(f"{k}_ratio", 0) > 0 for k in ("acquire", "read", "write", "release"))]
bad += [b["name"] for b in bench if b["name"].startswith("integrity") and not b.get("bc_per_ts", 0) > 0]
if missing or errors or bad:
    sys.exit(f"missing {missing}, errors {errors}, bad {bad}")
PY
}
bench_mesh() {
    [[ -x $bin/bench_mesh ]] || { echo "bench_mesh not built under $build" >&2; return 2; }
    limit "$bin/bench_mesh" --benchmark_format=json --benchmark_out="$tmp/mesh.json" \
        --benchmark_out_format=json >/dev/null && check_mesh_json "$tmp/mesh.json"
}
step "bench_mesh" bench_mesh

# Tasks and schedulers (bench/README.md, "Tasks and schedulers"): bench_tasks
# (every benchmark present, none in error, every ratio positive), instr_tasks
# in every mode, and a few modes under callgrind.
check_tasks_json() {
    python3 - "$1" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))["benchmarks"]
names = [b["name"] for b in bench]
want = ["protothread_resume/direct", "protothread_resume/scheduled", "coroutine_switch/direct",
        "coroutine_switch/direct_vs_called_fiber", "coroutine_switch/scheduled",
        "sync_round_trip/coroutine", "sync_round_trip/protothread"]
want += [f"scheduler/{p}/{w}/depth:{d}" for d in (16, 1024) for p in ("fifo", "priority", "edf")
         for w in ("runtime", "direct")]
want += [f"scheduler/{p}/direct_vs_heap/depth:{d}" for d in (16, 1024) for p in ("priority", "edf")]
missing = [w for w in want if not any(n == w or n.startswith(w + "/") for n in names)]
errors = [b["name"] for b in bench if b.get("error_occurred")]
bad = [b["name"] for b in bench if not b.get("ratio_median", 0) > 0]
if missing or errors or bad:
    sys.exit(f"missing {missing}, errors {errors}, no ratio {bad}")
PY
}
bench_tasks() {
    [[ -x $bin/bench_tasks ]] || { echo "bench_tasks not built under $build" >&2; return 2; }
    limit "$bin/bench_tasks" --benchmark_format=json --benchmark_out="$tmp/tasks.json" \
        --benchmark_out_format=json >/dev/null && check_tasks_json "$tmp/tasks.json"
}
instr_tasks_all() {
    [[ -x $bin/instr_tasks ]] || { echo "instr_tasks not built under $build" >&2; return 2; }
    local m
    for m in runtime_fifo runtime_priority runtime_edf direct_fifo direct_priority direct_edf deque \
             heap_priority heap_edf pt_resume plain_call pt_yield coroutine_switch fiber coroutine_yield; do
        limit "$bin/instr_tasks" "$m" 1000 64 >/dev/null || { echo "instr_tasks $m failed" >&2; return 1; }
    done
}
step "bench_tasks" bench_tasks
step "instr_tasks (every mode)" instr_tasks_all
if command -v valgrind >/dev/null && [[ -x $bin/instr_tasks ]]; then
    step "count_task_instructions.sh" json_ok "$here/count_task_instructions.sh" "$build" 256 64 \
        runtime_edf deque pt_yield coroutine_yield fiber
else
    skip "count_task_instructions.sh" "no valgrind or instr_tasks not built"
fi

# Memory bounds: every benchmark present, figures positive, none failed.
check_memory_json() {
    python3 - "$1" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))["benchmarks"]
names = [b["name"] for b in bench]
want = ["resident_per_core/tree/cores:64", "resident_per_core/tree/cores:256", "flood_peak/one_way", "flood_peak/both_ways",
        "fault_detection/kill", "fault_detection/stop", "fault_detection/hang"]
missing = [w for w in want if not any(n.startswith(w) for n in names)]
errors = [b["name"] for b in bench if b.get("error_occurred")]
bad = [b["name"] for b in bench if not (b.get("kib_per_core", 1) > 0 and b.get("peak_mb", 1) >= 0 and b.get("detection_ms", 1) > 0)]
if missing or errors or bad:
    sys.exit(f"missing {missing}, errors {errors}, bad figures {bad}")
PY
}
bench_memory() {
    limit "$bin/bench_memory" --benchmark_format=json --benchmark_out="$tmp/memory.json" \
        --benchmark_out_format=json >/dev/null && check_memory_json "$tmp/memory.json"
}
if [[ -x $bin/bench_memory ]]; then step "bench_memory" bench_memory; else skip "bench_memory" "not built"; fi

# The SCC backend on its emulated chip (platforms/scc/README.md): every
# benchmark present with positive modelled cycles; the apps made the same
# moves at every core count.
scc=$build/platforms/scc/bench
check_scc_json() {
    python3 - "$@" <<'PY'
import json, sys
for path in sys.argv[1:]:
    bench = json.load(open(path))["benchmarks"]
    errors = [b["name"] for b in bench if b.get("error_occurred")]
    bad = [b["name"] for b in bench if not b.get("modelled_cycles", 0) > 0]
    qs = {}
    for b in bench:
        if "modularity" in b:
            qs.setdefault(b["name"].split("/")[1], set()).add(round(b["modularity"], 12))
    differing = [g for g, q in qs.items() if len(q) != 1]
    if not bench or errors or bad or differing:
        sys.exit(f"{path}: errors {errors}, no modelled cycles {bad}, differing Q {differing}")
PY
}
bench_scc() {
    limit "$scc/bench_scc" --benchmark_out="$tmp/scc.json" --benchmark_out_format=json >/dev/null &&
        limit "$scc/bench_scc_apps" --benchmark_out="$tmp/scc_apps.json" --benchmark_out_format=json >/dev/null &&
        check_scc_json "$tmp/scc.json" "$tmp/scc_apps.json" &&
        python3 "$here/../platforms/scc/bench/scc_table.py" "$tmp/scc.json" "$tmp/scc_apps.json" >/dev/null
}
if [[ -x $scc/bench_scc && -x $scc/bench_scc_apps ]]; then step "bench_scc + bench_scc_apps (emulated SCC)" bench_scc
else skip "bench_scc" "not built"; fi

# The MPI platform against MPI itself (platforms/mpi/README.md), on 2 and
# 4 ranks with the host's shared memory, and on 2 with MPI alone between
# the ranks (--on-host=mpi): every benchmark present, no error, positive ratios.
mpib=$build/platforms/mpi/bench
bench_mpi() {
    local np mode np_mode
    for np_mode in 2:shared_memory 2:mpi 4:shared_memory; do
        np=${np_mode%%:*} mode=${np_mode#*:}
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 limit mpirun --oversubscribe --mca btl self,vader \
            -np "$np" "$mpib/bench_mpi" --on-host="$mode" --benchmark_out="$tmp/mpi$np$mode.json" \
            --benchmark_out_format=json >/dev/null </dev/null || return 1
        python3 - "$tmp/mpi$np$mode.json" "$mode" <<'PY' || return 1
import json, sys
bench = json.load(open(sys.argv[1]))["benchmarks"]
prefix = "mpi_only/" if sys.argv[2] == "mpi" else "mpi/"
names = [b["name"] for b in bench]
wanted = [prefix + w for w in ("round_trip_vs_pingpong", "reduce_vs_allreduce", "release_acquire_vs_put_get/64",
                               "release_acquire_vs_put_get/65536")]
missing = [w for w in wanted if not any(n.startswith(w) for n in names)]
errors = [b["name"] for b in bench if b.get("error_occurred")]
bad = [b["name"] for b in bench if not b.get("ratio_median", 0) > 0]
# By MPI alone ours moves the same bytes by the same Put and Get, and more:
# well under 1x means the baseline went wrong (its buffer's alignment once
# made it 10x slow). Through shared memory ours copies the same bytes
# without MPI's calls, so it may be faster, but not by more than those calls.
floor = 0.8 if sys.argv[2] == "mpi" else 0.4
odd = [b["name"] for b in bench if "/release_acquire" in b["name"] and b.get("ratio_median", 1) < floor]
if missing or errors or bad or odd:
    sys.exit(f"missing {missing}, errors {errors}, no ratio {bad}, baseline slower than ours {odd}")
PY
    done
}
if [[ -x $mpib/bench_mpi ]] && command -v mpirun >/dev/null; then step "bench_mpi (MPI platform, 2 and 4 ranks)" bench_mpi
else skip "bench_mpi" "not built or no mpirun"; fi

# The modularity app (apps/modularity/README.md): the paper's greedy
# experiment (every variant present, same moves everywhere), the comparison
# with the peers on two small graphs when igraph is there, and the plots,
# each PNG read back. Debian's python3-igraph / -matplotlib live with
# /usr/bin/python3, which may not be the python3 on PATH.
app=$build/apps/modularity
appsrc=$here/../apps/modularity/bench
py=/usr/bin/python3; [[ -x $py ]] || py=python3
check_greedy_json() {
    python3 - "$1" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))["benchmarks"]
names = [b["name"] for b in bench]
want = [f"greedy/{g}/{p}/{m}/{c}/cores:{n}" for g in ("world_trade", "cond_mat") for p in ("threads", "processes")
        for m in ("dcm", "ncm", "wt", "mix") for c in ("none", "broadcast", "overlapped", "timestamp") for n in (1, 2)
        if not (c == "none" and p == "processes")]
missing = [w for w in want if not any(n == w or n.startswith(w + "/") for n in names)]
errors = [b["name"] for b in bench if b.get("error_occurred")]
# every run made the same moves: one Q per graph
qs = {}
for b in bench:
    qs.setdefault(b["name"].split("/")[1], set()).add(round(b["modularity"], 12))
bad = [g for g, q in qs.items() if len(q) != 1]
if missing or errors or bad:
    sys.exit(f"missing {missing}, errors {errors}, differing Q {bad}")
PY
}
bench_greedy() {
    [[ -x $app/bench_greedy ]] || { echo "bench_greedy not built under $build" >&2; return 2; }
    limit "$app/bench_greedy" --benchmark_format=json --benchmark_out="$tmp/greedy.json" --benchmark_out_format=json \
        >/dev/null && check_greedy_json "$tmp/greedy.json" && python3 "$appsrc/greedy_table.py" "$tmp/greedy.json" >/dev/null
}
step "bench_greedy (modularity app)" bench_greedy
if [[ -x $app/tacomesh-cluster ]] && $py -c 'import igraph' 2>/dev/null; then
    step "compare.py (modularity app vs igraph)" limit $py "$appsrc/compare.py" --cluster "$app/tacomesh-cluster" \
        --graphs karate,world-trade --seeds 1 --tools igraph-leiden --json "$tmp/compare.json"
else
    skip "compare.py" "no tacomesh-cluster or no igraph for $py"
fi
if $py -c 'import matplotlib' 2>/dev/null && [[ -s $tmp/greedy.json ]]; then
    cmp=(); [[ -s $tmp/compare.json ]] && cmp=(--compare "$tmp/compare.json")
    step "plot.py (PNGs written and read back)" limit $py "$appsrc/plot.py" --greedy "$tmp/greedy.json" "${cmp[@]}" \
        --out "$tmp/png"
else
    skip "plot.py" "no matplotlib for $py, or no greedy.json"
fi

# The RDF app (apps/rdf/README.md): bench_rdf, every entry present and
# every query's rows the published LUBM answer; then compare.py against
# pyoxigraph when a venv with apps/rdf/bench/requirements.txt can be made
# (PyPI reachable), tiny runs.
rdf=$build/apps/rdf
rdfsrc=$here/../apps/rdf/bench
check_rdf_json() {
    python3 - "$1" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))["benchmarks"]
rows = {b["name"].split("/iterations")[0].split("/manual_time")[0]: b for b in bench}
lubm = [4, 0, 6, 34, 719, 7790, 67, 7790, 208, 4, 224, 15, 1, 5916]
want = {f"query/q{i + 1:02d}": n for i, n in enumerate(lubm)}
for m in ("threads", "processes"):
    for c in (1, 2):
        want.update({f"data/q{q:02d}/{m}/cores:{c}": lubm[q - 1] for q in (2, 6, 8, 9, 14)})
missing = [w for w in want if w not in rows] + [w for w in ("load/lubm1_inferred", "task/threads/cores:2", "infer/processes/cores:2") if w not in rows]
wrong = [w for w, n in want.items() if w in rows and rows[w].get("rows") != n]
errors = [b["name"] for b in bench if b.get("error_occurred")]
if missing or wrong or errors:
    sys.exit(f"missing {missing}, wrong rows {wrong}, errors {errors}")
PY
}
bench_rdf() {
    [[ -x $rdf/bench_rdf ]] || { echo "bench_rdf not built under $build" >&2; return 2; }
    limit "$rdf/bench_rdf" --benchmark_format=json --benchmark_out="$tmp/rdf.json" --benchmark_out_format=json \
        >/dev/null && check_rdf_json "$tmp/rdf.json"
}
step "bench_rdf (RDF app)" bench_rdf
rdfvenv=$build/venv-rdf
if [[ -x $rdfvenv/bin/python ]] || { $py -m venv "$rdfvenv" >/dev/null 2>&1 &&
       timeout 300 "$rdfvenv/bin/pip" install -q -r "$rdfsrc/requirements.txt" >/dev/null 2>&1; }; then
    step "compare.py (RDF app vs pyoxigraph)" limit "$rdfvenv/bin/python" "$rdfsrc/compare.py" --bench "$rdf/bench_rdf" \
        --python "$rdfvenv/bin/python" --rounds 1 --smoke --output "$tmp/rdf_compare.json"
else
    rm -rf "$rdfvenv"
    skip "compare.py (RDF app)" "no venv with pyoxigraph (python3-venv missing or PyPI unreachable)"
fi

echo "bench smoke: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
