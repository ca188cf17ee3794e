#!/usr/bin/env bash
# Instructions per invocation, counted by callgrind (deterministic, unlike
# time on this machine): run instr_invocation for K1 and K2 = 2*K1
# invocations, and (Ir(K2) - Ir(K1)) / (K2 - K1) is the cost of one: start-up,
# ring creation and shutdown cancel out.
#   async       fire-and-forget to an object on the same core (send + dispatch)
#   round_trip  invocation whose result comes back to a future on the same
#               core (request + reply, future set and get)
#
#   bench/count_instructions.sh BUILD_DIR [K1]     (K1 = 20000 by default)
# Prints one JSON object on stdout.
set -euo pipefail

build=${1:?usage: count_instructions.sh BUILD_DIR [K1]}
k1=${2:-20000}
k2=$((2 * k1))
bin=$build/bench
[[ -x $bin/instr_invocation ]] || bin=$build
[[ -x $bin/instr_invocation ]] || { echo "count_instructions: instr_invocation not built in $build" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "count_instructions: valgrind not found" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Total instructions (Ir) of one run.
ir() {
    local out=$tmp/cg.$1.$2
    valgrind --tool=callgrind --callgrind-out-file="$out" "$bin/instr_invocation" "$1" "$2" \
        >"$tmp/stdout" 2>"$tmp/stderr" </dev/null ||
        { cat "$tmp/stderr" >&2; echo "count_instructions: instr_invocation $1 $2 failed" >&2; exit 1; }
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

json=""
for mode in async round_trip; do
    a=$(ir "$mode" "$k1")
    b=$(ir "$mode" "$k2")
    per=$(awk -v a="$a" -v b="$b" -v k="$k1" 'BEGIN { printf "%.1f", (b - a) / k }')
    json+="${json:+, }\"$mode\": {\"k1\": $k1, \"k2\": $k2, \"ir_k1\": $a, \"ir_k2\": $b, \"ir_per_invocation\": $per}"
done
echo "{\"benchmark\": \"instructions_per_invocation\", $json}"
