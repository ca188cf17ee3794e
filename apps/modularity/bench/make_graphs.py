#!/usr/bin/env python3
"""Generate a held-out graph set for the modularity benchmarks, deterministically.

Why: every graph in ``apps/modularity/data`` has been looked at while the
multilevel search was tuned (effort, rounds, refinement), so beating the peers
there says little about graphs nobody tuned on. This script makes synthetic
graphs of two very different kinds, at sizes the shipped set does not reach,
from fixed seeds, so a run of ``peers.py`` / ``compare.py`` on them
(``--data OUT_DIR``) is a held-out measurement that anyone can reproduce:

  LFR benchmark graphs (Lancichinetti, Fortunato, Radicchi 2008), networkit's
  ``LFRGenerator``: planted communities, mixing parameter mu (the fraction of
  each vertex's edges that leave its community) in {0.2, 0.4, 0.6} by
  default; power-law degrees (exponent 2) with average degree 20, power-law
  community sizes (exponent 1). Up to 10k vertices the classic parameters:
  maximum degree 50, community sizes 20..100. Above that (unless
  ``--lfr-fixed``) the maximum degree grows as 50 * sqrt(n / 10^4) and the
  largest community as max(100, 2 * maximum degree) (10^5: 158 and 316;
  10^6: 500 and 1000), so the graphs get hubs and big communities as real
  large graphs do. The planted communities are written next to each graph,
  for NMI later. Note: at 10^5 vertices and above, communities of 20..100
  vertices are far below modularity's resolution limit (about sqrt(2m)
  internal edges), so a good modularity optimiser is expected to merge them:
  compare Q first, and read NMI against the planted partition with that in
  mind.

  R-MAT graphs (Chakrabarti, Zhan, Faloutsos 2004), networkit's
  ``RmatGenerator`` with the Graph500 parameters a, b, c, d = 0.57, 0.19,
  0.19, 0.05 and edge factor 16 (2^scale vertices, 16 * 2^scale edges):
  skewed degrees and weak community structure. Made simple (self-loops and
  multi-edges removed; networkit's generator already draws distinct edges,
  so none were in our runs), cut to the largest connected component (R-MAT
  leaves many vertices isolated: about 7% at scale 10, 17% at 13, 27% at 16;
  the METIS reader would take isolated vertices, as empty lines, but they
  only add singleton clusters) and its vertex ids randomly permuted, as
  Graph500 does (R-MAT's vertex 0 is its largest hub, and the ids' order
  would otherwise carry the structure).

Output, per graph NAME (e.g. ``lfr_n10000_mu0.4``, ``rmat_s16``), in OUT_DIR:

  NAME.graph.gz      METIS (header ``n m 0``, one line per vertex with its
                     1-based neighbours), gzip; tacomesh-cluster reads it
                     (graph_reader.hpp), and so do peers.py and compare.py,
                     which take every ``*.graph.gz`` in ``--data``. METIS
                     rather than an edge list: the edge-list reader numbers
                     vertices in order of first appearance, METIS keeps the
                     generator's ids, so the communities file lines up.
  NAME.communities   LFR only: the planted community of each vertex, one id
                     (0..k-1) per line, line i for the graph's vertex i.
  manifest.json      every graph made into OUT_DIR (entries merged by name
                     across runs): parameters, seed, n, m, seconds, the
                     graph file's sha256, and the networkit version.

Determinism: each graph's seed comes from ``--seed`` and the graph's name
alone (so ``--sizes 10000`` makes the same file as part of a bigger run),
networkit runs on one thread (``--threads``, default 1; more threads are
faster but the LFR edge switching is then not reproducible), and the gzip
header carries no name or time. The same networkit version on the same seed
gives byte-identical files; a different version may not (the manifest
records it).

  make_graphs.py --quick /tmp/heldout_quick          # small set, for tests
  make_graphs.py --sizes 10000,100000 --rmat-scales 16,18 OUT_DIR
  peers.py --data OUT_DIR ...     compare.py --data OUT_DIR ...

Speed on this 2-vCPU VM, one thread, the machine busy with other jobs: LFR
about 20-30 microseconds per vertex (10^4 vertices: 0.2 s, 10^5: 3 s, so a
10^6-vertex graph some 30-60 s) plus about 1 s per million edges to write;
R-MAT about 0.6 s per million edges to generate and 1 s to write (scale 20:
some 30-40 s in all). Needs networkit (and numpy, which it brings).
"""

import argparse
import gzip
import hashlib
import json
import math
import os
import shutil
import sys
import time
import zlib

import networkit as nk
import numpy as np

GRAPH500 = (0.57, 0.19, 0.19, 0.05)
EDGE_FACTOR = 16
QUICK_SIZES = [1000, 10000]  # LFR: about 10 * n edges (avg degree 20)
QUICK_SCALES = [10, 13]  # R-MAT: 16k and 131k edges before the LCC cut
DEFAULT_SIZES = [10000, 100000, 1000000]
DEFAULT_SCALES = [16, 18, 20]
DEFAULT_MUS = [0.2, 0.4, 0.6]


def graph_seed(base, name):
    """The seed of one graph: from the base seed and the graph's name only."""
    return (base * 1_000_003 + zlib.crc32(name.encode())) % (1 << 31)


def lfr_params(n, avg_degree, fixed):
    """(max degree, min community size, max community size) for n vertices."""
    if fixed or n <= 10000:
        kmax, cmin, cmax = 50, 20, 100
    else:
        kmax = int(round(50 * math.sqrt(n / 10000)))
        cmin, cmax = 20, max(100, 2 * kmax)
    if n < 2 * cmax:
        sys.exit(f"LFR: n = {n} is too small for communities up to {cmax} vertices (need n >= {2 * cmax})")
    if avg_degree >= kmax:
        sys.exit(f"LFR: average degree {avg_degree} must be below the maximum degree {kmax}")
    return kmax, cmin, cmax


def write_metis_gz(G, path):
    """G (ids 0..n-1, no gaps) as gzip METIS at path, byte-for-byte reproducible.

    networkit's METISGraphWriter (C++) writes the text; we gzip it with no
    file name and mtime 0 in the header, so equal graphs give equal files.
    """
    if G.upperNodeIdBound() != G.numberOfNodes():
        raise ValueError("graph has gaps in its vertex ids; compact it first")
    tmp = path + ".plain.tmp"
    part = path + ".part"
    nk.graphio.METISGraphWriter().write(G, tmp)
    try:
        with open(tmp, "rb") as src, open(part, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz:
                shutil.copyfileobj(src, gz, 1 << 20)
        os.replace(part, path)
    finally:
        for p in (tmp, part):
            if os.path.exists(p):
                os.remove(p)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def simplify(G):
    """Remove self-loops and multi-edges in place; the number of edges removed."""
    before = G.numberOfEdges()
    G.removeSelfLoops()
    G.removeMultiEdges()
    return before - G.numberOfEdges()


def components(G):
    cc = nk.components.ConnectedComponents(G)
    cc.run()
    return cc.numberOfComponents()


def make_lfr(n, mu, avg_degree, fixed, seed):
    """An LFR graph and its planted partition (a list, vertex -> community)."""
    kmax, cmin, cmax = lfr_params(n, avg_degree, fixed)
    nk.setSeed(seed, False)
    gen = nk.generators.LFRGenerator(n)
    # networkit takes the exponents negated: degree ~ k^-2, community size ~ s^-1.
    gen.generatePowerlawDegreeSequence(avg_degree, kmax, -2.0)
    gen.generatePowerlawCommunitySizeSequence(cmin, cmax, -1.0)
    gen.setMu(mu)
    gen.run()
    G = gen.getGraph()
    P = gen.getPartition()
    P.compact()
    params = {"mu": mu, "avg_degree": avg_degree, "max_degree": kmax, "degree_exponent": 2,
              "min_community": cmin, "max_community": cmax, "community_exponent": 1}
    return G, list(P.getVector()), params


def make_rmat(scale, seed):
    """An R-MAT graph: simple, its largest connected component, ids permuted."""
    a, b, c, d = GRAPH500
    nk.setSeed(seed, False)
    G = nk.generators.RmatGenerator(scale, EDGE_FACTOR, a, b, c, d).generate()
    raw_n, raw_m = G.numberOfNodes(), G.numberOfEdges()
    removed = simplify(G)
    G = nk.components.ConnectedComponents.extractLargestConnectedComponent(G, True)
    n = G.numberOfNodes()
    perm = np.random.default_rng(seed).permutation(n)
    G = nk.graphtools.getCompactedGraph(G, {u: int(perm[u]) for u in range(n)})
    params = {"scale": scale, "edge_factor": EDGE_FACTOR, "abcd": list(GRAPH500),
              "generated_n": raw_n, "generated_m": raw_m, "removed_loops_multi": removed,
              "lcc": True, "permuted": True}
    return G, params


def emit(out_dir, name, family, seed, G, communities, params, gen_s, manifest, threads):
    t0 = time.perf_counter()
    gpath = os.path.join(out_dir, name + ".graph.gz")
    write_metis_gz(G, gpath)
    files = [os.path.basename(gpath)]
    if communities is not None:
        cpath = os.path.join(out_dir, name + ".communities")
        with open(cpath, "w") as f:
            f.write("\n".join(map(str, communities)))
            f.write("\n")
        files.append(os.path.basename(cpath))
    write_s = time.perf_counter() - t0
    n, m = G.numberOfNodes(), G.numberOfEdges()
    isolated = sum(1 for u in G.iterNodes() if G.degree(u) == 0)
    entry = {"name": name, "family": family, "seed": seed, "threads": threads, "n": n, "m": m,
             "isolated": isolated, "components": components(G), "params": params,
             "generate_seconds": round(gen_s, 3), "write_seconds": round(write_s, 3),
             "files": files, "graph_sha256": sha256(gpath)}
    if communities is not None:
        entry["communities"] = max(communities) + 1
    manifest[name] = entry
    extra = f" communities={entry['communities']}" if communities is not None else ""
    print(f"{name:<22} n={n:<9} m={m:<10} generate {gen_s:7.2f} s  write {write_s:6.2f} s"
          f"  components={entry['components']}{extra}", flush=True)


def int_list(s):
    return [int(x) for x in s.split(",") if x]


def float_list(s):
    return [float(x) for x in s.split(",") if x]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring for the parameters and why.")
    ap.add_argument("out_dir", help="directory to write the graphs into (created if missing)")
    ap.add_argument("--quick", action="store_true",
                    help=f"small graphs only, for tests: LFR n in {QUICK_SIZES}, R-MAT scales "
                         f"{QUICK_SCALES} (each at most ~130k edges); overrides --sizes/--rmat-scales")
    ap.add_argument("--sizes", type=int_list, default=DEFAULT_SIZES,
                    help="LFR vertex counts, comma-separated (default 10000,100000,1000000)")
    ap.add_argument("--mus", type=float_list, default=DEFAULT_MUS,
                    help="LFR mixing parameters (default 0.2,0.4,0.6)")
    ap.add_argument("--avg-degree", type=int, default=20, help="LFR average degree (default 20)")
    ap.add_argument("--lfr-fixed", action="store_true",
                    help="keep max degree 50 and communities 20..100 at every size (default: scale "
                         "them above 10k vertices)")
    ap.add_argument("--rmat-scales", type=int_list, default=DEFAULT_SCALES,
                    help="R-MAT scales, 2^scale vertices before the LCC cut (default 16,18,20)")
    ap.add_argument("--families", default="lfr,rmat", help="which to make: lfr, rmat or both (default)")
    ap.add_argument("--seed", type=int, default=1, help="base seed (default 1)")
    ap.add_argument("--threads", type=int, default=1,
                    help="networkit threads (default 1; more is not reproducible)")
    args = ap.parse_args()

    families = set(args.families.split(","))
    if not families <= {"lfr", "rmat"}:
        sys.exit(f"--families: unknown {sorted(families - {'lfr', 'rmat'})}; use lfr, rmat")
    sizes, scales = (QUICK_SIZES, QUICK_SCALES) if args.quick else (args.sizes, args.rmat_scales)
    if any(not 0 < mu < 1 for mu in args.mus):
        sys.exit("--mus: each mu must be in (0, 1)")
    if any(not 1 <= s <= 31 for s in scales):
        sys.exit("--rmat-scales: each scale must be in 1..31")
    if "lfr" in families:
        for n in sizes:
            lfr_params(n, args.avg_degree, args.lfr_fixed)  # exits on an impossible size, before any output

    os.makedirs(args.out_dir, exist_ok=True)
    nk.setNumberOfThreads(args.threads)
    mpath = os.path.join(args.out_dir, "manifest.json")
    manifest = {}
    if os.path.exists(mpath):
        with open(mpath) as f:
            manifest = {e["name"]: e for e in json.load(f)["graphs"]}

    print(f"networkit {nk.__version__}, threads {args.threads}, seed {args.seed}, out {args.out_dir}")
    try:
        if "lfr" in families:
            for n in sizes:
                for mu in args.mus:
                    name = f"lfr_n{n}_mu{mu:g}" + ("_fixed" if args.lfr_fixed and n > 10000 else "")
                    seed = graph_seed(args.seed, name)
                    t0 = time.perf_counter()
                    G, comm, params = make_lfr(n, mu, args.avg_degree, args.lfr_fixed, seed)
                    emit(args.out_dir, name, "lfr", seed, G, comm, params, time.perf_counter() - t0, manifest,
                         args.threads)
        if "rmat" in families:
            for s in scales:
                name = f"rmat_s{s}"
                seed = graph_seed(args.seed, name)
                t0 = time.perf_counter()
                G, params = make_rmat(s, seed)
                emit(args.out_dir, name, "rmat", seed, G, None, params, time.perf_counter() - t0, manifest,
                 args.threads)
    finally:
        with open(mpath, "w") as f:
            json.dump({"generator": "apps/modularity/bench/make_graphs.py", "networkit": nk.__version__,
                       "numpy": np.__version__, "graphs": sorted(manifest.values(), key=lambda e: e["name"])},
                      f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
