#!/usr/bin/env python3
"""Measure peer modularity-clustering tools on the app's shipped graphs.

For every graph in the data directory (METIS ``*.graph.gz`` files and the
world-trade edge list ``WorldImport1999.el``) this runs each available peer
tool ``--seeds`` times and records, per run:

  * the modularity Q of the clustering it returned, always computed by
    igraph's ``Graph.modularity`` on the returned membership (weighted where
    the graph is), so every tool is scored by the same formula;
  * the wall time of the clustering call alone (``time.perf_counter`` around
    just that call; building the tool's graph object is not timed).

Tools (names usable with ``--tools``):

  igraph-leiden     Graph.community_leiden(objective_function="modularity",
                    weights=..., n_iterations=2). 2 is python-igraph's default
                    (checked for 0.11.x and 1.0.0: the signature reads
                    ``n_iterations=2``); we pass it explicitly anyway.
  igraph-louvain    Graph.community_multilevel(weights=...)
  networkx-louvain  networkx.community.louvain_communities(G, weight="weight",
                    seed=s)
  networkit-plm     networkit.community.PLM(G, refine=True).run() with
                    networkit.setNumberOfThreads(2), if networkit imports.

Seeds are 1..k. python-igraph draws its random numbers from Python's
``random`` module (its default RNG), so ``random.seed(s)`` seeds both igraph
tools; networkx gets ``seed=s``; NetworKit gets ``networkit.setSeed(s, False)``
(with 2 threads PLM is still not deterministic).

Before the first graph each tool is called once, untimed, on a small graph so
that one-time costs (lazy imports, first-call set-up) do not land in the first
timed run.

Output: a table per graph (tool, median Q, median ms over the seeds) and, with
``--json OUT``, a list of records
``{"graph", "n", "m", "tool", "seed", "modularity", "seconds"}``.

Only the peers themselves are needed: igraph, networkx, networkit (optional).
"""

import argparse
import gzip
import json
import os
import random
import statistics
import sys
import time

import igraph

# ---------------------------------------------------------------------------
# Graph reading. A graph is returned as (n, edges, weights, weighted) with
# edges a list of 0-based (u, v) pairs, u <= v, each undirected edge once, and
# weights a list of floats parallel to edges (all 1.0 for unweighted graphs).
# ---------------------------------------------------------------------------


def read_metis(path):
    """Read a METIS graph file (plain or gzip).

    Header: ``n m [fmt [ncon]]``. fmt is up to three digits ``abc``: c == 1
    means each neighbour is followed by an edge weight, b == 1 means each line
    starts with ncon vertex weights, a == 1 means each line starts with a
    vertex size. Lines starting with ``%`` are comments. Line i (1-based)
    after the header lists vertex i's neighbours, 1-based; an empty line is an
    isolated vertex. Every undirected edge appears in both endpoints' lines;
    we keep it once, from the endpoint with the smaller number.
    """
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = [ln for ln in f.read().splitlines() if not ln.startswith("%")]
    header = lines[0].split()
    n, m = int(header[0]), int(header[1])
    fmt = header[2] if len(header) > 2 else "0"
    fmt = fmt.rjust(3, "0")
    has_size, has_vweight, has_eweight = fmt[-3] == "1", fmt[-2] == "1", fmt[-1] == "1"
    ncon = int(header[3]) if len(header) > 3 else 1
    skip = (1 if has_size else 0) + (ncon if has_vweight else 0)

    body = lines[1:]
    # Trailing empty lines past n vertices are not vertices.
    if len(body) < n:
        body += [""] * (n - len(body))  # missing trailing lines = isolated vertices
    edges, weights = [], []
    for u in range(n):
        tok = body[u].split()[skip:]
        step = 2 if has_eweight else 1
        for i in range(0, len(tok), step):
            v = int(tok[i]) - 1
            w = float(tok[i + 1]) if has_eweight else 1.0
            if u < v or u == v:  # take each undirected edge once (a loop is listed once)
                edges.append((u, v))
                weights.append(w)
    if len(edges) != m:
        sys.exit(f"{path}: header says {m} edges, read {len(edges)}")
    return n, edges, weights, has_eweight


def read_edge_list(path):
    """Read ``FROM<TAB>TO<TAB>weight`` lines (CRLF allowed) as an undirected graph.

    Vertices are numbered in order of first appearance. Both directions are
    summed: w(u, v) = a(u, v) + a(v, u). Pairs of total weight 0 are kept as
    edges (WorldImport1999 has 49 of them, giving 66 vertices, 2145 edges).
    """
    ids, acc = {}, {}
    with open(path, "r", newline="") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            a, b = parts[0], parts[1]
            w = float(parts[2]) if len(parts) > 2 else 1.0
            for name in (a, b):
                if name not in ids:
                    ids[name] = len(ids)
            u, v = ids[a], ids[b]
            key = (u, v) if u <= v else (v, u)
            acc[key] = acc.get(key, 0.0) + w
    edges = list(acc.keys())
    weights = [acc[e] for e in edges]
    return len(ids), edges, weights, True


def load_graphs(data_dir, wanted):
    """Return [(name, n, edges, weights, weighted)] for the graphs in data_dir."""
    found = []
    for fn in sorted(os.listdir(data_dir)):
        path = os.path.join(data_dir, fn)
        if fn.endswith(".graph.gz"):
            name, reader = fn[: -len(".graph.gz")], read_metis
        elif fn.endswith(".el"):
            name = "world-trade" if fn == "WorldImport1999.el" else fn[: -len(".el")]
            reader = read_edge_list
        else:
            continue
        if wanted and name not in wanted:
            continue
        n, edges, weights, weighted = reader(path)
        found.append((name, n, edges, weights, weighted))
    # Smallest first, so the table reads from karate up to cond-mat.
    found.sort(key=lambda g: (len(g[2]), g[1]))
    return found


# ---------------------------------------------------------------------------
# Tools. Each entry builds the tool's own graph object once per graph
# (untimed) and returns a function run(seed) -> (membership, seconds).
# ---------------------------------------------------------------------------


def make_igraph(n, edges, weights):
    g = igraph.Graph(n=n, edges=edges, directed=False)
    g.es["weight"] = weights
    return g


def prep_igraph_leiden(n, edges, weights, ig):
    w = list(weights)

    def run(seed):
        random.seed(seed)  # igraph's default RNG is Python's random module
        t0 = time.perf_counter()
        c = ig.community_leiden(objective_function="modularity", weights=w, n_iterations=2)
        t1 = time.perf_counter()
        return c.membership, t1 - t0

    return run


def prep_igraph_louvain(n, edges, weights, ig):
    w = list(weights)

    def run(seed):
        random.seed(seed)
        t0 = time.perf_counter()
        c = ig.community_multilevel(weights=w)
        t1 = time.perf_counter()
        return c.membership, t1 - t0

    return run


def prep_networkx_louvain(n, edges, weights, ig):
    import networkx as nx

    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from((u, v, w) for (u, v), w in zip(edges, weights))

    def run(seed):
        random.seed(seed)
        t0 = time.perf_counter()
        parts = nx.community.louvain_communities(G, weight="weight", seed=seed)
        t1 = time.perf_counter()
        membership = [0] * n
        for cid, part in enumerate(parts):
            for v in part:
                membership[v] = cid
        return membership, t1 - t0

    return run


def prep_networkit_plm(n, edges, weights, ig):
    import networkit as nk

    G = nk.Graph(n, weighted=True, directed=False)
    for (u, v), w in zip(edges, weights):
        G.addEdge(u, v, w)

    def run(seed):
        random.seed(seed)
        nk.setSeed(seed, False)
        t0 = time.perf_counter()
        plm = nk.community.PLM(G, refine=True)
        plm.run()
        t1 = time.perf_counter()
        return list(plm.getPartition().getVector()), t1 - t0

    return run


TOOLS = {
    "igraph-leiden": prep_igraph_leiden,
    "igraph-louvain": prep_igraph_louvain,
    "networkx-louvain": prep_networkx_louvain,
    "networkit-plm": prep_networkit_plm,
}


def available_tools(wanted):
    """The tools to run, in TOOLS order; networkit only if it imports."""
    names = [t for t in TOOLS if not wanted or t in wanted]
    for t in wanted or []:
        if t not in TOOLS:
            sys.exit(f"unknown tool {t}; known: {', '.join(TOOLS)}")
    if "networkit-plm" in names:
        try:
            import networkit as nk

            nk.setNumberOfThreads(2)
        except Exception as e:  # not installed / no wheel for this Python
            print(f"networkit unavailable ({e}); skipping networkit-plm", file=sys.stderr)
            names.remove("networkit-plm")
    if "networkx-louvain" in names:
        try:
            import networkx  # noqa: F401
        except Exception as e:
            print(f"networkx unavailable ({e}); skipping networkx-louvain", file=sys.stderr)
            names.remove("networkx-louvain")
    return names


def versions():
    """Versions of the peers actually loaded, for the log."""
    out = {"python": sys.version.split()[0], "igraph": igraph.__version__}
    for mod in ("networkx", "networkit"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:
            pass
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(here, "..", "data"), help="graph directory")
    ap.add_argument("--seeds", type=int, default=3, help="runs per tool per graph (seeds 1..k)")
    ap.add_argument("--json", metavar="OUT", help="write the run records here")
    ap.add_argument("--graphs", help="comma-separated subset of graph names")
    ap.add_argument("--tools", help="comma-separated subset of: " + ",".join(TOOLS))
    args = ap.parse_args()

    wanted_graphs = set(args.graphs.split(",")) if args.graphs else None
    tools = available_tools(args.tools.split(",") if args.tools else None)
    graphs = load_graphs(args.data, wanted_graphs)
    if not graphs:
        sys.exit(f"no graphs found in {args.data}")
    print("versions:", ", ".join(f"{k} {v}" for k, v in versions().items()))

    # Untimed warm-up of every tool on a small graph (Zachary's karate club,
    # shipped with igraph, so this does not depend on the data directory).
    warm = igraph.Graph.Famous("Zachary")
    warm_edges = [tuple(e) for e in warm.get_edgelist()]
    warm_w = [1.0] * len(warm_edges)
    for t in tools:
        TOOLS[t](warm.vcount(), warm_edges, warm_w, make_igraph(warm.vcount(), warm_edges, warm_w))(0)

    records = []
    for name, n, edges, weights, weighted in graphs:
        ig = make_igraph(n, edges, weights)
        qweights = weights if weighted else None  # unweighted graph: plain Q
        print(f"\n{name}  n={n} m={len(edges)}{'  weighted' if weighted else ''}")
        print(f"  {'tool':<18} {'median Q':>9} {'min Q':>8} {'max Q':>8} {'median ms':>10}")
        for t in tools:
            run = TOOLS[t](n, edges, weights, ig)
            qs, secs = [], []
            for seed in range(1, args.seeds + 1):
                membership, s = run(seed)
                q = ig.modularity(membership, weights=qweights)
                qs.append(q)
                secs.append(s)
                records.append(
                    {"graph": name, "n": n, "m": len(edges), "tool": t, "seed": seed,
                     "modularity": q, "seconds": s}
                )
            print(f"  {t:<18} {statistics.median(qs):9.5f} {min(qs):8.4f} {max(qs):8.4f}"
                  f" {statistics.median(secs) * 1e3:10.2f}")
            sys.stdout.flush()

    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
        print(f"\nwrote {len(records)} records to {args.json}")


if __name__ == "__main__":
    main()
