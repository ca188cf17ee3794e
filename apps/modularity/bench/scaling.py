#!/usr/bin/env python3
"""How tacomesh-cluster and two peers grow in time and memory with the graph.

For each size in ``--edges`` (default 10^4, 10^5, 10^6, 10^7 edges) this makes
or reuses one synthetic graph with make_graphs.py in ``--data``:

  lfr    (default) an LFR graph, mixing mu 0.4, average degree 20, so
         n = edges / 10 vertices (make_graphs.py's parameters otherwise:
         above 10^4 vertices its hubs and communities grow with n);
  rmat   an R-MAT graph of the scale whose 16 * 2^scale generated edges come
         nearest the size (on a log scale): 10^4 -> scale 9, 10^5 -> 13,
         10^6 -> 16, 10^7 -> 19; only the largest component is kept, which
         drops isolated vertices, so m is at most 16 * 2^scale.

A graph already in ``--data`` is reused if make_graphs.py's manifest.json
says it was made from the same seed; one made otherwise stops the script
(use another directory). Then, per seed, one run of each tool in turn, never
two at once, so that the host's slow and fast phases fall on all alike:

  tacomesh        tacomesh-cluster --json --quiet --seed S --cores C
                  --output FILE GRAPH (as compare.py runs it)
  igraph-leiden   peers.py's run: community_leiden(objective_function=
                  "modularity", n_iterations=2), one thread
  networkit-plm   peers.py's run: PLM(refine=True), networkit on 2 threads

Each peer run is a fresh Python process (``python -c``, this script's
peer_child) that runs the tool once, untimed, on Zachary's karate club (as
peers.py does), reads the graph with peers.py's reader, builds the tool's
graph object with peers.py's code, drops the reader's Python lists, resets
its peak-memory mark (``/proc/self/clear_refs``) and runs the tool, timed,
on the graph. Its memory is measured as tacomesh's is, from the process's
own VmHWM, so the two are comparable (see "peak MiB" for what each holds).

What each column and field means:

  Q               modularity of the returned clustering, computed by igraph
                  in this script for every tool (as peers.py and compare.py)
  time            the clustering alone: tacomesh's reported "seconds"
                  (reading and start-up excluded), the peers' clustering
                  call alone (building their graph objects excluded)
  load_seconds    tacomesh: reading the file; peers: peers.py's pure-Python
                  reader plus building the tool's graph object (of which
                  build_seconds), so much slower than a library's reader,
                  and not to be compared with tacomesh's
  peak MiB        tacomesh: peak_rss_bytes, its process's VmHWM over the
                  whole run, reading the file included. Peers: the VmHWM
                  from just before the clustering call to its end, that is
                  the Python interpreter, igraph (peers.py imports it), the
                  tool's library, the tool's graph object (igraph's with
                  its weight list; networkit's weighted graph) and the
                  clustering's own memory; not peers.py's reading, whose
                  Python lists (some 130 bytes per edge) say nothing about
                  the tool. The child's whole-life peak, reading included,
                  is in the JSON as process_peak_rss_bytes. (Not wait4's
                  ru_maxrss: Linux counts in it the parent's resident
                  memory, which a child holds until its exec.)
  B/edge          tacomesh's peak over the graph's undirected edges
  time ratios     tacomesh's median time over each peer's: below 1,
                  tacomesh is faster

Peers are skipped on graphs of more than ``--skip-peers-above`` edges. Q and
times are medians over the seeds, peaks the largest. Needs the peers'
Python (networkit, igraph); the plot (``--plot``) is drawn by
plot_scaling.py, with matplotlib, in a Python that has it.

  scaling.py --cluster build/apps/modularity/tacomesh-cluster --data DIR \\
      --json scaling.json --plot scaling.png
"""

import argparse
import gc
import hashlib
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import igraph

import compare
import peers

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = ("igraph-leiden", "networkit-plm")
LFR_MU = 0.4
LFR_AVG_DEGREE = 20
MIB = 2**20
# A peer run: a fresh interpreter that imports this module (and so peers.py
# and igraph, not networkit unless the tool is networkit's) and runs peer_child.
CHILD = "import sys; sys.path.insert(0, sys.argv[1]); import scaling; scaling.peer_child(*sys.argv[2:])"


def proc_status_bytes(field):
    """A memory field (VmRSS, VmHWM) of /proc/self/status, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def peer_child(tool, path, seed, membership_out):
    """One timed run of a peer, in its own process: prints a JSON object.

    The membership goes to membership_out, one cluster id per line.
    """
    peers.available_tools([tool])  # networkit: imports it, 2 threads
    # Untimed warm-up on karate, as peers.py does: lazy imports, first calls.
    warm = igraph.Graph.Famous("Zachary")
    warm_edges = [tuple(e) for e in warm.get_edgelist()]
    warm_w = [1.0] * len(warm_edges)
    peers.TOOLS[tool](warm.vcount(), warm_edges, warm_w, peers.make_igraph(warm.vcount(), warm_edges, warm_w))(0)

    t0 = time.perf_counter()
    n, edges, weights, _ = peers.read_metis(path)
    t1 = time.perf_counter()
    # networkit's run does not use igraph's graph: building it would put a
    # second copy of the graph into networkit's memory.
    ig = peers.make_igraph(n, edges, weights) if tool.startswith("igraph") else None
    run = peers.TOOLS[tool](n, edges, weights, ig)
    t2 = time.perf_counter()
    del edges, weights
    gc.collect()
    process_peak = proc_status_bytes("VmHWM")
    pre_run = proc_status_bytes("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := VmRSS (Linux 4.0+)
    membership, seconds = run(int(seed))
    peak = proc_status_bytes("VmHWM")
    with open(membership_out, "w") as f:
        f.write("\n".join(map(str, membership)))
    print(json.dumps({"seconds": seconds, "load_seconds": t2 - t0, "build_seconds": t2 - t1,
                      "peak_rss_bytes": peak, "pre_run_rss_bytes": pre_run,
                      "process_peak_rss_bytes": max(process_peak, peak)}))


def run_peer(tool, path, seed):
    """(membership, report) of one peer run in a fresh Python process."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as out:
        res = subprocess.run([sys.executable, "-c", CHILD, HERE, tool, path, str(seed), out.name],
                             capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(f"{tool} failed on {path}:\n{res.stderr}")
        return [int(x) for x in out.read().split()], json.loads(res.stdout)


def run_tacomesh(binary, path, seed, cores):
    """(membership, report) of one tacomesh-cluster run, as compare.py runs it; the fields this script keeps."""
    # No timeout: the 10^7-edge graph's run with its reading outlasts compare.py's 10 minutes on a slow host.
    membership, report = compare.run_tacomesh(binary, path, seed, cores, timeout=None)
    keys = ("seconds", "load_seconds", "peak_rss_bytes", "cores", "ensemble", "schedule", "iterations")
    return membership, {k: report[k] for k in keys}


def graph_spec(family, edges):
    """(name, make_graphs.py options) of the graph of about `edges` edges."""
    import make_graphs  # networkit and numpy: this process's only, not the peers'

    if family == "lfr":
        n = round(2 * edges / LFR_AVG_DEGREE)
        make_graphs.lfr_params(n, LFR_AVG_DEGREE, False)  # exits if n is too small for LFR
        return f"lfr_n{n}_mu{LFR_MU:g}", ["--families", "lfr", "--sizes", str(n), "--mus", str(LFR_MU),
                                          "--avg-degree", str(LFR_AVG_DEGREE)]
    scale = round(math.log2(edges / make_graphs.EDGE_FACTOR))
    if scale < 1:
        sys.exit(f"--edges {edges}: too few for R-MAT (edge factor {make_graphs.EDGE_FACTOR})")
    return f"rmat_s{scale}", ["--families", "rmat", "--rmat-scales", str(scale)]


def ensure_graph(data, name, options, base_seed):
    """The path of NAME.graph.gz in data, made by make_graphs.py unless it is there."""
    import make_graphs

    path = os.path.join(data, name + ".graph.gz")
    if not os.path.exists(path):
        print(f"making {name} in {data}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_graphs.py"), data, "--seed", str(base_seed)] + options,
                       check=True, stdout=sys.stderr)
    mpath = os.path.join(data, "manifest.json")
    entry = {}
    if os.path.exists(mpath):
        with open(mpath) as f:
            entry = {e["name"]: e for e in json.load(f)["graphs"]}.get(name, {})
    want = make_graphs.graph_seed(base_seed, name)
    if entry.get("seed") != want:
        sys.exit(f"{path}: {mpath} does not say it was made with seed {want} (--graph-seed {base_seed}); "
                 "move it away or use another --data")
    return path


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def median_of(rs, key):
    return statistics.median(r[key] for r in rs)


def print_table(records, tools, cores):
    """The markdown table: a row per graph, medians over the seeds."""
    by = {}
    for r in records:
        by.setdefault((r["m"], r["tool"]), []).append(r)
    sizes = sorted({(r["m"], r["n"]) for r in records})
    head = ["edges", "n"] + [f"{t} Q / s / MiB" for t in ["tacomesh"] + tools] + ["tacomesh B/edge"]
    head += [f"time tacomesh / {t}" for t in tools]
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    for m, n in sizes:
        cells = [str(m), str(n)]
        for t in ["tacomesh"] + tools:
            rs = by.get((m, t))
            cells.append(f"{median_of(rs, 'modularity'):.5f} / {median_of(rs, 'seconds'):.3g} / "
                         f"{max(r['peak_rss_bytes'] for r in rs) / MIB:.0f}" if rs else "skipped")
        mine = by[(m, "tacomesh")]
        cells.append(f"{max(r['peak_rss_bytes'] for r in mine) / m:.0f}")
        for t in tools:
            rs = by.get((m, t))
            cells.append(f"{median_of(mine, 'seconds') / median_of(rs, 'seconds'):.2f}" if rs else "-")
        print("| " + " | ".join(cells) + " |")
    threads = {"igraph-leiden": "1 thread", "networkit-plm": "2 threads"}
    print(f"\ntacomesh on {cores} cores" + "".join(f", {t} on {threads[t]}" for t in tools) +
          "; Q and s (clustering alone) medians over the seeds, MiB the largest peak (peers': interpreter, "
          "libraries and graph during the clustering call; tacomesh's: whole run)")


def edge_list(s):
    sizes = sorted({int(float(x)) for x in s.split(",") if x})
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError("give positive edge counts, e.g. 1e4,1e5")
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring for what is measured and how to read it.")
    ap.add_argument("--cluster", required=True, metavar="BIN", help="the tacomesh-cluster binary")
    ap.add_argument("--data", required=True, metavar="DIR",
                    help="directory of the generated graphs (created if missing; graphs already there are reused)")
    ap.add_argument("--edges", type=edge_list, metavar="LIST", default=[10**4, 10**5, 10**6, 10**7],
                    help="graph sizes in undirected edges, comma-separated (default 1e4,1e5,1e6,1e7)")
    ap.add_argument("--family", choices=("lfr", "rmat"), default="lfr",
                    help="lfr: mu 0.4, average degree 20, n = edges / 10 (default); rmat: the nearest scale")
    ap.add_argument("--graph-seed", type=int, metavar="S", default=1, help="make_graphs.py's base seed (default 1)")
    ap.add_argument("--seeds", type=int, metavar="N", default=3,
                    help="runs per tool, seeds 1..N, on every size but the largest (default 3)")
    ap.add_argument("--largest-seeds", type=int, metavar="N", default=1,
                    help="runs per tool on the largest size (default 1)")
    ap.add_argument("--tools", metavar="LIST", default=",".join(PEERS),
                    help=f"comma-separated peers to run, a subset of {','.join(PEERS)} (default both); "
                         "tacomesh always runs")
    ap.add_argument("--cores", type=int, metavar="C", default=2, help="tacomesh-cluster --cores (default 2)")
    ap.add_argument("--skip-peers-above", type=float, metavar="EDGES",
                    help="run no peer on graphs of more than EDGES edges (their m; e.g. 1e6)")
    ap.add_argument("--json", metavar="OUT", help="write the run records here (rewritten after each size)")
    ap.add_argument("--plot", metavar="OUT.png",
                    help="draw time and peak memory against edges (plot_scaling.py, from the --json file)")
    ap.add_argument("--plot-python", metavar="PY",
                    help="the Python with matplotlib that draws the plot (default: this one if it has "
                         "matplotlib, else /usr/bin/python3)")
    args = ap.parse_args()

    asked = [t for t in args.tools.split(",") if t]
    if not set(asked) <= set(PEERS):
        ap.error(f"--tools: unknown {sorted(set(asked) - set(PEERS))}; choose from {','.join(PEERS)}")
    if args.plot and not args.json:
        ap.error("--plot needs --json: the plot is drawn from that file")
    if not os.path.exists("/proc/self/clear_refs"):
        sys.exit("peer memory needs Linux's /proc/self/clear_refs")
    tools = peers.available_tools(asked)
    specs = [graph_spec(args.family, e) for e in args.edges]
    if len({name for name, _ in specs}) < len(specs):
        sys.exit(f"--edges {args.edges}: two sizes give the same graph {[name for name, _ in specs]}")
    os.makedirs(args.data, exist_ok=True)

    doc = {"family": args.family, "cores": args.cores, "cluster": os.path.abspath(args.cluster),
           "cluster_sha256": sha256(args.cluster), "versions": peers.versions(), "records": []}
    records = doc["records"]
    print("versions:", ", ".join(f"{k} {v}" for k, v in doc["versions"].items()), file=sys.stderr)
    for target, (name, options) in zip(args.edges, specs):
        path = ensure_graph(args.data, name, options, args.graph_seed)
        n, edges, weights, weighted = peers.read_metis(path)  # for Q, by igraph, of every tool's clustering
        m = len(edges)
        ig = peers.make_igraph(n, edges, weights)
        qweights = weights if weighted else None
        del edges
        size_tools = tools if args.skip_peers_above is None or m <= args.skip_peers_above else []
        seeds = args.largest_seeds if target == args.edges[-1] else args.seeds
        for seed in range(1, seeds + 1):
            for tool in ["tacomesh"] + size_tools:
                if tool == "tacomesh":
                    membership, report = run_tacomesh(args.cluster, path, seed, args.cores)
                else:
                    membership, report = run_peer(tool, path, seed)
                r = {"family": args.family, "graph": name, "target_edges": target, "n": n, "m": m, "tool": tool,
                     "seed": seed, "modularity": ig.modularity(membership, weights=qweights), **report,
                     "bytes_per_edge": report["peak_rss_bytes"] / m}
                records.append(r)
                print(f"{name} seed {seed} {tool:<14} Q {r['modularity']:.5f}  {r['seconds']:8.3f} s"
                      f"  load {r['load_seconds']:7.2f} s  peak {r['peak_rss_bytes'] / MIB:7.1f} MiB",
                      file=sys.stderr, flush=True)
        del ig, qweights, weights
        if args.json:
            with open(args.json, "w") as f:
                json.dump(doc, f, indent=1)
                f.write("\n")

    print_table(records, tools, args.cores)
    if args.plot:
        py = args.plot_python or (sys.executable if importlib.util.find_spec("matplotlib") else "/usr/bin/python3")
        subprocess.run([py, os.path.join(HERE, "plot_scaling.py"), args.json, "--out", args.plot], check=True)


if __name__ == "__main__":
    main()
