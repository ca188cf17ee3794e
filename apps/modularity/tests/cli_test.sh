#!/usr/bin/env bash
# tacomesh-cluster as a user runs it: the JSON fields, --output, --members
# (text and JSON), extreme weights, and the exit status and message of each
# kind of mistake.
#   cli_test.sh TACOMESH_CLUSTER DATA_DIR
set -uo pipefail
bin=${1:?usage: cli_test.sh TACOMESH_CLUSTER DATA_DIR}
data=${2:?usage: cli_test.sh TACOMESH_CLUSTER DATA_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect STATUS REGEX -- command...: exit status and a line of its output (stdout + stderr)
expect() {
    local status=$1 regex=$2; shift 3
    "$@" >"$tmp/out" 2>&1
    local got=$?
    [[ $got == "$status" ]] || fail "$* exited $got, expected $status: $(head -3 "$tmp/out")"
    grep -Eq -- "$regex" "$tmp/out" || fail "$*: no line matches '$regex' in: $(head -5 "$tmp/out")"
}

# JSON: the fields the issue names, with the reference values (data/greedy.answers.tsv)
read -r _ karate_q karate_clusters karate_moves < <(grep -P '^karate\.graph\.gz\t' "$data/greedy.answers.tsv") ||
    fail "no karate line in $data/greedy.answers.tsv"
expect 0 "\"modularity\": ${karate_q//./\\.}" -- "$bin" --json --quiet --algorithm greedy --cores 2 "$data/karate.graph.gz"
for field in clusters steps seconds cores; do
    grep -Eq "\"$field\": [0-9]" "$tmp/out" || fail "--json has no numeric \"$field\""
done
grep -q "\"steps\": $karate_moves," "$tmp/out" || fail "greedy on karate: expected $karate_moves moves in $(cat "$tmp/out")"
# The process's own peak memory (VmHWM): more than nothing, less than a GiB for karate.
grep -Eq '"peak_rss_bytes": [1-9][0-9]{0,8}[,}]' "$tmp/out" || fail "--json: no peak_rss_bytes between 1 B and 1 GB in $(cat "$tmp/out")"
# the ensemble: a member per core on a small graph, or as --ensemble says;
# two, on core 0, on a tiny one
expect 0 '"ensemble": 3[,}]' -- "$bin" --json --quiet --cores 3 "$data/netscience.graph.gz"
grep -q '"members_on": "own cores"' "$tmp/out" || fail "netscience: members not on their own cores: $(cat "$tmp/out")"
expect 0 '"ensemble": 2, .*"members_on": "core 0"' -- "$bin" --json --quiet --cores 3 "$data/karate.graph.gz"
expect 0 '"ensemble": 5[,}]' -- "$bin" --json --quiet --cores 2 --ensemble 5 "$data/karate.graph.gz"
expect 2 'needs a member count from 1 to 1024' -- "$bin" --ensemble 0 "$data/karate.graph.gz"
expect 2 'applies to the multilevel algorithm only' -- "$bin" --algorithm greedy --ensemble 3 "$data/karate.graph.gz"
# the schedule: thorough on small graphs (iterations until one gains no more,
# at least two per member); paced from n + m >= 10000 (one per member and
# round); lean at n + m >= 100000 (one per member), unless --effort asks for
# more. 7000 5-cliques in a ring: 35000 vertices, 77000 edges; 1500: 7500 and
# 16500.
awk 'BEGIN { k = 7000; for (c = 0; c < k; ++c) { for (i = 0; i < 5; ++i) for (j = i + 1; j < 5; ++j) print 5*c+i, 5*c+j
                                                  print 5*c+4, (5*c+5) % (5*k) } }' >"$tmp/ring.el"
expect 0 '"schedule": "thorough", "iterations": ([4-9]|[1-9][0-9]+)[,}]' -- "$bin" --json --quiet --cores 2 "$data/karate.graph.gz"
expect 0 '"schedule": "lean", "iterations": 2[,}]' -- "$bin" --json --quiet --cores 2 "$tmp/ring.el"
awk 'BEGIN { k = 1500; for (c = 0; c < k; ++c) { for (i = 0; i < 5; ++i) for (j = i + 1; j < 5; ++j) print 5*c+i, 5*c+j
                                                  print 5*c+4, (5*c+5) % (5*k) } }' >"$tmp/ring_mid.el"
expect 0 '"schedule": "paced"' -- "$bin" --json --quiet --cores 2 "$tmp/ring_mid.el"
steps=$(grep -Eo '"steps": [0-9]+' "$tmp/out" | grep -Eo '[0-9]+$')
iterations=$(grep -Eo '"iterations": [0-9]+' "$tmp/out" | grep -Eo '[0-9]+$')
[ "$iterations" = $((2 * steps)) ] || fail "paced: $iterations iterations in $steps rounds of 2 members, not one each a round: $(cat "$tmp/out")"
expect 0 '"schedule": "thorough"' -- "$bin" --json --quiet --cores 2 --effort 2 "$tmp/ring_mid.el"
expect 0 '"schedule": "thorough"' -- "$bin" --json --quiet --cores 2 --effort 2 "$tmp/ring.el"
# ... or as --schedule says, whatever the size
expect 0 '"schedule": "lean"' -- "$bin" --json --quiet --cores 2 --schedule lean "$data/karate.graph.gz"
expect 0 '"schedule": "thorough"' -- "$bin" --json --quiet --cores 2 --schedule thorough "$tmp/ring.el"
expect 0 '"schedule": "lean"' -- "$bin" --json --quiet --cores 2 --schedule auto "$tmp/ring.el"
expect 0 '"schedule": "paced"' -- "$bin" --json --quiet --cores 2 --schedule paced "$data/karate.graph.gz"
expect 2 "needs auto, thorough, paced or lean, not 'quick'" -- "$bin" --schedule quick "$data/karate.graph.gz"
expect 2 'applies to the multilevel algorithm only' -- "$bin" --algorithm greedy --schedule lean "$data/karate.graph.gz"

# --output: one id per line, in vertex order, ids 0..k-1
expect 0 "\"clusters\": $karate_clusters," -- "$bin" --json --quiet --algorithm greedy --output "$tmp/ids" "$data/karate.graph.gz"
[[ $(wc -l <"$tmp/ids") == 34 ]] || fail "--output: $(wc -l <"$tmp/ids") lines, expected 34"
[[ $(sort -un "$tmp/ids" | tr '\n' ' ') == "0 1 2 3 4 5 " ]] || fail "--output ids: $(sort -un "$tmp/ids" | tr '\n' ' ')"
[[ $(head -1 "$tmp/ids") == 0 ]] || fail "--output: vertex 1 is not in cluster 0"

# --max-steps 0: no move at all (the singletons), not "until converged"
expect 0 '"steps": 0,' -- "$bin" --json --quiet --algorithm greedy --max-steps 0 "$data/karate.graph.gz"
grep -q '"clusters": 34,' "$tmp/out" || fail "--max-steps 0: expected the 34 singletons in $(cat "$tmp/out")"
expect 0 '"steps": 3,' -- "$bin" --json --quiet --algorithm greedy --max-steps 3 "$data/karate.graph.gz"

# multilevel (default) and --members with the file's names
expect 0 '^modularity Q = 0\.2750 with 3 clusters' -- "$bin" --quiet --members "$data/WorldImport1999.el"
grep -Eq '^  cluster 1 \([0-9]+\): [A-Z]{3} ' "$tmp/out" || fail "--members lists no named vertices"

# --members with --json: a "members" array in the JSON (it once printed the
# JSON without them, and without a word): valid JSON, every vertex once, one
# array per cluster, element i the vertices --output numbers i.
expect 0 '"members": \[\[' -- "$bin" --json --quiet --members --algorithm greedy --output "$tmp/ids" "$data/karate.graph.gz"
if command -v python3 >/dev/null; then
    python3 -m json.tool "$tmp/out" >/dev/null || fail "--members --json is not valid JSON: $(head -c 300 "$tmp/out")"
    python3 - "$tmp/out" "$tmp/ids" <<'PY' || fail "--members --json: wrong members in $(head -c 300 "$tmp/out")"
import json, sys
r = json.load(open(sys.argv[1]))
ids = [int(x) for x in open(sys.argv[2])]
members = r["members"]
assert len(members) == r["clusters"], (len(members), r["clusters"])
assert sorted(int(v) for c in members for v in c) == list(range(1, r["vertices"] + 1))
for i, c in enumerate(members):
    assert all(ids[int(v) - 1] == i for v in c), (i, c)
PY
    expect 0 '"members": \[\["' -- "$bin" --json --quiet --members "$data/WorldImport1999.el"
    python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))["members"]; assert "USA" in sum(m, [])' "$tmp/out" ||
        fail "--members --json on world trade: no vertex named USA in $(head -c 300 "$tmp/out")"
else
    echo "cli_test: no python3, --members --json checked only for its start"
fi
expect 0 '"clusters": [0-9]+, ' -- "$bin" --json --quiet "$data/karate.graph.gz"
grep -q '"members"' "$tmp/out" && fail "--json without --members lists the members"

# Extreme weights: Q does not depend on the weights' scale (1e160 once gave
# Q = -0.25 with 4 clusters, 1e-160 a failed internal check with greedy,
# 1e-310 a wrong answer); a spread no scaling can hold is refused.
for w in 1e160 1e-160 1e-310; do
    printf 'a b %s\nc d %s\n' $w $w >"$tmp/w$w.el"
    for algorithm in multilevel greedy; do
        expect 0 '^modularity Q = 0\.5000 with 2 clusters' -- "$bin" --quiet --algorithm $algorithm "$tmp/w$w.el"
    done
done
expect 0 '^modularity Q = 0\.5000 with 2 clusters' -- "$bin" --quiet --platform processes --algorithm greedy "$tmp/w1e-310.el"
printf '4 2 001\n2 1e300\n1 1e300\n4 1e-300\n3 1e-300\n' | gzip >"$tmp/spread.graph.gz"
expect 1 'spread\.graph\.gz: the edge weights span too wide a range: the smallest nonzero weight is 1e-300 and the largest 1e\+300, .*set the negligible weights to 0' \
    -- "$bin" --quiet "$tmp/spread.graph.gz"

# mistakes: usage errors exit 2, bad input exits 1, each with a message
expect 2 'unknown option .--bogus.' -- "$bin" --bogus "$data/karate.graph.gz"
expect 2 '--cores must be at least 1' -- "$bin" --cores 0 "$data/karate.graph.gz"
expect 2 '--max-steps needs a non-negative integer' -- "$bin" --max-steps -3 "$data/karate.graph.gz"
expect 2 '--max-steps applies to the greedy algorithm only' -- "$bin" --max-steps 5 "$data/karate.graph.gz"
expect 2 'unknown map variant .xyz.' -- "$bin" --maps xyz "$data/karate.graph.gz"
expect 2 'controller none with --platform processes' -- "$bin" --controller none --platform processes "$data/karate.graph.gz"
expect 2 'no graph file given' -- "$bin" --json
expect 1 'cannot open: No such file' -- "$bin" "$tmp/missing.graph"
printf '3 1\n2\n\n\n' >"$tmp/bad.graph"
expect 1 'bad\.graph:2: vertex 1 lists neighbour 2, but' -- "$bin" "$tmp/bad.graph"
printf '2 1\n2\n1\n' >"$tmp/g.unknown"
expect 1 'cannot tell the format' -- "$bin" "$tmp/g.unknown"
expect 0 'modularity Q' -- "$bin" --quiet --format metis "$tmp/g.unknown"

# A 40-byte Pajek file declaring two billion vertices: refused before the
# reader allocates for them (it once allocated until the OOM killer), with
# the line and the bytes. Under an address-space limit of 2 GiB, so that the
# refusal does not depend on this machine's memory and nothing large is mapped.
# (Not in the sanitizer trees, whose shadow memory needs terabytes of address
# space: TACOMESH_SANITIZED is set there.)
if [[ -z ${TACOMESH_SANITIZED:-} ]]; then
    printf '*Vertices 2000000000\n*Edges\n1 2\n' >"$tmp/huge.net"
    expect 1 'huge\.net:1: 2000000000 vertices need at least 32000000016 bytes \(16 per vertex\), more than this machine has' -- \
        bash -c 'ulimit -v 2097152 && exec "$@"' - "$bin" --quiet "$tmp/huge.net"
    printf '2000000000 1\n2\n1\n' >"$tmp/huge.graph"
    expect 1 'huge\.graph:1: 2000000000 vertices need' -- bash -c 'ulimit -v 2097152 && exec "$@"' - "$bin" --quiet "$tmp/huge.graph"
fi

# Shared memory: too little is a message naming --shared-memory (MESH's own
# names the platform's config, which the CLI sets), enough is a clustering.
expect 1 'out of MESH shared memory for .*karate.*give more with --shared-memory' -- \
    "$bin" --quiet --shared-memory 8K "$data/karate.graph.gz"
expect 0 '^modularity Q' -- "$bin" --quiet --shared-memory 256M "$data/karate.graph.gz"
expect 2 '--shared-memory needs a non-negative integer' -- "$bin" --shared-memory lots "$data/karate.graph.gz"
expect 2 '--shared-memory needs at least 1 byte' -- "$bin" --shared-memory 0 "$data/karate.graph.gz"
expect 2 '--shared-memory 9223372036854775807: at most' -- "$bin" --shared-memory 9223372036854775807 "$data/karate.graph.gz"

[[ $fails == 0 ]] && echo "cli_test: all passed"
exit $((fails > 0))
