#!/usr/bin/env bash
# tacomesh-rdf as a user and a script run it: the --count form, formats,
# models, load to a store file, inference, and each kind of mistake.
set -u
cli=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The record of store files checked (rdf/checked_stores.hpp): this run's own.
export XDG_CACHE_HOME=$tmp/cache
fail() { echo "FAIL: $*"; exit 1; }
expect() { # what, got, wanted
  [ "$2" = "$3" ] || fail "$1: got '$2', wanted '$3'"
}
# The published LUBM(1) answers, by query file: answer q06.rq -> 7790.
answer() { awk -v q="$1" '$1 == q { print $2; found = 1 } END { exit !found }' "$data/lubm1.answers.tsv" ||
  fail "no answer for $1 in $data/lubm1.answers.tsv"; }

# The exact form scripts use: only the count on stdout.
out=$("$cli" query --data "$data/lubm1-inferred.nt.gz" "$data/queries/q06.rq" --count 2>/dev/null)
expect "q06 --count" "$out" "$(answer q06.rq)"

# The sanitizer trees (TACOMESH_SANITIZED set) run the paths, not every query
# over them again: three of the queries, and no inference at load (a fifth of
# the script each, 7 s under ASan; rdf_tests infers there).
sanitized=${TACOMESH_SANITIZED:-}
queries=$(seq 1 14); [ -z "$sanitized" ] || queries="1 9 14"

# A store file, then every query from it: single core and data-parallel on processes.
"$cli" load --data "$data/lubm1-inferred.nt.gz" --output "$tmp/lubm.store" --quiet || fail "load"
for i in $queries; do
  q=$(printf "q%02d.rq" "$i")
  expect "q$i from the store" "$("$cli" query --data "$tmp/lubm.store" "$data/queries/$q" --count --quiet)" "$(answer "$q")"
done
# On one core the store is mapped and read in place; on several, copied for the cores to share.
# A file is checked whole when first opened, and recorded once its times
# can tell a later change (2 s after its last); unchanged, it is not
# checked again, unless --check-store.
cp "$tmp/lubm.store" "$tmp/fresh.store"
opened() { "$cli" query --data "$tmp/fresh.store" "$data/queries/q09.rq" --count "$@" 2>&1 >/dev/null |
  sed -n 's/.*, \(mapped.*\) in [0-9.]* s$/\1/p'; }
expect "one core: a fresh store mapped and checked" "$(opened)" "mapped and checked"
expect "a fresh store not recorded" "$(opened)" "mapped and checked"
sleep 2.1
expect "a settled store checked, and recorded" "$(opened)" "mapped and checked"
expect "then not checked again" "$(opened)" "mapped (checked before, unchanged since)"
expect "--check-store checks anyway" "$(opened --check-store)" "mapped and checked"
expect "the record" "$(grep -c '^[0-9]' "$XDG_CACHE_HOME/tacomesh/checked-stores")" "1"
"$cli" query --data "$tmp/lubm.store" "$data/queries/q09.rq" --count --cores 2 >/dev/null 2>"$tmp/err"
expect "two cores: the store loaded" "$(grep -c ', loaded in' "$tmp/err")" "1"
expect "q09 data-parallel, processes" \
  "$("$cli" query --data "$tmp/lubm.store" "$data/queries/q09.rq" --count --quiet --cores 2 --model data --platform processes)" "$(answer q09.rq)"
# --explain shows the deal's balance: each core's rows (they add up) and time.
"$cli" query --data "$tmp/lubm.store" "$data/queries/q09.rq" --count --cores 2 --platform processes --explain >/dev/null 2>"$tmp/err"
expect "explain: a line per core" "$(grep -c '^  core [01]: [0-9]* rows in [0-9.]* ms$' "$tmp/err")" "2"
expect "explain: the cores' rows add up" "$(awk '/^  core [01]: /{n += $3} END{print n}' "$tmp/err")" "$(answer q09.rq)"

# A store of no triples (from an empty file) opens and answers nothing, without an error.
: > "$tmp/empty.nt"
"$cli" load --data "$tmp/empty.nt" --output "$tmp/empty.store" --quiet || fail "load of an empty file"
out=$("$cli" query --data "$tmp/empty.store" "$data/queries/q01.rq" --count --quiet 2>"$tmp/err"); rc=$?
expect "empty store: status" "$rc" "0"; expect "empty store: rows" "$out" "0"; expect "empty store: stderr" "$(cat "$tmp/err")" ""

# --explain with a constant the data lacks: the plan shows it as the query wrote it.
printf 'SELECT ?x WHERE { ?x <http://e/nothing> <http://e/o> . ?x ?p ?y }\n' > "$tmp/missing.rq"
out=$("$cli" query --data "$tmp/lubm.store" "$tmp/missing.rq" --explain --count 2>"$tmp/err"); rc=$?
expect "explain, constant not in the data: status" "$rc" "0"; expect "explain, constant not in the data: rows" "$out" "0"
grep -q "<http://e/nothing> (not in the data)" "$tmp/err" || fail "explain names the missing constant: $(cat "$tmp/err")"

# bench: a query that does not parse is named, with its line and column, whichever of the files it is.
printf 'SELECT ?x WHERE {\n  ?x ?p ?o ?q }\n' > "$tmp/second.rq"
out=$("$cli" bench --data "$tmp/lubm.store" "$data/queries/q01.rq" "$tmp/second.rq" --runs 1 --quiet 2>"$tmp/err"); rc=$?
expect "bench, bad second query: status" "$rc" "1"; expect "bench, bad second query: stdout" "$out" ""
grep -q "second.rq: line 2, column 12: expected '.' or '}' after a triple pattern" "$tmp/err" || fail "bench names the bad query: $(cat "$tmp/err")"
# bench times basic graph patterns (the models split them); an OPTIONAL is refused by name.
printf 'SELECT ?x WHERE {\n  ?x ?p ?o OPTIONAL { ?x ?p ?o } }\n' > "$tmp/optional.rq"
"$cli" bench --data "$tmp/lubm.store" "$tmp/optional.rq" --runs 1 --quiet >/dev/null 2>"$tmp/err"; rc=$?
expect "bench, OPTIONAL query: status" "$rc" "1"
grep -q "optional.rq: bench times basic graph patterns" "$tmp/err" || fail "bench refuses a query beyond a BGP: $(cat "$tmp/err")"
grep -q "q01.rq" "$tmp/err" && fail "bench blames the good query: $(cat "$tmp/err")"

# Inference at load: raw data + the ontology answer as the inferred file does.
if [ -z "$sanitized" ]; then
  "$cli" load --data "$data/lubm1-raw.nt.gz" --infer "$data/univ-bench.owl" --output "$tmp/raw.store" 2>"$tmp/err" || fail "load --infer"
  grep -q "inference: [0-9]* triples added" "$tmp/err" || fail "load --infer reports the triples added: $(cat "$tmp/err")"
  expect "q12 after inference" "$("$cli" query --data "$tmp/raw.store" "$data/queries/q12.rq" --count --quiet)" "$(answer q12.rq)"
fi

# TSV and JSON output.
"$cli" query --data "$tmp/lubm.store" "$data/queries/q01.rq" --quiet > "$tmp/q1.tsv"
expect "TSV header" "$(head -1 "$tmp/q1.tsv")" "?X"
expect "TSV rows" "$(wc -l < "$tmp/q1.tsv")" "$(($(answer q01.rq) + 1))"
"$cli" query --data "$tmp/lubm.store" "$data/queries/q01.rq" --quiet --format json > "$tmp/q1.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['head']['vars']==['X'] and len(d['results']['bindings'])==int(sys.argv[2]) and d['results']['bindings'][0]['X']['type']=='uri'" "$tmp/q1.json" "$(answer q01.rq)" \
  || fail "JSON results"
echo 'SELECT ?s WHERE { ?s ?p ?o } LIMIT 3' | "$cli" query --data "$tmp/lubm.store" - --count --quiet > "$tmp/stdin" || fail "query from stdin"
expect "query from stdin" "$(cat "$tmp/stdin")" "3"

# bench: JSON with every model.
"$cli" bench --data "$tmp/lubm.store" "$data/queries/q01.rq" "$data/queries/q14.rq" --runs 2 --repeat 2 --json --quiet > "$tmp/bench.json" || fail "bench"
python3 -c "import json,sys; n=int(sys.argv[2]); d=json.load(open(sys.argv[1])); assert d['single']['queries'][1]['rows']==n and d['data']['queries'][1]['rows']==n and d['task']['queries']==4" "$tmp/bench.json" "$(answer q14.rq)" \
  || fail "bench JSON: $(cat "$tmp/bench.json")"

# SPARQL 1.1 beyond a basic graph pattern, through the CLI: an aggregate gives Q14's
# published count, ASK its boolean in each format, CONSTRUCT N-Triples, parse a verdict.
ub='PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>'
printf '%s\nSELECT (COUNT(*) AS ?n) WHERE { ?x a ub:UndergraduateStudent }\n' "$ub" > "$tmp/count.rq"
expect "COUNT(*) as Q14's rows" "$("$cli" query --quiet --data "$tmp/lubm.store" "$tmp/count.rq" --format csv)" \
  "$(printf 'n\r\n%s\r' "$(answer q14.rq)")"
printf '%s\nASK { ?x a ub:UndergraduateStudent }\n' "$ub" > "$tmp/ask.rq"
expect "ASK, TSV" "$("$cli" query --quiet --data "$tmp/lubm.store" "$tmp/ask.rq")" "true"
expect "ASK, JSON" "$("$cli" query --quiet --data "$tmp/lubm.store" "$tmp/ask.rq" --format json)" '{"head":{},"boolean":true}'
printf '%s\nCONSTRUCT { ?x ub:studies ?c } WHERE { ?x ub:takesCourse ?c } LIMIT 5\n' "$ub" > "$tmp/construct.rq"
out=$("$cli" query --quiet --data "$tmp/lubm.store" "$tmp/construct.rq")
expect "CONSTRUCT, N-Triples lines" "$(printf '%s\n' "$out" | grep -c ' <http://swat.cse.lehigh.edu/onto/univ-bench.owl#studies> .* \.$')" "5"
expect "parse, a good query" "$("$cli" parse "$tmp/construct.rq")" "$tmp/construct.rq: a CONSTRUCT query"

# A load in a small buffer (its triples sorted in runs on disk) gives the same store file
# (the sanitizer trees check the runs in rdf_tests, on smaller data).
if [ -z "$sanitized" ]; then
  "$cli" load --load-memory 64K --data "$data/lubm1-inferred.nt.gz" --output "$tmp/runs.store" --quiet || fail "load in runs"
  cmp -s "$tmp/lubm.store" "$tmp/runs.store" || fail "--load-memory 64K wrote another store"
fi

# Mistakes: a message naming the problem, exit status 1 (bad input) or 2 (bad usage), nothing on stdout.
"$cli" load --load-memory lots --data "$data/lubm1-inferred.nt.gz" --output "$tmp/x.store" 2>"$tmp/err"; rc=$?
expect "--load-memory lots: status" "$rc" "2"; grep -q -- "--load-memory wants a size" "$tmp/err" || fail "--load-memory: $(cat "$tmp/err")"
printf '<http://e/a> <http://e/p> "open .\n' > "$tmp/bad.nt"
out=$("$cli" query --data "$tmp/bad.nt" "$data/queries/q01.rq" --count 2>"$tmp/err"); rc=$?
expect "malformed data: status" "$rc" "1"; expect "malformed data: stdout" "$out" ""
grep -q "bad.nt:1:" "$tmp/err" || fail "malformed data names file:line: $(cat "$tmp/err")"
printf 'SELECT ?x WHERE {\n  ?x ?p ?o .\n  SERVICE <http://e/> { ?x ?p ?o }\n}\n' > "$tmp/service.rq"
"$cli" query --data "$tmp/lubm.store" "$tmp/service.rq" --count >/dev/null 2>"$tmp/err"; rc=$?
expect "unsupported SPARQL: status" "$rc" "1"
grep -q "line 3, column 3: SERVICE" "$tmp/err" || fail "unsupported SPARQL names construct and position: $(cat "$tmp/err")"
"$cli" parse "$tmp/service.rq" >/dev/null 2>"$tmp/err"; rc=$?
expect "parse, unsupported SPARQL: status" "$rc" "1"; grep -q "line 3, column 3: SERVICE" "$tmp/err" || fail "parse: $(cat "$tmp/err")"
"$cli" query --data "$tmp/nonexistent.nt" "$data/queries/q01.rq" >/dev/null 2>"$tmp/err"; rc=$?
expect "missing file: status" "$rc" "1"; grep -q "cannot open" "$tmp/err" || fail "missing file: $(cat "$tmp/err")"
"$cli" query "$data/queries/q01.rq" >/dev/null 2>"$tmp/err"; rc=$?
expect "no data: status" "$rc" "2"; grep -q -- "--data" "$tmp/err" || fail "no data: $(cat "$tmp/err")"
"$cli" query --data "$tmp/lubm.store" "$data/queries/q01.rq" --cores 0 >/dev/null 2>"$tmp/err"; rc=$?
expect "--cores 0: status" "$rc" "2"
"$cli" query --data "$tmp/lubm.store" "$data/queries/q01.rq" --model task >/dev/null 2>"$tmp/err"; rc=$?
expect "--model task for one query: status" "$rc" "2"; grep -q "bench" "$tmp/err" || fail "--model task: $(cat "$tmp/err")"
# --model shard on core threads (MPI ranks: shard_test.sh): the answer, TSV
# as one core gives it, and each core's part on stderr; the mistakes refused.
# (Not under the sanitizers: rdf_tests runs the sharded store's paths there.)
if [ -z "$sanitized" ]; then
expect "q09 sharded over 3 cores" \
  "$("$cli" query --data "$tmp/lubm.store" "$data/queries/q09.rq" --count --cores 3 --model shard 2>"$tmp/err")" "$(answer q09.rq)"
expect "sharded: a line per core" "$(grep -c '^  core [0-2]: [0-9]* triples by subject' "$tmp/err")" "3"
cmp -s <("$cli" query --data "$tmp/lubm.store" "$data/queries/q04.rq" --quiet --cores 2 --model shard | sort) \
  <("$cli" query --data "$tmp/lubm.store" "$data/queries/q04.rq" --quiet | sort) || fail "sharded TSV differs from one core's"
"$cli" query --data "$tmp/lubm.store" "$data/queries/q01.rq" --model shard --infer "$data/univ-bench.owl" >/dev/null 2>"$tmp/err"; rc=$?
expect "--model shard --infer: status" "$rc" "2"; grep -q "load --infer" "$tmp/err" || fail "--model shard --infer: $(cat "$tmp/err")"
printf 'SELECT ?s WHERE { ?s ?p ?o OPTIONAL { ?s ?q ?r } }\n' > "$tmp/optional.rq"
"$cli" query --data "$tmp/lubm.store" "$tmp/optional.rq" --model shard --cores 2 >/dev/null 2>"$tmp/err"; rc=$?
expect "--model shard, OPTIONAL: status" "$rc" "1"; grep -q "basic graph patterns" "$tmp/err" || fail "--model shard, OPTIONAL: $(cat "$tmp/err")"
fi
head -c 1000 "$tmp/lubm.store" > "$tmp/cut.store"
"$cli" query --data "$tmp/cut.store" "$data/queries/q01.rq" >/dev/null 2>"$tmp/err"; rc=$?
expect "truncated store: status" "$rc" "1"; grep -q "truncated\|corrupt" "$tmp/err" || fail "truncated store: $(cat "$tmp/err")"
# Every input is read right or refused, naming it (and the line and column in text): status 1
# for a bad file, 2 for bad usage, nothing on stdout.
refused() { # what, status, message pattern, arguments...
  local what=$1 status=$2 pattern=$3; shift 3
  out=$("$cli" "$@" 2>"$tmp/err"); rc=$?
  expect "$what: status" "$rc" "$status"; expect "$what: stdout" "$out" ""
  grep -q -- "$pattern" "$tmp/err" || fail "$what: wanted '$pattern' in: $(cat "$tmp/err")"
}
q01=$data/queries/q01.rq
refused "query file missing" 1 "nonexistent.rq: cannot open" query --data "$tmp/lubm.store" "$tmp/nonexistent.rq"
refused "query file a directory" 1 "$tmp: is a directory" query --data "$tmp/lubm.store" "$tmp"
refused "data a directory" 1 "$tmp: cannot read: Is a directory" query --data "$tmp" "$q01"
refused "ontology missing" 1 "nonexistent.owl: cannot open" query --data "$tmp/lubm.store" --infer "$tmp/nonexistent.owl" "$q01"
: > "$tmp/empty.rq"
refused "empty query" 1 "empty.rq: line 1, column 1: empty query" query --data "$tmp/lubm.store" "$tmp/empty.rq"
printf 'SELECT * { ?s ?p ?o }\n} garbage\n' > "$tmp/trailing.rq"
refused "query with trailing garbage" 1 "trailing.rq: line 2, column 1: expected end of query, found '}'" \
  query --data "$tmp/lubm.store" "$tmp/trailing.rq"
head -c 50000 "$data/lubm1-raw.nt.gz" > "$tmp/cut.nt.gz"
refused "truncated gzip" 1 "cut.nt.gz: corrupt or truncated gzip data" query --data "$tmp/cut.nt.gz" "$q01"
printf '@prefix : <http://e/> .\n:a :p :b .\n:a :p .\n' > "$tmp/bad.ttl"
refused "malformed Turtle" 1 "bad.ttl:3: syntax error" query --data "$tmp/bad.ttl" "$q01"
printf '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n<rdf:Description rdf:about="http://e/a">\n</rdf:Descriptio>\n</rdf:RDF>\n' > "$tmp/bad.rdf"
refused "malformed RDF/XML" 1 "bad.rdf:4: XML parser error" query --data "$tmp/bad.rdf" "$q01"
refused "--cores 99999999999" 2 "--cores 99999999999: from 1 to 1024" query --data "$tmp/lubm.store" "$q01" --cores 99999999999
refused "--cores -1" 2 "--cores wants a whole number, not '-1'" query --data "$tmp/lubm.store" "$q01" --cores -1
refused "--runs 0" 2 "--runs 0: from 1 to" bench --data "$tmp/lubm.store" "$q01" --runs 0
refused "--repeat 0" 2 "--repeat 0: from 1 to" bench --data "$tmp/lubm.store" "$q01" --repeat 0
refused "--repeat too large" 2 "--repeat 123456789012345678901234567890: from 1 to" bench --data "$tmp/lubm.store" "$q01" \
  --repeat 123456789012345678901234567890
refused "store output a directory" 1 "$tmp: cannot replace: Is a directory" load --data "$tmp/empty.nt" --output "$tmp" --quiet
# Blank nodes of different --data files are different nodes (RDF merge), whatever labels the
# files use: the second file's _:x is not the first file's _:f1_x. Both by query and by load.
printf '_:f1_x <http://ex/p> <http://ex/A> .\n' > "$tmp/bn_a.nt"
printf '_:x <http://ex/p> <http://ex/B> .\n' > "$tmp/bn_b.nt"
printf 'SELECT ?s WHERE { ?s <http://ex/p> <http://ex/A> . ?s <http://ex/p> <http://ex/B> }\n' > "$tmp/bn_join.rq"
expect "blank nodes of two files, query" \
  "$("$cli" query --quiet --count --data "$tmp/bn_a.nt" --data "$tmp/bn_b.nt" "$tmp/bn_join.rq")" "0"
"$cli" load --quiet --data "$tmp/bn_a.nt" --data "$tmp/bn_b.nt" --output "$tmp/bn.store" || fail "load of two files with blank nodes"
expect "blank nodes of two files, load" "$("$cli" query --quiet --count --data "$tmp/bn.store" "$tmp/bn_join.rq")" "0"
printf '@prefix : <http://ex/> .\n_:x :p :B .\n' > "$tmp/bn_b.ttl"
expect "blank nodes of an N-Triples and a Turtle file" \
  "$("$cli" query --quiet --count --data "$tmp/bn_a.nt" --data "$tmp/bn_b.ttl" "$tmp/bn_join.rq")" "0"
# A relative IRI with no BASE in effect would silently match nothing: refused where it is.
printf 'SELECT ?n WHERE { <f> <http://ex/id> ?n }\n' > "$tmp/relative.rq"
refused "relative IRI without BASE" 1 "relative.rq: line 1, column 19: <f> is a relative IRI and no BASE is in effect" \
  query --data "$tmp/bn_a.nt" "$tmp/relative.rq"
printf 'PREFIX ns: <ns#>\nBASE <http://x.org/dir/>\nSELECT * WHERE { ?s ?p ns:thing }\n' > "$tmp/relative_prefix.rq"
refused "relative PREFIX IRI before BASE" 1 "relative_prefix.rq: line 1, column 12: <ns#> is a relative IRI" \
  query --data "$tmp/bn_a.nt" "$tmp/relative_prefix.rq"
# An escape naming no character (a lone surrogate) is refused at its place, not passed on as bytes
# that are not UTF-8 in TSV and JSON.
printf '<http://e/a> <http://e/p> "\\uD800" .\n' > "$tmp/surrogate.nt"
refused "surrogate escape in N-Triples" 1 "surrogate.nt:1:28: escape '.uD800' names no Unicode character" \
  query --data "$tmp/surrogate.nt" "$tmp/bn_join.rq"
printf '@prefix : <http://e/> .\n:a :p "\\uDFFF" .\n' > "$tmp/surrogate.ttl"
refused "surrogate escape in Turtle" 1 "surrogate.ttl:2:8: escape '.uDFFF'" query --data "$tmp/surrogate.ttl" "$tmp/bn_join.rq"
# A Turtle undeclared prefix, which raptor reports without a place, at its line and column.
printf '@prefix : <http://e/> .\n:a :p :b .\n# undefined:d\n:a :p "undefined:d" .\n:a :p undefined:d .\n' > "$tmp/prefix.ttl"
refused "undeclared Turtle prefix" 1 'prefix.ttl:5:7: The namespace prefix in "undefined:d" was not declared' \
  query --data "$tmp/prefix.ttl" "$tmp/bn_join.rq"
# Patterns that share no variable multiply out (7^12 rows of 7 triples: 21 GB and the OOM
# killer, once). With LIMIT the rows stop at the limit, on one core and split; without, the
# query is refused, naming the patterns and the option that raises the budget.
printf '<http://e/a> <http://e/p> <http://e/b> .\n<http://e/b> <http://e/p> <http://e/c> .\n<http://e/a> <http://e/q> "hello"@en .\n<http://e/a> <http://e/q> "hello" .\n<http://e/a> <http://e/q> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .\n<http://e/c> <http://e/p> <http://e/a> .\n_:x <http://e/p> <http://e/a> .\n' > "$tmp/seven.nt"
product() { # patterns
  local q="SELECT * WHERE {" i
  for i in $(seq 0 $(($1 - 1))); do q="$q ?s$i ?p$i ?o$i ."; done
  echo "$q }"
}
echo "$(product 12) LIMIT 2" > "$tmp/product12_limit2.rq"
expect "12-pattern product, LIMIT 2" "$("$cli" query --quiet --data "$tmp/seven.nt" "$tmp/product12_limit2.rq" | wc -l)" "3"
expect "12-pattern product, LIMIT 2, split on processes" \
  "$("$cli" query --quiet --count --cores 2 --platform processes --data "$tmp/seven.nt" "$tmp/product12_limit2.rq")" "2"
product 3 > "$tmp/product3.rq"
expect "3-pattern product within the budget" \
  "$("$cli" query --quiet --count --max-intermediate-rows 343 --data "$tmp/seven.nt" "$tmp/product3.rq")" "343"
refused "3-pattern product past --max-intermediate-rows" 1 \
  "query refused: pattern 3 { ?s2 ?p2 ?o2 } shares no variable with patterns 1-2 before it: their product has 49 x 7 = 343 rows, past the budget for one table of 100 rows (--max-intermediate-rows 100)" \
  query --data "$tmp/seven.nt" "$tmp/product3.rq" --max-intermediate-rows 100 --quiet
refused "3-pattern product past --memory-limit, 2 cores" 1 "their product has 49 x 7 = 343 rows, past the budget for one table of 113 rows of 9 ids (--memory-limit 4096)" \
  query --data "$tmp/seven.nt" "$tmp/product3.rq" --memory-limit 4096 --cores 2 --quiet
refused "--memory-limit not a size" 2 "--memory-limit wants a size in bytes, e.g. 4096, 512M or 8G, not '12X'" \
  query --data "$tmp/seven.nt" "$tmp/product3.rq" --memory-limit 12X
# A store whose dictionary was damaged (the closing quote of "hello"@en, XOR 0x80) is refused
# on open, naming the term and the byte, not printed as an unclosed literal.
"$cli" load --quiet --data "$tmp/seven.nt" --output "$tmp/seven.store" || fail "load seven.nt"
python3 -c "import sys; b=bytearray(open(sys.argv[1],'rb').read()); i=b.index(b'\"hello\"@en')+6; b[i]^=0x80; open(sys.argv[2],'wb').write(b)" \
  "$tmp/seven.store" "$tmp/flipped.store"
refused "a flipped byte in a literal" 1 "flipped.store: corrupt store file: dictionary key [0-9]* is not an N-Triples term: not valid UTF-8 at byte" \
  query --data "$tmp/flipped.store" "$tmp/product3.rq" --format json

# bench --json with a query file whose name JSON must escape.
cp "$q01" "$tmp/a\"b.rq"
"$cli" bench --data "$tmp/lubm.store" "$tmp/a\"b.rq" --model single --runs 1 --json --quiet > "$tmp/bench.json" || fail "bench, odd name"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['single']['queries'][0]['query']=='a\"b.rq'" "$tmp/bench.json" \
  || fail "bench JSON with a quote in a query's name: $(cat "$tmp/bench.json")"
echo "cli: all checks passed"
