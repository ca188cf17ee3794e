#!/usr/bin/env python3
"""Check scc_figures --json: one JSON object with exactly the documented
keys, every figure a positive number, and the round trips at the paper's
figures they were calibrated to (2000 / 3000 cycles, within 2 %).

    scc_figures --quick --json | check_json.py
"""
import json
import sys

CORES = {
    "reduce_cycles_polling": ["2", "4", "8", "16", "32", "48"],
    "rdf_task_speedup": ["1", "2", "4", "8", "16", "32", "48"],
}
TRADE = ["1", "2", "4", "8", "12", "15", "16", "24", "32", "48"]


def fail(msg):
    sys.exit("scc_figures --json: " + msg)


def positive(where, x):
    if not isinstance(x, (int, float)) or x <= 0:
        fail(f"{where} is {x!r}, not a positive number")


def main():
    text = sys.stdin.read()
    try:
        f = json.loads(text)
    except json.JSONDecodeError as e:
        fail(f"not one JSON object ({e}): {text[:200]!r}")
    want = {"round_trip_cycles", "reduce48_cycles", "reduce_cycles_polling", "worldtrade_speedup",
            "rdf_task_speedup", "modelled_cycles_spread"}
    if set(f) != want:
        fail(f"keys {sorted(f)}, expected {sorted(want)}")
    for k in ("round_trip_cycles", "reduce48_cycles"):
        if set(f[k]) != {"polling", "halting"}:
            fail(f"{k} has {sorted(f[k])}")
        for m, x in f[k].items():
            positive(f"{k}.{m}", x)
    for k, cores in CORES.items():
        if sorted(f[k], key=int) != cores:
            fail(f"{k} has cores {sorted(f[k], key=int)}, expected {cores}")
        for n, x in f[k].items():
            positive(f"{k}.{n}", x)
    if set(f["worldtrade_speedup"]) != {"dcm", "ncm", "wt", "mix"}:
        fail(f"worldtrade_speedup has {sorted(f['worldtrade_speedup'])}")
    for v, row in f["worldtrade_speedup"].items():
        if sorted(row, key=int) != TRADE:
            fail(f"worldtrade_speedup.{v} has cores {sorted(row, key=int)}")
        for n, x in row.items():
            positive(f"worldtrade_speedup.{v}.{n}", x)
    if abs(f["worldtrade_speedup"]["dcm"]["1"] - 1) > 1e-9 or abs(f["rdf_task_speedup"]["1"] - 1) > 1e-9:
        fail("the baselines (1-core DCM, 1-core RDF) are not 1")
    spread = f["modelled_cycles_spread"]
    if not isinstance(spread, (int, float)) or not 0 <= spread < 1:
        fail(f"modelled_cycles_spread is {spread!r}")
    for m, paper in (("polling", 2000), ("halting", 3000)):
        x = f["round_trip_cycles"][m]
        if abs(x - paper) > 0.02 * paper:
            fail(f"round trip {m} {x} cycles: the calibration fits it to {paper}")
    print("scc_figures --json: well-formed; round trips", f["round_trip_cycles"])


if __name__ == "__main__":
    main()
