#!/usr/bin/env bash
# LUBM(10, seed 0) end to end through the CLI: the raw data (1.27 M triples)
# closed by --infer on two cores into a store file, then the 14 queries on one
# core and split over two, each against data/lubm10.answers.tsv. Beyond
# LUBM(1), where Q2 is empty and Q6 / Q14 are small, this is where a plan or
# a split that loses rows would show.
set -u
cli=$1 data=$2 raw=$3 # raw: lubm10-seed0-raw.nt.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$cli" load --quiet --cores 2 --data "$raw" --infer "$data/univ-bench.owl" --output "$tmp/lubm10.store" ||
  fail "load with --infer"
checked=0
while read -r q rows; do
  case $q in '#'*|'') continue ;; esac
  got=$("$cli" query --quiet --count --data "$tmp/lubm10.store" "$data/queries/$q") || fail "$q: status $?"
  [ "$got" = "$rows" ] || fail "$q on one core: $got rows, wanted $rows"
  got=$("$cli" query --quiet --count --cores 2 --data "$tmp/lubm10.store" "$data/queries/$q") || fail "$q split: status $?"
  [ "$got" = "$rows" ] || fail "$q split over 2 cores: $got rows, wanted $rows"
  checked=$((checked + 1))
done < "$data/lubm10.answers.tsv"
[ "$checked" = 14 ] || fail "checked $checked queries, wanted 14"
echo "lubm10: all 14 answers, on one core and on two"
