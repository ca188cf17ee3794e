#!/usr/bin/env python3
"""Regenerate bench/README.md's result tables from the benchmarks' JSON.

  bench/report.py --json-dir DIR [--readme bench/README.md] [--check]

DIR holds the JSON the benchmarks wrote: Google Benchmark's
(`--benchmark_out=X.json --benchmark_out_format=json` or
`--benchmark_format=json > X.json`) of bench_invocation, bench_collective,
bench_tasks, bench_mesh and bench_memory, and the scripts' own JSON
(count_instructions.sh, count_task_instructions.sh,
run_allreduce_compare.sh, run_mpi_compare.sh). Each file is one run; when
several files hold the same benchmark, a cell shows every run's value,
`run 1 / run 2 / ...`, in file-name order.

Each table sits between `<!-- table:NAME -->` and `<!-- end -->` in the
README and is replaced whole; a table with no data in DIR is left as it
is (so one benchmark can be rerun alone). --check prints the tables
instead of writing the README.
"""
import argparse
import json
import pathlib
import re
import sys

SUFFIX = re.compile(r"(/(manual_time|real_time|process_time|iterations:\d+|repeats:\d+|threads:\d+))+$")


def load(json_dir):
    """runs: a list (one per file) of {benchmark name: record}."""
    runs = []
    for path in sorted(pathlib.Path(json_dir).glob("*.json")):
        text = path.read_text().strip()
        if not text:
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            # the scripts print one JSON object per line or a last line of JSON
            data = json.loads(text.splitlines()[-1])
        run = {}
        if isinstance(data, dict) and "benchmarks" in data:
            for b in data["benchmarks"]:
                if b.get("run_type", "iteration") != "iteration":
                    continue
                run[SUFFIX.sub("", b["name"])] = b
        elif isinstance(data, dict) and "benchmark" in data:
            run[data["benchmark"]] = data
        runs.append(run)
    return runs


def fmt(v, spec):
    if v is None:
        return "-"
    if spec == "int":
        return f"{int(round(v)):,}"
    if spec == "bool":
        return "yes" if v else "no"
    return format(v, spec)


def cell(runs, name, get, spec):
    values = []
    for run in runs:
        if name in run:
            try:
                values.append(fmt(get(run[name]), spec))
            except (KeyError, TypeError):
                values.append("-")
    return " / ".join(values) if values else None


def counter(key):
    return lambda b: b[key]


def spread(b):
    return f"{b['ratio_median']:.2f} ({b['ratio_p10']:.2f}-{b['ratio_p90']:.2f})"


def names(runs, pattern):
    """Benchmark names matching pattern, in first-seen order."""
    seen = []
    for run in runs:
        for n in run:
            if re.fullmatch(pattern, n) and n not in seen:
                seen.append(n)
    return seen


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def spread_if_copied(b):
    """The ratio, unless the benchmark copied nothing (bench_mesh's counter
    `copied` = 0: thread mode, noop), where a ratio to memcpy means nothing."""
    return spread(b) if b.get("copied", 1) else "nothing copied"


def ratio_rows(runs, pattern, extra=(), ratio=spread):
    """Rows of paired benchmarks: name, ratio median (p10-p90), ours, base, extra counters."""
    rows = []
    for n in names(runs, pattern):
        row = [f"`{n}`", cell(runs, n, ratio, "s"), cell(runs, n, counter("ours_ns"), ".1f"),
               cell(runs, n, counter("base_ns"), ".1f")]
        row += [cell(runs, n, counter(k), f) or "-" for k, f in extra]
        rows.append([c or "-" for c in row])
    return rows


PAIRED = ["benchmark", "ratio, median (p10-p90)", "ours, ns", "baseline, ns"]


def t_invocation(runs):
    rows = ratio_rows(runs, r"(polling_round_trip|one_way_rate|sleeping_round_trip|carried_string/.*).*",
                      [("ours_deferred_frac", ".3f"), ("ours_sleeps_per_rt", ".2f"), ("ours_gbps", ".2f"),
                       ("base_gbps", ".2f")])
    return table(PAIRED + ["sends queued locally", "sleeps per trip", "ours, GB/s", "baseline, GB/s"],
                 rows) if rows else None


def t_channel_memory(runs):
    rows = []
    for n in names(runs, r"channel_memory/.*"):
        rows.append([f"`{n}`"] + [cell(runs, n, counter(k), "int") or "-" for k in
                                  ("cores", "rings", "channel_bytes", "bytes_per_core", "dense_bytes_per_core")])
    return table(["benchmark", "cores", "rings", "channel bytes", "bytes per core", "dense (all pairs) per core"],
                 rows) if rows else None


def t_instructions(runs):
    rows = []
    for mode in ("async", "round_trip"):
        c = cell(runs, "instructions_per_invocation", lambda b: b[mode]["ir_per_invocation"], ".1f")
        if c:
            rows.append([f"`{mode}`", c, "-"])
    return table(["operation", "instructions per operation", "ratio to baseline"], rows) if rows else None


def t_task_instructions(runs):
    rows = []
    for n in names(runs, r"instructions_per_task"):
        modes = []
        for run in runs:
            modes += [m for m, v in run.get(n, {}).items() if isinstance(v, dict) and m not in modes]
        for m in modes:
            c = cell(runs, n, lambda b: b[m]["ir_per_op"], ".1f")
            base = next((k for k in ("ratio_vs_deque", "ratio_vs_plain_call", "ratio_vs_fiber")
                         if any(k in run.get(n, {}).get(m, {}) for run in runs)), None)
            r = cell(runs, n, lambda b: b[m][base], ".2f") if base else None
            rows.append([f"`{m}`", c or "-", f"{r} ({base[9:]})" if r else "-"])
    return table(["operation", "instructions per operation", "ratio to baseline"], rows) if rows else None


def t_mpi(runs):
    rows = []
    for n in names(runs, r"taco_.*_vs_mpi.*|.*pingpong.*"):
        rows.append([f"`{n}`", cell(runs, n, counter("ratio_median"), ".3f") or "-",
                     cell(runs, n, counter("target"), ".2f") or "-"])
    return table(["comparison", "ours / MPI, median of rounds", "target"], rows) if rows else None


def t_collective(runs):
    rows = ratio_rows(runs, r"reduce_(2core|scaling/.*)", [("depth", "int")])
    return table(PAIRED + ["tree depth"], rows) if rows else None


def t_reduce_model(runs):
    n = "reduce_model"
    if not any(n in r for r in runs):
        return None
    rows = []
    for cores in (48, 1024):
        rows.append([str(cores)] + [cell(runs, n, counter(f"{s}_{cores}_us"), ".2f") or "-"
                                    for s in ("kary4", "kary2", "binomial", "flat")]
                    + [cell(runs, n, counter(f"binomial_largest_first_{cores}_us"), ".2f") or "-"])
    inputs = "; ".join(" / ".join(f"{run[n][k]:.0f}" for k in ("hop_ns", "member_ns", "local1_ns"))
                       for run in runs if n in run)
    return table(["cores", "k-ary 4, us", "k-ary 2, us", "binomial, us", "flat, us",
                  "binomial, largest subtree first, us"], rows) + f"\n\nModel inputs h / m / local_1 (ns): {inputs}."


def t_tasks(runs):
    rows = ratio_rows(runs, r"(protothread_resume|coroutine_switch|scheduler|sync_round_trip)/.*")
    return table(PAIRED, rows) if rows else None


def mesh_named(pattern, extra, ratio=spread):
    def make(runs):
        rows = ratio_rows(runs, pattern, [(k, f) for _, k, f in extra], ratio)
        return table(PAIRED + [h for h, _, _ in extra], rows) if rows else None
    return make


def t_map_ops(runs):
    rows = []
    for n in names(runs, r"map_ops/.*"):
        rows.append([f"`{n}`"] + [cell(runs, n, counter(f"{k}_ratio"), ".2f") or "-"
                                  for k in ("acquire", "read", "write", "release")]
                    + [cell(runs, n, counter("release_ns"), ".0f") or "-"])
    return table(["benchmark", "acquire", "read", "write", "release", "release, ns"], rows) if rows else None


def t_broadcast_overlap(runs):
    rows = []
    for n in names(runs, r"(broadcast_overlap|integrity_1mib)/.*"):
        rows.append([f"`{n}`"] + [cell(runs, n, counter(k), f) or "-" for k, f in
                                  (("bc_per_ts", ".2f"), ("ov_per_ts", ".2f"), ("bc_extra_per_rt", ".2f"),
                                   ("ts_ns", ".0f"))])
    return table(["benchmark", "Broadcast / Timestamp", "Overlapped / Timestamp",
                  "(Broadcast - Timestamp) / round trip", "Timestamp, ns"], rows) if rows else None


def t_memory(runs):
    rows = []
    for n in names(runs, r"(resident_per_core|flood_peak|fault_detection)/.*"):
        rows.append([f"`{n}`"] + [cell(runs, n, counter(k), f) or "-" for k, f in
                                  (("kib_per_core", ".1f"), ("ratio_to_thread", ".2f"), ("peak_mb", ".1f"),
                                   ("peak_queued", "int"), ("detection_ms", ".0f"), ("ratio_to_timeout", ".2f"))])
    return table(["benchmark", "KiB per core", "per core / bare thread", "peak, MB", "peak queued",
                  "detected after, ms", "/ timeout"], rows) if rows else None


TABLES = {
    "invocation": t_invocation,
    "channel_memory": t_channel_memory,
    "instructions": t_instructions,
    "task_instructions": t_task_instructions,
    "mpi": t_mpi,
    "memory": t_memory,
    "collective": t_collective,
    "reduce_model": t_reduce_model,
    "tasks": t_tasks,
    "mesh_reader": mesh_named(r"reader_acquire/.*", [("invalidations per op", "invalidations_per_op", ".2f")]),
    "mesh_writer": mesh_named(r"writer_release/.*", [("write-backs per op", "write_backs_per_op", ".2f"),
                                                    ("bytes copied per op", "written_back_bytes_per_op", "int"),
                                                    ("broadcasts per op", "broadcasts_per_op", ".2f")],
                              spread_if_copied),
    "mesh_broadcast": mesh_named(r"broadcast_release/.*", [("notifications per op", "notifications_per_op", ".2f")]),
    "mesh_one_change": mesh_named(r"one_change/.*", []),
    "mesh_map_ops": t_map_ops,
    "mesh_integrity": t_broadcast_overlap,
    "mesh_hash_map": mesh_named(r"hash_map/.*", []),
}

MARK = re.compile(r"(<!-- table:(\w+) -->\n)(.*?)(<!-- end -->)", re.S)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json-dir", required=True)
    ap.add_argument("--readme", default=str(pathlib.Path(__file__).with_name("README.md")))
    ap.add_argument("--check", action="store_true", help="print the tables, do not write the README")
    args = ap.parse_args()
    runs = load(args.json_dir)
    if not runs:
        sys.exit(f"report.py: no JSON files in {args.json_dir}")
    readme = pathlib.Path(args.readme)
    text = readme.read_text()
    unknown = [m.group(2) for m in MARK.finditer(text) if m.group(2) not in TABLES]
    if unknown:
        sys.exit(f"report.py: {readme} marks tables this script does not make: {', '.join(unknown)}")
    made = {}

    def replace(m):
        new = TABLES[m.group(2)](runs)
        if new is None:
            return m.group(0)
        made[m.group(2)] = new
        return m.group(1) + new + "\n" + m.group(4)

    text = MARK.sub(replace, text)
    if args.check:
        for name, t in made.items():
            print(f"<!-- table:{name} -->\n{t}\n")
    else:
        readme.write_text(text)
    kept = [m.group(2) for m in MARK.finditer(text) if m.group(2) not in made]
    print(f"report.py: {len(runs)} runs; tables made: {', '.join(made) or 'none'}; "
          f"left as they were (no data): {', '.join(kept) or 'none'}", file=sys.stderr)


if __name__ == "__main__":
    main()
