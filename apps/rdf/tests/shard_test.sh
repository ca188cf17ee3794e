#!/usr/bin/env bash
# tacomesh-rdf --model shard on MPI ranks: the store dealt out over the
# ranks (only rank 0 reads the data) answers the 14 LUBM queries with their
# published row counts (data/lubm1.answers.tsv), Q8's rows as TSV are the
# lines one core gives (the first rank count reads a store file, mapped; the
# others the N-Triples), every triple is kept by one rank in the S-led and one
# in the O-led orders, and the largest rank's part falls as the ranks grow.
#
#   shard_test.sh local "MPIRUN LINE" TACOMESH_RDF DATA_DIR RANKS...
#   shard_test.sh netns NETNS_SCRIPT TACOMESH_RDF DATA_DIR RANKS...
#
# local: the ranks on this host (mpirun -np N); netns: across the two
# network namespaces of platforms/mpi/tests/netns_multihost.sh (its exit
# code 77, skipped, is passed on). Each rank's part and resident memory are
# printed, for the log.
set -euo pipefail

[[ $# -ge 5 ]] || { echo "usage: $0 local|netns LAUNCHER TACOMESH_RDF DATA_DIR RANKS..." >&2; exit 2; }
mode=$1 launcher=$2 rdf=$3 data=$4
shift 4

run() { # run RANKS ARGS...: tacomesh-rdf on RANKS ranks
    local n=$1
    shift
    if [[ $mode == local ]]; then
        # shellcheck disable=SC2086 # the launcher line is words
        $launcher -np "$n" "$rdf" "$@"
    else
        local rc=0
        NP=$n "$launcher" "$rdf" "$@" || rc=$?
        [[ $rc -eq 77 ]] && exit 77
        return $rc
    fi
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
queries=("$data"/queries/q{01..14}.rq)
"$rdf" query --quiet --data "$data/lubm1-inferred.nt.gz" "$data/queries/q08.rq" | sort > "$work/q08.one"
"$rdf" load --quiet --data "$data/lubm1-inferred.nt.gz" --output "$work/lubm1.store"

input=$work/lubm1.store
for n in "$@"; do
    run "$n" bench --model shard --platform mpi --quiet --json --runs 1 --data "$input" "${queries[@]}" > "$work/bench.$n.json"
    run "$n" query --model shard --platform mpi --quiet --data "$input" "$data/queries/q08.rq" | sort > "$work/q08.$n"
    input=$data/lubm1-inferred.nt.gz
    cmp -s "$work/q08.one" "$work/q08.$n" || { echo "FAIL: $n ranks: Q8's TSV differs from one core's" >&2; exit 1; }
done

python3 - "$data/lubm1.answers.tsv" "$work" "$@" <<'EOF'
import json, sys
answers, work, ranks = sys.argv[1], sys.argv[2], [int(r) for r in sys.argv[3:]]
expected = {}
for line in open(answers):
    f = line.split()
    if f and not f[0].startswith('#'):
        expected[f[0]] = int(f[1])
failed = False
largest = []
for n in ranks:
    r = json.load(open(f"{work}/bench.{n}.json"))
    for q in r["shard"]["queries"]:
        if q["rows"] != expected[q["query"]]:
            print(f"FAIL: {n} ranks: {q['query']}: {q['rows']} rows, published {expected[q['query']]}")
            failed = True
    shards = r["shards"]
    if len(shards) != n:
        print(f"FAIL: {n} ranks: {len(shards)} parts")
        failed = True
    for key in ("subject_triples", "object_triples"):
        if sum(s[key] for s in shards) != r["triples"]:
            print(f"FAIL: {n} ranks: {key} sum to {sum(s[key] for s in shards)}, the store has {r['triples']}")
            failed = True
    largest.append(max(s["index_bytes"] for s in shards))
    mb = lambda b: b / 2**20
    print(f"{n} ranks: whole store {mb(r['whole_store_bytes']):.1f} MB; per rank: " +
          ", ".join(f"indexes {mb(s['index_bytes']):.2f} MB + dictionary {mb(s['dictionary_bytes']):.2f} MB, "
                    f"resident {mb(s['resident_bytes']):.1f} MB (peak {mb(s['peak_resident_bytes']):.1f})" for s in shards) +
          f"; the 14 queries in {r['shard']['sum_ms']:.2f} ms")
for a, b, na, nb in zip(largest, largest[1:], ranks, ranks[1:]):
    if nb > na and not b < a:
        print(f"FAIL: the largest rank's indexes did not fall from {na} to {nb} ranks: {a} -> {b} bytes")
        failed = True
sys.exit(1 if failed else 0)
EOF
echo "shard: all right on ${*} ranks"
