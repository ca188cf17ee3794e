#!/usr/bin/env python3
"""Runs one benchmark program at smoke sizes and checks what it printed
against its expectations file: the one load-JSON-check-exit routine of every
`bench-smoke` test (cmake/tacomesh_testing.cmake, tacomesh_bench_smoke).

  check_bench.py [--expect FILE [--variant NAME]] [--out JSON] [--needs WHAT]... -- COMMAND...

--needs WHAT: a program on PATH (valgrind, mpirun), an existing file
(/abs/path), or a Python module for an interpreter (python3:igraph,
/usr/bin/python3:matplotlib). When one is missing the test is skipped
(exit 77, "SKIPPED: <why>" on stdout), never passed; so is it when COMMAND
exits 77 itself (having printed its own SKIPPED: line). Exits 0 when every
check holds, 1 with "FAILED: <what>" lines.

The expectations file (TOML, beside the benchmark: NAME.smoke.toml):

  format = "google-benchmark"  # --benchmark_out=JSON is added to the command
                               # "json": one JSON object on stdout
                               # absent: the exit status alone
  names = ["a/{x,y}/cores:{1,2}", "q{01..14}"]
      # benchmarks that must be there, brace-expanded as bash does; a name
      # stands for itself and itself with Google Benchmark's suffixes
      # (/iterations:N, /manual_time...); match = "prefix": any name it starts
  [[counter]]                  # the counters of the benchmarks matching names
  names = "glob*"              #   (fnmatch over the whole name; default "*")
  keys = ["ratio_median"]
  above = 0                    # and/or min, max, equals
  required = true              # a matching benchmark without it fails
  [[same]]                     # one value per group: the runs agree
  key = "modularity"
  group = 1                    #   the name's path component that groups
  digits = 12                  #   rounded to
  [[rows]]                     # exact counts from a data set's answers file
  answers = "../data/x.answers.tsv"   # 'query.rq<TAB>rows' lines, relative to this file
  key = "rows"
  names = ["query/q{01..14}"]  # the name's component that the file names picks the count
  [[value]]                    # format = "json": values by dotted path (a number indexes a list)
  paths = ["{a,b}.ir_per_op"]
  above = 0
  [variant.NAME]               # --variant NAME: its lists are appended, the rest replaced

Every Google Benchmark run must also list at least one benchmark and none
with error_occurred.
"""
import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

SKIP = 77


def expand(template):
    """Bash-like brace expansion: {a,b} alternatives, {01..14} ranges (zero-padded as written)."""
    m = re.search(r"\{([^{}]*)\}", template)
    if not m:
        return [template]
    body = m.group(1)
    r = re.fullmatch(r"(\d+)\.\.(\d+)", body)
    if r:
        width = len(r.group(1)) if r.group(1).startswith("0") else 0
        alts = [str(i).zfill(width) for i in range(int(r.group(1)), int(r.group(2)) + 1)]
    else:
        alts = body.split(",")
    head, tail = template[: m.start()], template[m.end():]
    return [x for a in alts for x in expand(head + a + tail)]


def load_expectations(path, variant):
    with open(path, "rb") as f:
        spec = tomllib.load(f)
    variants = spec.pop("variant", {})
    if variant:
        if variant not in variants:
            sys.exit(f"{path}: no [variant.{variant}]")
        # A variant adds to the lists (names, checks) and replaces the rest.
        for key, value in variants[variant].items():
            if isinstance(value, list) and isinstance(spec.get(key), list):
                spec[key] = spec[key] + value
            else:
                spec[key] = value
    spec["_dir"] = os.path.dirname(os.path.abspath(path))
    return spec


def read_answers(path):
    """{query stem: rows} from an answers file: 'name<TAB>count' lines, '#' comments."""
    answers = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                name, count = line.split()
                answers[os.path.splitext(name)[0]] = int(count)
    return answers


def missing_need(need):
    """Why `need` is not there, or None."""
    python, _, module = need.rpartition(":")
    if python and re.fullmatch(r"[A-Za-z_][\w.]*", module):
        exe = shutil.which(python)
        if not exe:
            return f"{python} not found"
        r = subprocess.run([exe, "-c", f"import {module}"], capture_output=True)
        return None if r.returncode == 0 else f"Python module {module} not importable by {exe}"
    if need.startswith("/"):
        return None if os.path.exists(need) else f"{need} does not exist"
    return None if shutil.which(need) else f"{need} not found on PATH"


def bound_errors(value, rule, what):
    """The ways `value` breaks rule's above / min / max / equals."""
    bad = []
    if "above" in rule and not value > rule["above"]:
        bad.append(f"{what} = {value}, not above {rule['above']}")
    if "min" in rule and not value >= rule["min"]:
        bad.append(f"{what} = {value}, below {rule['min']}")
    if "max" in rule and not value <= rule["max"]:
        bad.append(f"{what} = {value}, above {rule['max']}")
    if "equals" in rule and value != rule["equals"]:
        bad.append(f"{what} = {value}, not {rule['equals']}")
    return bad


def present(names, wanted, match):
    """The benchmark name that stands for `wanted`: the same name, or it with
    Google Benchmark's suffixes (/iterations:N, /manual_time, ...); with
    match = "prefix" any name that starts with it."""
    for n in names:
        if n == wanted or n.startswith(wanted + "/") or (match == "prefix" and n.startswith(wanted)):
            return n
    return None


def check_google_benchmark(doc, spec):
    bench = doc.get("benchmarks", [])
    if not bench:
        return ["no benchmarks in the output"]
    by_name = {b["name"]: b for b in bench}
    names = list(by_name)
    match = spec.get("match", "name")
    problems = []

    missing = [w for t in spec.get("names", []) for w in expand(t) if not present(names, w, match)]
    missing_names = set(missing)
    if missing:
        problems.append(f"missing {missing}")
    errors = [f"{b['name']}: {b.get('error_message', '')}" for b in bench if b.get("error_occurred")]
    if errors:
        problems.append(f"in error {errors}")

    for rule in spec.get("counter", []):
        pattern = rule.get("names", "*")
        chosen = [b for b in bench if fnmatch.fnmatchcase(b["name"], pattern)]
        if rule.get("required") and not chosen:
            problems.append(f"no benchmark matches {pattern!r} (counter {rule['keys']})")
        for b in chosen:
            for key in rule["keys"]:
                if key not in b:
                    if rule.get("required"):
                        problems.append(f"{b['name']}: no {key}")
                    continue
                problems += bound_errors(b[key], rule, f"{b['name']}: {key}")

    # The same result everywhere: one value per group (a path component of the name).
    for rule in spec.get("same", []):
        key, group, digits = rule["key"], rule.get("group", 1), rule.get("digits", 12)
        values = {}
        for b in bench:
            if key in b:
                values.setdefault(b["name"].split("/")[group], set()).add(round(b[key], digits))
            elif rule.get("required"):
                problems.append(f"{b['name']}: no {key}")
        differing = {g: sorted(v) for g, v in values.items() if len(v) != 1}
        if differing:
            problems.append(f"{key} differs within {differing}")

    # Exact counts from a data set's answers file: the name's first path
    # component that the file names picks the answer.
    for rule in spec.get("rows", []):
        answers = read_answers(os.path.join(spec["_dir"], rule["answers"]))
        key = rule.get("key", "rows")
        for w in (w for t in rule["names"] for w in expand(t)):
            n = present(names, w, "name")
            if n is None:
                if w not in missing_names:
                    problems.append(f"missing {w}")
                continue
            which = next((c for c in w.split("/") if c in answers), None)
            if which is None:
                problems.append(f"{w}: no component of the name is in {rule['answers']}")
            elif by_name[n].get(key) != answers[which]:
                problems.append(f"{n}: {key} = {by_name[n].get(key)}, the answer is {answers[which]}")
    return problems


def lookup(doc, path):
    """A value by its dotted path; a number indexes a list."""
    for part in path.split("."):
        if isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        elif isinstance(doc, dict) and part in doc:
            doc = doc[part]
        else:
            return None
    return doc


def check_json(doc, spec):
    problems = []
    for rule in spec.get("value", []):
        for path in (p for t in rule["paths"] for p in expand(t)):
            v = lookup(doc, path)
            if v is None:
                problems.append(f"no {path}")
            else:
                problems += bound_errors(v, rule, path)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--expect", help="the expectations file (TOML)")
    ap.add_argument("--variant", help="a [variant.NAME] of it")
    ap.add_argument("--out", help="where the JSON is kept (default: COMMAND's name.json in the working directory)")
    ap.add_argument("--needs", action="append", default=[])
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        ap.error("no command")

    for need in a.needs:
        why = missing_need(need)
        if why:
            print(f"SKIPPED: {why}")
            return SKIP

    spec = load_expectations(a.expect, a.variant) if a.expect else {}
    fmt = spec.get("format")
    out = a.out or os.path.abspath(os.path.basename(command[0]) + ".json")
    if os.path.exists(out):  # a stale one must not pass, nor feed a later test
        os.remove(out)
    if fmt == "google-benchmark":
        command = command + [f"--benchmark_out={out}", "--benchmark_out_format=json"]
    print("+", " ".join(command), flush=True)
    run = subprocess.run(command, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE if fmt == "json" else None, text=True)
    if run.returncode == SKIP:  # the command could not run here, and its SKIPPED: line said why
        return SKIP
    if run.returncode != 0:
        print(f"FAILED: exit status {run.returncode}")
        return 1
    if fmt is None:
        return 0

    try:
        if fmt == "json":
            with open(out, "w") as f:
                f.write(run.stdout)
            doc = json.loads(run.stdout)
        else:
            with open(out) as f:
                doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"FAILED: no valid JSON ({e})")
        return 1
    problems = check_google_benchmark(doc, spec) if fmt == "google-benchmark" else check_json(doc, spec)
    for p in problems:
        print(f"FAILED: {p}")
    if not problems:
        print(f"ok: {out} meets {a.expect}" + (f" [{a.variant}]" if a.variant else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
