#!/usr/bin/env bash
# Instructions per task operation, counted by callgrind (deterministic, unlike
# time on this machine): run instr_tasks for K1 and K2 = 2*K1 operations, and
# (Ir(K2) - Ir(K1)) / (K2 - K1) is the cost of one: start-up, the preallocated
# tasks and shutdown cancel out. See instr_tasks.cpp for the modes:
#   scheduler (enqueue + dispatch of a trivial task, DEPTH queued at a time):
#     runtime_fifo runtime_priority runtime_edf    taco::start + taco::poll
#     direct_fifo direct_priority direct_edf       scheduler class push/pop + run
#     deque heap_priority heap_edf                 hand-written baselines
#   tasks (one resume): pt_resume plain_call pt_yield coroutine_switch fiber coroutine_yield
#
#   bench/count_task_instructions.sh BUILD_DIR [K1 [DEPTH [MODE...]]]
#     K1 = 20480, DEPTH = 1024 by default; all modes unless listed.
# Prints one JSON object on stdout; ratio_vs is the mode's count over its
# baseline's (deque for the schedulers, heap_* for direct_priority/edf in
# ratio_vs_heap, plain_call for protothreads, fiber for coroutines).
set -euo pipefail

build=${1:?usage: count_task_instructions.sh BUILD_DIR [K1 [DEPTH [MODE...]]]}
k1=${2:-20480}
depth=${3:-1024}
shift $(($# < 3 ? $# : 3))
modes=("$@")
((${#modes[@]})) || modes=(runtime_fifo runtime_priority runtime_edf direct_fifo direct_priority direct_edf
    deque heap_priority heap_edf pt_resume plain_call pt_yield coroutine_switch fiber coroutine_yield)
k2=$((2 * k1))
bin=$build/bench
[[ -x $bin/instr_tasks ]] || bin=$build
[[ -x $bin/instr_tasks ]] || { echo "count_task_instructions: instr_tasks not built in $build" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "count_task_instructions: valgrind not found" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Total instructions (Ir) of one run.
ir() {
    local out=$tmp/cg.$1.$2
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin/instr_tasks" "$1" "$2" "$depth" \
        >"$tmp/stdout" 2>"$tmp/stderr" </dev/null ||
        { cat "$tmp/stderr" >&2; echo "count_task_instructions: instr_tasks $1 $2 $depth failed" >&2; exit 1; }
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

declare -A per ira irb
for mode in "${modes[@]}"; do
    ira[$mode]=$(ir "$mode" "$k1")
    irb[$mode]=$(ir "$mode" "$k2")
    per[$mode]=$(awk -v a="${ira[$mode]}" -v b="${irb[$mode]}" -v k="$k1" 'BEGIN { printf "%.1f", (b - a) / k }')
done
# Ratio of a mode's count to its baseline's, when both were counted.
ratio() { # key mode baseline
    [[ -n ${per[$3]:-} ]] || return 0
    awk -v key="$1" -v o="${per[$2]}" -v b="${per[$3]}" 'BEGIN { printf ", \"%s\": %.3f", key, o / b }'
}
json=""
for mode in "${modes[@]}"; do
    json+="${json:+, }\"$mode\": {\"k1\": $k1, \"k2\": $k2, \"ir_k1\": ${ira[$mode]}, \"ir_k2\": ${irb[$mode]}"
    json+=", \"ir_per_op\": ${per[$mode]}"
    case $mode in
        runtime_* | direct_*) json+=$(ratio ratio_vs_deque "$mode" deque) ;;
        pt_*) json+=$(ratio ratio_vs_plain_call "$mode" plain_call) ;;
        coroutine_*) json+=$(ratio ratio_vs_fiber "$mode" fiber) ;;
    esac
    case $mode in
        *_priority) [[ $mode == heap_* ]] || json+=$(ratio ratio_vs_heap "$mode" heap_priority) ;;
        *_edf) [[ $mode == heap_* ]] || json+=$(ratio ratio_vs_heap "$mode" heap_edf) ;;
    esac
    json+="}"
done
echo "{\"benchmark\": \"instructions_per_task\", \"depth\": $depth, $json}"
