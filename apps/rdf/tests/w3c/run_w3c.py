#!/usr/bin/env python3
"""Run the W3C SPARQL 1.0 and 1.1 query test suites against tacomesh-rdf.

Why a script of its own: the suites are data (manifests in Turtle naming
queries, data and expected results in five formats), and the verdict on a
test needs RDF-aware comparison (blank nodes, literal forms, ORDER BY ties),
which rdflib gives without writing another RDF parser. The engine itself
reads no manifest: it is run as a user runs it, through the CLI.

    run_w3c.py --cli build/apps/rdf/tacomesh-rdf [SUITE_DIR...]
    run_w3c.py --self-test

SUITE_DIR defaults to sparql10 and sparql11 beside this script. In each, the
top-level manifest*.ttl files are read and mf:include followed; a directory
manifest.ttl that no include reaches (json-res and csv-tsv-res in the 1.1
copy) is run too, and said so in the notes. An include naming a manifest
left out of the copy (the 1.0 graph and dataset directories) is a note, not
a failure.

How a test is run (the CLI contract):
  syntax tests      tacomesh-rdf parse --base QUERY_URL QUERY.rq
                    positive: exit 0; negative: a non-zero exit whose message
                    says "line L, column C" (a usage error or a crash is not
                    a refusal, and a refusal that does not say where is not
                    what the contract promises).
  evaluation tests  tacomesh-rdf query --base QUERY_URL --data F... --format
                    json|nt|csv|tsv QUERY.rq. nt when the expected result is a
                    graph (CONSTRUCT, DESCRIBE), csv / tsv when it is a .csv /
                    .tsv file, json otherwise. No qt:data: an empty .nt file.
  not run           qt:graphData (named graphs), SPARQL Update tests, withdrawn
                    tests and unknown types: reported with the reason, never
                    counted as passed or failed.
mf:requires and dawgt:approval (Proposed, NotApproved) do not stop a test:
they are shown with it when it fails, and counted in the summary, so a
failure that the working group did not settle is visible as such.

How answers are compared:
  Terms: RDF-term equality: IRIs by string, literals by lexical form,
    datatype and language tag, the tag case-insensitively (BCP 47 tags are).
    "abc"^^xsd:string is "abc" (RDF 1.1 made them one term; the 1.0 answers
    sometimes write one, the engine the other). Numeric literals in SELECT
    results are compared by datatype and value: "6"^^xsd:decimal is
    "6.0"^^xsd:decimal, but not "6"^^xsd:integer. The suites' expected
    answers leave no other choice: they write computed numbers in forms that
    contradict each other (CEIL(2.5) as "3"^^xsd:decimal, 4/2 as
    "2.0"^^xsd:decimal; a cast to xsd:double as "0E0", "0" and "1.0"), so
    no one canonical form passes them all, and the datatype, which a
    promotion or cast decides, still has to be right. TSV answers abbreviate
    numbers in Turtle form as well (1.0E6 written 1.0e6).
  IRIs of the test files: the engine resolves relative IRIs in queries and
    data against file:// URLs of this copy, the expected results name the
    files' official W3C addresses. Both sides are rewritten the same way,
    file://<the manifest's directory>/ to the directory the test's IRI is
    published under (http://www.w3.org/.../data-r2/basic/), before comparing.
  SELECT: the head's variables as a set; the solutions as multisets, blank
    nodes matched by one bijection over the whole result (backtracking).
  ORDER BY: when the outermost query has an ORDER BY (one in a subquery
    orders nothing the result shows) and the expected result has an order
    (.srx, .srj, .csv, .tsv, or rs:index in a Turtle result set), the order is
    checked too. The expected sequence is cut into runs of consecutive rows
    that agree on every variable the ORDER BY names; our rows must fall in
    the same runs, in any order within a run. Rows equal on the ORDER BY's
    variables cannot be told apart by it, so any order of them is right;
    rows that differ there are ordered by the expected result. When the ORDER
    BY names a variable the result does not project (or none at all), ties
    cannot be seen, so the order must match exactly (rows equal in every
    column aside). This errs on the strict side for expression keys such as
    str(?o): two different ?o with the same str() must come in the expected
    order. (An ORDER BY with a LIMIT that cuts a run of ties could allow other
    rows altogether; the suite has no such test.)
  ASK: the boolean. CONSTRUCT/DESCRIBE: graph isomorphism (rdflib.compare),
    literals normalised as above.
  mf:LaxCardinality (the REDUCED tests): the same distinct solutions, each
    at least once and at most as often as expected.
  CSV: parsed as CSV; cells compared as text (CSV has no types), a cell
    _:label is a blank node, matched like any other. Unbound and "" are the
    same cell in CSV, on both sides.

Known failures: known_failures.tsv beside this script (test IRI or mf:name,
TAB, reason). The run exits 1 if a test fails that is not listed (a
regression), if a listed test passes (remove it), or if a listed test is not
run or does not exist, so the list stays honest. --write-known rewrites the
file from this run, keeping the reason of every test still failing and the
observed reason for new ones. A reason the runner wrote itself (it starts
with a failure kind: "wrong answer: ...") is replaced by today's, so that it
does not go stale; one written by hand is kept.

--budget bounds the whole run: tests not started when it is spent are
reported as not run, and the run is then not as expected. (CTest's TIMEOUT
would end a run of hanging tests with no report at all.)

Exit status: 0 as expected, 1 not as expected, 2 usage or setup error,
77 rdflib missing (CTest's skip code).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import csv
import io
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import warnings
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Callable, Iterable, Optional

SKIP = 77
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]

try:
    import rdflib
    import rdflib.compare
    from rdflib import BNode, Literal, URIRef, Namespace, RDF
    from rdflib.collection import Collection
    from rdflib.query import Result
    RDFLIB_MISSING = None
except ImportError as e:
    # main() exits with SKIP after reading the arguments (--help works
    # without rdflib); until then, names enough for the module to load.
    RDFLIB_MISSING = e
    URIRef = str

    class Namespace(str):
        def __getattr__(self, name):
            return self + name

        def __getitem__(self, name):
            return self + name
    RDF = Namespace("http://www.w3.org/1999/02/22-rdf-syntax-ns#")

if RDFLIB_MISSING is None:
    # Lexical forms as written: with normalisation on, rdflib would read
    # "01"^^xsd:integer as "1", and term equality could not be checked.
    rdflib.NORMALIZE_LITERALS = False
# rdflib warns about every ill-typed literal it cannot convert to a Python
# value ("yes"^^xsd:boolean): the suites have them on purpose.
warnings.filterwarnings("ignore", module=r"rdflib(\..*)?")
logging.getLogger("rdflib").setLevel(logging.ERROR)

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
QT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-query#")
UT = Namespace("http://www.w3.org/2009/sparql/tests/test-update#")
DAWGT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#")
RS = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/result-set#")
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
SD_ENTAILMENT = URIRef("http://www.w3.org/ns/sparql-service-description#entailmentRegime")

POSITIVE_SYNTAX = {MF.PositiveSyntaxTest, MF.PositiveSyntaxTest11}
NEGATIVE_SYNTAX = {MF.NegativeSyntaxTest, MF.NegativeSyntaxTest11}
EVALUATION = {MF.QueryEvaluationTest, MF.CSVResultFormatTest}
UPDATE = {MF.PositiveUpdateSyntaxTest11, MF.NegativeUpdateSyntaxTest11, MF.UpdateEvaluationTest,
          UT.UpdateEvaluationTest}

NOT_RUN_GRAPHS = "named graphs (qt:graphData) are not supported"
NOT_RUN_UPDATE = "SPARQL Update is out of scope"

# Failure categories, as the summary counts them.
WRONG = "wrong answer"
REFUSED = "refused by the parser"
ACCEPTED = "accepted a bad query"
USAGE = "CLI usage error"
TIMEOUT = "timeout"
CRASH = "crash"
ERROR = "error exit"
LOADER = "data refused by the loader"
BAD_OUTPUT = "unreadable output"
SETUP = "test setup"
CATEGORIES = (WRONG, REFUSED, ACCEPTED, USAGE, TIMEOUT, CRASH, ERROR, LOADER, BAD_OUTPUT, SETUP)


def local_name(iri) -> str:
    s = str(iri)
    return re.split(r"[#/]", s)[-1] or s


def file_url(path: Path) -> str:
    return path.absolute().as_uri()


def url_to_path(url: str) -> Path:
    return Path(urllib.parse.unquote(urllib.parse.urlparse(url).path))


# ----------------------------------------------------------------------------
# The tests, from the manifests

@dataclass
class Test:
    id: str                 # known_failures.tsv's key: the test's IRI (or manifest path#name)
    name: str
    directory: str          # "sparql10/basic": the table's row
    type: str               # "mf:QueryEvaluationTest"
    kind: str               # positive-syntax, negative-syntax, evaluation, not-run
    query: Optional[Path] = None
    data: list = field(default_factory=list)
    result: Optional[Path] = None
    approval: Optional[str] = None
    requires: list = field(default_factory=list)
    lax: bool = False       # mf:LaxCardinality: duplicates may be dropped (REDUCED)
    not_run: Optional[str] = None
    # (file:// prefix, official prefix) pairs, longest first: IRIs of this
    # copy's files rewritten to the addresses the expected results use.
    iri_map: list = field(default_factory=list)


@dataclass
class Suite:
    tests: list
    notes: list


def read_manifest(path: Path) -> rdflib.Graph:
    g = rdflib.Graph()
    g.parse(str(path), format="turtle", publicID=file_url(path))
    return g


def official_directory(g: rdflib.Graph, test_node, manifest: Path) -> Optional[str]:
    """The directory IRI the W3C publishes this test under, from the test's
    own IRI (…/data-r2/basic/manifest#x) or the manifest's empty prefix."""
    candidates = []
    if isinstance(test_node, URIRef) and not str(test_node).startswith("file:"):
        candidates.append(str(test_node))
    for prefix, ns in g.namespaces():
        if prefix == "" and not str(ns).startswith("file:"):
            candidates.append(str(ns))
    for c in candidates:
        base = c.split("#", 1)[0]
        if "/" in base and re.match(r"^[a-z][a-z0-9+.-]*://", base):
            return base[: base.rfind("/") + 1]
    return None


def iri_map_for(manifest: Path, suite_dir: Path, official: Optional[str]) -> list:
    """Prefix pairs for the manifest's directory and, when the official
    address ends with the same subdirectories, for the suite's root."""
    if not official:
        return []
    here = file_url(manifest.parent) + "/"
    pairs = [(here, official)]
    rel = manifest.parent.relative_to(suite_dir).as_posix()
    if rel != "." and official.endswith(rel + "/"):
        pairs.append((file_url(suite_dir) + "/", official[: -len(rel) - 1]))
    return sorted(pairs, key=lambda p: -len(p[0]))


def discover(suite_dirs: list) -> Suite:
    tests, notes, seen_ids = [], [], {}
    for suite_dir in suite_dirs:
        suite_dir = Path(suite_dir).absolute()
        label = suite_dir.name
        visited = set()

        def visit(manifest: Path, via: Optional[Path]):
            manifest = Path(os.path.normpath(manifest))
            if manifest in visited:
                return
            visited.add(manifest)
            if not manifest.exists():
                shown = manifest.relative_to(suite_dir) if manifest.is_relative_to(suite_dir) else manifest
                by = via.relative_to(suite_dir) if via is not None else "the command line"
                notes.append(f"{label}: {shown} (included by {by}) is not in this copy: left out (see the suite's README)")
                return
            g = read_manifest(manifest)
            for m in g.subjects(RDF.type, MF.Manifest):
                for lst in g.objects(m, MF.include):
                    for inc in Collection(g, lst):
                        visit(url_to_path(str(inc)), manifest)
                for lst in g.objects(m, MF.entries):
                    for node in Collection(g, lst):
                        t = read_test(g, node, manifest, suite_dir, label)
                        if t.id in seen_ids:
                            notes.append(f"{t.id}: listed twice ({seen_ids[t.id]} and {t.directory}); run once")
                            continue
                        seen_ids[t.id] = t.directory
                        tests.append(t)

        for top in sorted(suite_dir.glob("manifest*.ttl")):
            visit(top, None)
        for m in sorted(suite_dir.glob("*/manifest.ttl")):
            if m not in visited:
                notes.append(f"{label}: {m.relative_to(suite_dir)} is included by no top-level manifest; run anyway")
                visit(m, None)
        for m in sorted(suite_dir.glob("**/*manifest*.ttl")):
            if Path(os.path.normpath(m)) not in visited:
                notes.append(f"{label}: {m.relative_to(suite_dir)} is reached from no manifest; not run")
    return Suite(tests, notes)


def read_test(g: rdflib.Graph, node, manifest: Path, suite_dir: Path, label: str) -> Test:
    directory = f"{label}/{manifest.parent.relative_to(suite_dir).as_posix()}".rstrip("/.")
    name = str(g.value(node, MF.name) or local_name(node))
    if isinstance(node, URIRef) and not str(node).startswith("file:"):
        tid = str(node)
    else:  # a blank node, or an IRI of this copy: make a key that is the same on every machine
        rel = manifest.relative_to(suite_dir.parent).as_posix()
        tid = f"{rel}#{local_name(node) if isinstance(node, URIRef) else name}"
    types = set(g.objects(node, RDF.type))
    ours = [t for t in types if t in POSITIVE_SYNTAX | NEGATIVE_SYNTAX | EVALUATION | UPDATE]
    rdf_type = ours[0] if ours else (sorted(types)[0] if types else None)
    type_name = ("mf:" if rdf_type and str(rdf_type).startswith(str(MF)) else "") + local_name(rdf_type or "untyped")
    approval = g.value(node, DAWGT.approval)
    t = Test(id=tid, name=name, directory=directory, type=type_name, kind="not-run",
             approval=local_name(approval) if approval is not None else None,
             requires=sorted(local_name(r) for r in g.objects(node, MF.requires)),
             lax=g.value(node, MF.resultCardinality) == MF.LaxCardinality,
             iri_map=iri_map_for(manifest, suite_dir, official_directory(g, node, manifest)))
    action = g.value(node, MF.action)
    result = g.value(node, MF.result)
    if result is not None:
        t.result = url_to_path(str(result))
    if isinstance(action, URIRef):
        t.query = url_to_path(str(action))
    elif action is not None:
        q = g.value(action, QT.query)
        t.query = url_to_path(str(q)) if q is not None else None
        t.data = sorted(url_to_path(str(d)) for d in g.objects(action, QT.data))
        if any(True for _ in g.objects(action, QT.graphData)):
            t.not_run = NOT_RUN_GRAPHS
        elif any(True for _ in g.objects(action, QT.serviceData)):
            t.not_run = "federated query (qt:serviceData) is out of scope"
        elif g.value(action, SD_ENTAILMENT) is not None:
            t.not_run = "entailment regimes are out of scope"
    if t.approval == "Withdrawn":
        t.not_run = "withdrawn by the working group (dawgt:Withdrawn)"
    if rdf_type in UPDATE:
        t.not_run = NOT_RUN_UPDATE
    elif rdf_type in POSITIVE_SYNTAX:
        t.kind = "positive-syntax"
    elif rdf_type in NEGATIVE_SYNTAX:
        t.kind = "negative-syntax"
    elif rdf_type in EVALUATION:
        t.kind = "evaluation"
        if t.result is None and not t.not_run:
            t.not_run = "no mf:result"
    elif not t.not_run:
        t.not_run = f"not a query test (type {type_name})"
    if t.kind != "not-run" and t.query is None and not t.not_run:
        t.not_run = "no query in mf:action"
    if t.not_run:
        t.kind = "not-run"
    return t


# ----------------------------------------------------------------------------
# Terms and results, in one canonical form whatever they were read from
#
# A term is a tuple: ("iri", s), ("bnode", label), ("lit", lexical, datatype,
# lang) with datatype "" for a simple or language-tagged literal and lang in
# lower case, ("num", datatype, value) for numbers compared by value (TSV),
# ("csv", text) for a CSV cell. A row is a dict variable -> term.

class BadOutput(Exception):
    """The CLI's output (or an expected result) is not what its format says."""


@dataclass
class Answer:
    kind: str                    # "select", "ask", "graph"
    vars: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    ordered: bool = True         # whether the row order means anything
    boolean: Optional[bool] = None
    graph: Optional[rdflib.Graph] = None


def map_iri(s: str, iri_map: list) -> str:
    for here, official in iri_map:
        if s.startswith(here):
            return official + s[len(here):]
    return s


def lit(lexical: str, datatype: Optional[str], lang: Optional[str], iri_map: list) -> tuple:
    dt = map_iri(str(datatype), iri_map) if datatype else ""
    if dt in (XSD + "string", RDF_LANGSTRING):
        dt = ""
    return ("lit", str(lexical), dt, (lang or "").lower())


def from_rdflib(t, iri_map: list) -> tuple:
    if isinstance(t, URIRef):
        return ("iri", map_iri(str(t), iri_map))
    if isinstance(t, BNode):
        return ("bnode", str(t))
    if isinstance(t, Literal):
        return lit(str(t), t.datatype, t.language, iri_map)
    raise BadOutput(f"not an RDF term: {t!r}")


def read_json_results(text: str, iri_map: list) -> Answer:
    """SPARQL 1.1 JSON results, ours or a .srj: read strictly, since a
    malformed answer is a failure to report, not to guess around."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise BadOutput(f"not JSON: {e}")
    if not isinstance(doc, dict):
        raise BadOutput("JSON results are an object")
    if "boolean" in doc:
        if not isinstance(doc["boolean"], bool):
            raise BadOutput(f"'boolean' is {doc['boolean']!r}, not true or false")
        return Answer("ask", boolean=doc["boolean"])
    try:
        names = doc["head"]["vars"]
        bindings = doc["results"]["bindings"]
    except (KeyError, TypeError):
        raise BadOutput("neither 'boolean' nor head.vars and results.bindings")
    if not isinstance(names, list) or not all(isinstance(v, str) for v in names) or not isinstance(bindings, list):
        raise BadOutput("head.vars is a list of names, results.bindings a list")
    rows = []
    for b in bindings:
        if not isinstance(b, dict):
            raise BadOutput(f"a binding is an object, not {b!r}")
        row = {}
        for var, v in b.items():
            if not isinstance(v, dict) or not isinstance(v.get("value"), str):
                raise BadOutput(f"?{var}: a term is an object with a string 'value', not {v!r}")
            kind = v.get("type")
            if kind == "uri":
                row[var] = ("iri", map_iri(v["value"], iri_map))
            elif kind == "bnode":
                row[var] = ("bnode", v["value"])
            elif kind in ("literal", "typed-literal"):
                row[var] = lit(v["value"], v.get("datatype"), v.get("xml:lang"), iri_map)
            else:
                raise BadOutput(f"?{var}: unknown term type {kind!r}")
        rows.append(row)
    return Answer("select", vars=list(names), rows=rows)


def read_result_set_graph(g: rdflib.Graph, iri_map: list) -> Optional[Answer]:
    """The DAWG result-set vocabulary (rs:) the 1.0 suite writes answers in;
    None if the graph is not a result set (it is then a CONSTRUCT answer).
    rdflib reads the vocabulary too, but drops rs:index, the order."""
    sets = list(g.subjects(RDF.type, RS.ResultSet))
    if not sets:
        return None
    rs = sets[0]
    boolean = g.value(rs, RS.boolean)
    if boolean is not None:
        return Answer("ask", boolean=str(boolean).strip().lower() in ("true", "1"))
    names = sorted(str(v) for v in g.objects(rs, RS.resultVariable))
    solutions = []
    for s in g.objects(rs, RS.solution):
        row = {}
        for b in g.objects(s, RS.binding):
            row[str(g.value(b, RS.variable))] = from_rdflib(g.value(b, RS.value), iri_map)
        index = g.value(s, RS["index"])  # not RS.index: a Namespace is a str, and that is str.index
        solutions.append((int(index) if index is not None else None, row))
    ordered = any(i is not None for i, _ in solutions)
    if ordered:
        solutions.sort(key=lambda p: (p[0] is None, p[0] or 0))
    return Answer("select", vars=names, rows=[r for _, r in solutions], ordered=ordered)


RDF_FORMATS = {".ttl": "turtle", ".nt": "nt", ".rdf": "xml", ".owl": "xml"}


def read_expected(path: Path, iri_map: list) -> Answer:
    suffix = path.suffix.lower()
    if suffix == ".srx":
        # rdflib walks <results>' children with lxml when lxml is installed,
        # and lxml keeps comments as children: concat02's 13 commented
        # <result/> lines became 26 rows. The standard library's parser drops
        # comments, so rdflib is given the file without them.
        root = ElementTree.parse(path).getroot()
        r = Result.parse(io.BytesIO(ElementTree.tostring(root)), format="xml")
        if r.type == "ASK":
            return Answer("ask", boolean=bool(r.askAnswer))
        rows = [{str(k): from_rdflib(v, iri_map) for k, v in b.items() if v is not None} for b in r.bindings]
        return Answer("select", vars=[str(v) for v in r.vars], rows=rows)
    if suffix == ".srj":
        return read_json_results(path.read_text(encoding="utf-8"), iri_map)
    if suffix == ".csv":
        return read_csv(path.read_text(encoding="utf-8"), iri_map)
    if suffix == ".tsv":
        return read_tsv(path.read_text(encoding="utf-8"), iri_map)
    if suffix in RDF_FORMATS:
        g = rdflib.Graph()
        g.parse(str(path), format=RDF_FORMATS[suffix], publicID=file_url(path))
        answer = read_result_set_graph(g, iri_map)
        return answer if answer is not None else Answer("graph", graph=g)
    raise BadOutput(f"{path.name}: no reader for {suffix} results")


def read_csv(text: str, iri_map: list) -> Answer:
    try:
        table = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as e:
        raise BadOutput(f"not CSV: {e}")
    if not table:
        raise BadOutput("no CSV header line")
    names, rows = table[0], []
    for n, cells in enumerate(table[1:], 2):
        if not cells and len(names) == 1:  # the csv module reads an empty line as no cells, not one empty one
            cells = [""]
        if len(cells) != len(names):
            raise BadOutput(f"CSV line {n}: {len(cells)} cells, the header has {len(names)}")
        rows.append({v: (("bnode", c[2:]) if c.startswith("_:") else ("csv", map_iri(c, iri_map)))
                     for v, c in zip(names, cells)})
    return Answer("select", vars=names, rows=rows)


_tsv_cells: dict = {}
_tsv_lock = threading.Lock()


def tsv_term(cell: str, iri_map: list) -> tuple:
    """A TSV cell is a term in Turtle syntax: read by rdflib's Turtle parser
    as the object of a one-triple document (blank nodes aside, whose labels
    must stay as written to be matched across cells)."""
    m = re.fullmatch(r"_:(\S+)", cell)
    if m:
        return ("bnode", m.group(1))
    with _tsv_lock:
        term = _tsv_cells.get(cell)
    if term is None:
        g = rdflib.Graph()
        try:
            g.parse(data=f"<urn:tsv:s> <urn:tsv:p> {cell} .\n", format="turtle")
        except Exception as e:
            raise BadOutput(f"TSV cell {cell[:80]!r} is not an RDF term: {str(e).splitlines()[0][:120]}")
        objects = list(g.objects())
        if len(objects) != 1:
            raise BadOutput(f"TSV cell {cell[:80]!r} is not one RDF term")
        term = objects[0]
        with _tsv_lock:
            _tsv_cells[cell] = term
    return numeric_by_value(from_rdflib(term, iri_map))


def read_tsv(text: str, iri_map: list) -> Answer:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise BadOutput("no TSV header line")
    names = []
    for h in lines[0].split("\t") if lines[0] else []:  # an empty header: a query with no variables
        if not re.fullmatch(r"[?$]\S+", h):
            raise BadOutput(f"TSV header cell {h!r} is not a variable")
        names.append(h[1:])
    rows = []
    for n, line in enumerate(lines[1:], 2):
        cells = line.split("\t") if line or names else []
        if len(cells) != len(names):
            raise BadOutput(f"TSV line {n}: {len(cells)} cells, the header has {len(names)}")
        rows.append({v: tsv_term(c, iri_map) for v, c in zip(names, cells) if c != ""})
    return Answer("select", vars=names, rows=rows)


def read_ntriples(text: str, iri_map: list) -> Answer:
    g = rdflib.Graph()
    try:
        g.parse(data=text, format="nt")
    except Exception as e:
        raise BadOutput(f"not N-Triples: {str(e).splitlines()[0][:200]}")
    return Answer("graph", graph=g)


NUMERIC = {XSD + t for t in ("integer", "decimal", "float", "double", "nonPositiveInteger", "negativeInteger", "long",
                             "int", "short", "byte", "nonNegativeInteger", "unsignedLong", "unsignedInt",
                             "unsignedShort", "unsignedByte", "positiveInteger")}


def numeric_by_value(t: tuple) -> tuple:
    if t[0] == "lit" and t[2] in NUMERIC:
        try:
            v = Decimal(t[1].strip())
            return ("num", t[2], "NaN" if v.is_nan() else str(v.normalize()) if v.is_finite() else str(v))
        except InvalidOperation:
            pass
    return t


# ----------------------------------------------------------------------------
# Comparing solutions

def has_bnode(row: dict) -> bool:
    return any(t[0] == "bnode" for t in row.values())


def shape(row: dict) -> tuple:
    """The row with its blank nodes made anonymous: rows that can match
    under some bijection have the same shape."""
    return tuple(sorted((v, ("bnode",) if t[0] == "bnode" else t) for v, t in row.items()))


class GaveUp(Exception):
    pass


def match_rows(expected: list, got: list, exp_group: list, got_group: list, budget: int = 200000) -> bool:
    """Whether got is expected up to one blank-node bijection, row i of got
    matched only to a row of expected with the same group number (all 0 for
    multiset equality; runs of ORDER BY ties otherwise)."""
    if len(expected) != len(got):
        return False
    ground_e, ground_g = collections.Counter(), collections.Counter()
    open_e, open_g = [], []
    for i, r in enumerate(expected):
        if has_bnode(r):
            open_e.append(i)
        else:
            ground_e[(exp_group[i], shape(r))] += 1
    for j, r in enumerate(got):
        if has_bnode(r):
            open_g.append(j)
        else:
            ground_g[(got_group[j], shape(r))] += 1
    if ground_e != ground_g or len(open_e) != len(open_g):
        return False
    by_shape = collections.defaultdict(list)
    for j in open_g:
        by_shape[(got_group[j], shape(got[j]))].append(j)
    candidates = {i: by_shape.get((exp_group[i], shape(expected[i])), []) for i in open_e}
    order = sorted(open_e, key=lambda i: len(candidates[i]))
    fwd, back, used = {}, {}, set()
    steps = [0]

    def bind(i, j, trail) -> bool:
        for v, te in expected[i].items():
            if te[0] != "bnode":
                continue
            tg = got[j][v]
            a, b = te[1], tg[1]
            if a in fwd:
                if fwd[a] != b:
                    return False
            elif b in back:
                return False
            else:
                fwd[a], back[b] = b, a
                trail.append(a)
        return True

    def search(k: int) -> bool:
        if k == len(order):
            return True
        steps[0] += 1
        if steps[0] > budget:
            raise GaveUp()
        i = order[k]
        for j in candidates[i]:
            if j in used:
                continue
            trail = []
            if bind(i, j, trail):
                used.add(j)
                if search(k + 1):
                    return True
                used.discard(j)
            for a in trail:
                del back[fwd.pop(a)]
        return False

    return search(0)


def show_term(t: tuple) -> str:
    kind = t[0]
    if kind == "iri":
        return f"<{t[1]}>"
    if kind == "bnode":
        return f"_:{t[1]}"
    if kind == "csv":
        return json.dumps(t[1], ensure_ascii=False)
    if kind == "num":
        return f"{t[2]}^^{t[1].replace(XSD, 'xsd:')}"
    s = json.dumps(t[1], ensure_ascii=False)
    if t[3]:
        return f"{s}@{t[3]}"
    if t[2]:
        return f"{s}^^{t[2].replace(XSD, 'xsd:') if t[2].startswith(XSD) else '<' + t[2] + '>'}"
    return s


def show_row(row: dict, names: list) -> str:
    cells = [f"?{v}={show_term(row[v])}" for v in names if v in row]
    s = " ".join(cells) if cells else "(no bindings)"
    return s if len(s) <= 240 else s[:237] + "..."


def anonymous(row: dict) -> tuple:
    return tuple(sorted((v, ("bnode", "*") if t[0] == "bnode" else t) for v, t in row.items()))


def diff_rows(expected: Answer, got: Answer, limit: int = 6) -> list:
    names = sorted(set(expected.vars) | set(got.vars))
    e = collections.Counter(anonymous(r) for r in expected.rows)
    g = collections.Counter(anonymous(r) for r in got.rows)
    missing, extra = list((e - g).elements()), list((g - e).elements())
    lines = [f"expected {len(expected.rows)} rows, got {len(got.rows)}"]
    if not missing and not extra:
        lines.append("the same rows up to blank node labels, but the blank nodes are shared differently")
    for title, rows in (("missing", missing), ("extra", extra)):
        if rows:
            lines.append(f"{title} ({len(rows)}):")
            lines += [f"  {show_row(dict(r), names)}" for r in rows[:limit]]
            if len(rows) > limit:
                lines.append(f"  ... and {len(rows) - limit} more")
    return lines


def order_groups(rows: list, keys: list) -> list:
    """Run numbers: consecutive rows equal on keys share one."""
    groups, previous, n = [], object(), -1
    for r in rows:
        k = tuple(r.get(v) for v in keys)
        if k != previous:
            n, previous = n + 1, k
        groups.append(n)
    return groups


def compare_lax(expected: Answer, got: Answer) -> Optional[list]:
    """mf:LaxCardinality (REDUCED may drop some duplicates, or none): the
    same distinct solutions, each at least once and at most as often as
    expected. With blank nodes in the rows, the distinct solutions are
    matched and only the total is bounded."""
    distinct_e, distinct_g = list(dict.fromkeys(map(row_key, expected.rows))), \
        list(dict.fromkeys(map(row_key, got.rows)))
    zeros_e, zeros_g = [0] * len(distinct_e), [0] * len(distinct_g)
    same = match_rows([dict(r) for r in distinct_e], [dict(r) for r in distinct_g], zeros_e, zeros_g)
    if same and any(has_bnode(r) for r in expected.rows + got.rows):
        same = len(got.rows) <= len(expected.rows)
    elif same:
        e, g = collections.Counter(map(row_key, expected.rows)), collections.Counter(map(row_key, got.rows))
        same = all(1 <= g[k] <= e[k] for k in e)
    if same:
        return None
    return diff_rows(expected, got) + ["(mf:LaxCardinality: each solution at least once, at most as often as "
                                       "expected)"]


def row_key(row: dict) -> tuple:
    return tuple(sorted(row.items()))


def compare_select(expected: Answer, got: Answer, order_vars: Optional[list], lax: bool = False) -> Optional[list]:
    """None if got is a right answer; else the lines saying why not."""
    if set(expected.vars) != set(got.vars):
        return [f"variables differ: expected {' '.join('?' + v for v in sorted(expected.vars)) or '(none)'}, "
                f"got {' '.join('?' + v for v in sorted(got.vars)) or '(none)'}"]
    # Numbers by datatype and value (the module's docstring says why); the
    # diffs show the terms as written.
    shown_e, shown_g = expected, got
    expected = Answer(expected.kind, expected.vars, [by_value(r) for r in expected.rows], expected.ordered)
    got = Answer(got.kind, got.vars, [by_value(r) for r in got.rows], got.ordered)
    zeros_e, zeros_g = [0] * len(expected.rows), [0] * len(got.rows)
    try:
        if lax:
            return compare_lax(expected, got)
        if not match_rows(expected.rows, got.rows, zeros_e, zeros_g):
            return diff_rows(shown_e, shown_g)
        if order_vars is None or not expected.ordered or len(expected.rows) < 2:
            return None
        visible = bool(order_vars) and set(order_vars) <= set(expected.vars)
        keys = sorted(set(order_vars)) if visible else sorted(expected.vars)
        groups = order_groups(expected.rows, keys)
        if match_rows(expected.rows, got.rows, groups, groups):
            return None
    except GaveUp:
        return ["blank node matching gave up (too many candidate bijections); cannot tell"]
    if visible:
        why = "rows that differ in " + " ".join("?" + v for v in keys) + " must come in the expected order"
    else:
        why = "the ORDER BY is on values the result does not show, so ties cannot be told: the order must match"
    first = next((k for k in range(len(got.rows)) if anonymous(got.rows[k]) != anonymous(expected.rows[k])), 0)
    names = sorted(expected.vars)
    return ["the right rows in the wrong order (" + why + ")",
            f"first difference at row {first + 1}:",
            f"  expected {show_row(expected.rows[first], names)}",
            f"  got      {show_row(got.rows[first], names)}"]


def by_value(row: dict) -> dict:
    return {v: numeric_by_value(t) for v, t in row.items()}


def canonical_graph(g: rdflib.Graph, iri_map: list) -> rdflib.Graph:
    """A copy with this copy's file IRIs rewritten and literals in the form
    terms are compared in (language tags in lower case, xsd:string plain)."""
    def term(t):
        if isinstance(t, URIRef):
            return URIRef(map_iri(str(t), iri_map))
        if isinstance(t, Literal):
            _, lexical, dt, lang = lit(str(t), t.datatype, t.language, iri_map)
            return Literal(lexical, lang=lang or None, datatype=URIRef(dt) if dt else None)
        return t
    out = rdflib.Graph()
    for s, p, o in g:
        out.add((term(s), term(p), term(o)))
    return out


def compare_graphs(expected: rdflib.Graph, got: rdflib.Graph, iri_map: list, limit: int = 6) -> Optional[list]:
    e, g = canonical_graph(expected, iri_map), canonical_graph(got, iri_map)
    if rdflib.compare.isomorphic(e, g):
        return None
    _, only_e, only_g = rdflib.compare.graph_diff(rdflib.compare.to_isomorphic(e), rdflib.compare.to_isomorphic(g))
    lines = [f"expected {len(e)} triples, got {len(g)}"]
    if not len(only_e) and not len(only_g):
        lines.append("the same triples up to blank node labels, but not isomorphic")
    for title, part in (("missing", only_e), ("extra", only_g)):
        triples = sorted(" ".join(x.n3() for x in t) + " ." for t in part)
        if triples:
            lines.append(f"{title} ({len(triples)}):")
            lines += [f"  {t[:240]}" for t in triples[:limit]]
            if len(triples) > limit:
                lines.append(f"  ... and {len(triples) - limit} more")
    return lines


def compare(expected: Answer, got: Answer, order_vars: Optional[list], iri_map: list, lax: bool = False) \
        -> Optional[list]:
    if expected.kind != got.kind:
        what = {"select": "SELECT results", "ask": "an ASK answer (a boolean)", "graph": "a graph (N-Triples)"}
        return [f"expected {what[expected.kind]}, got {what[got.kind]}"]
    if expected.kind == "ask":
        return None if expected.boolean == got.boolean else \
            [f"expected {str(expected.boolean).lower()}, got {str(got.boolean).lower()}"]
    if expected.kind == "graph":
        return compare_graphs(expected.graph, got.graph, iri_map)
    return compare_select(expected, got, order_vars, lax)


# ----------------------------------------------------------------------------
# The query text: only what the comparison needs (the outermost ORDER BY)

_IRIREF = re.compile(r'<[^<>"{}|^`\\\x00-\x20]*>')


def strip_sparql(text: str) -> str:
    """The query without comments, strings and IRIs, whose characters
    (a '{' in a string, a '#' in an IRI) would mislead the brace count."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "\"'":
            long = text.startswith(c * 3, i)
            close = c * 3 if long else c
            j = i + len(close)
            while j < n and not text.startswith(close, j) and (long or text[j] != "\n"):
                j += 2 if text[j] == "\\" else 1
            out.append(' "" ')
            i = j + len(close)
            continue
        if c == "<":
            m = _IRIREF.match(text, i)
            if m:
                out.append(" <> ")
                i = m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def outer_order_by(text: str) -> Optional[list]:
    """The variables the outermost ORDER BY names ([] for one on no
    variable), or None if the query's own solutions are not ordered."""
    s = strip_sparql(text)
    depth, depth_at = 0, []
    for c in s:
        depth_at.append(depth)
        depth += (c == "{") - (c == "}")
    for m in re.finditer(r"\bORDER\s+BY\b", s, re.IGNORECASE):
        if depth_at[m.start()] != 0:
            continue
        end = len(s)
        for stop in re.finditer(r"\b(LIMIT|OFFSET|VALUES)\b", s[m.end():], re.IGNORECASE):
            if depth_at[m.end() + stop.start()] == 0:
                end = m.end() + stop.start()
                break
        return list(dict.fromkeys(re.findall(r"[?$]([\w\u00B7\u0300-\u036F\u203F-\u2040]+)", s[m.end():end])))
    return None


# ----------------------------------------------------------------------------
# Running the CLI

@dataclass
class Outcome:
    status: str                        # "pass", "fail", "not run"
    category: str = ""
    reason: str = ""
    detail: list = field(default_factory=list)
    command: list = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class Run:
    returncode: Optional[int]
    stdout: bytes
    stderr: str
    timed_out: bool
    seconds: float


def run_cli(argv: list, timeout: float) -> Run:
    """The CLI in a session of its own, so that a timeout ends whatever it
    started too (the --platform processes cores, say)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
    return Run(None if timed_out else p.returncode, out, err.decode("utf-8", "replace"), timed_out,
               time.monotonic() - t0)


def one_line(s: str, limit: int = 300) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


# Lines of standard error that say what went wrong: the CLI's own errors,
# and what the C++ runtime prints when it aborts. The rest is progress
# ("data.ttl: 16 triples, 16 new"), which names files but is not an error.
_ERROR_LINE = re.compile(r"^tacomesh-rdf: |terminate called|what\(\):|Assertion|Sanitizer|runtime error:")


def error_lines(stderr: str) -> list:
    return [l.strip() for l in stderr.splitlines() if _ERROR_LINE.search(l)]


def cli_message(stderr: str, paths: Iterable[Path], fallback: bool = True) -> str:
    """The CLI's error, on one line, with the test files' directories cut
    from their paths (the reasons then read the same on every machine)."""
    lines = error_lines(stderr)
    if not lines and fallback:
        lines = [l for l in stderr.splitlines() if l.strip()][-1:]
    msg = " ".join(re.sub(r"^tacomesh-rdf: ", "", l) for l in lines[-2:])
    for p in sorted({str(p.parent) + "/" for p in paths}, key=len, reverse=True):
        msg = msg.replace(p, "")
    return one_line(msg) or "(no message)"


def failed_run(run: Run, test: Test, timeout: float, data: list) -> Outcome:
    """Why a run that did not exit 0 failed, in the words of its category."""
    paths = [test.query] + list(data)
    if run.timed_out:
        return Outcome("fail", TIMEOUT, f"no answer in {timeout:g} s")
    msg = cli_message(run.stderr, paths)
    errors = error_lines(run.stderr)
    if run.returncode < 0:
        try:
            name = signal.Signals(-run.returncode).name
        except ValueError:
            name = f"signal {-run.returncode}"
        said = cli_message(run.stderr, paths, fallback=False)
        return Outcome("fail", CRASH, f"killed by {name}" + (f": {said}" if said != "(no message)" else ""))
    if re.search(r"ERROR: \w+Sanitizer|runtime error:", run.stderr):
        return Outcome("fail", CRASH, f"sanitizer report (exit {run.returncode}): {msg}")
    if run.returncode == 2 and "--help" in run.stderr:
        return Outcome("fail", USAGE, f"the CLI refused the command line: {msg}")
    if re.search(re.escape(test.query.name) + r": line \d+, column \d+", run.stderr):
        return Outcome("fail", REFUSED, msg)
    if any(re.match(r"tacomesh-rdf: (\S*/)?" + re.escape(d.name) + r"(:\d+){0,2}: ", l) for d in data for l in errors):
        return Outcome("fail", LOADER, msg)
    return Outcome("fail", ERROR, f"exit {run.returncode}: {msg}")


def run_syntax_test(test: Test, cli: str, timeout: float) -> Outcome:
    argv = [cli, "parse", "--base", file_url(test.query), str(test.query)]
    run = run_cli(argv, timeout)
    if run.returncode == 0:
        out = Outcome("pass") if test.kind == "positive-syntax" else \
            Outcome("fail", ACCEPTED, "exit 0: the query was accepted; the test says it is not SPARQL")
    else:
        out = failed_run(run, test, timeout, [])
        if test.kind == "negative-syntax" and out.category == REFUSED:
            out = Outcome("pass")
        elif test.kind == "negative-syntax" and out.category == ERROR:
            out = Outcome("fail", ERROR, f"refused, but the message does not say 'line L, column C' of "
                                         f"{test.query.name}: {cli_message(run.stderr, [test.query])}")
    out.command, out.seconds = argv, run.seconds
    return out


# rdflib's parsers are not known to be safe on two threads at once: the
# workers take turns with them (parsing is a small part of a test's time).
RDFLIB_LOCK = threading.Lock()


def run_evaluation_test(test: Test, cli: str, timeout: float, empty_nt: Path) -> Outcome:
    try:
        with RDFLIB_LOCK:
            expected = read_expected(test.result, test.iri_map)
        query_text = test.query.read_text(encoding="utf-8")
    except Exception as e:  # the suite's own files, unreadable: say which and why
        return Outcome("fail", SETUP, f"cannot read the test's files: {one_line(str(e), 200)}")
    suffix = test.result.suffix.lower()
    fmt = {".csv": "csv", ".tsv": "tsv"}.get(suffix) or ("nt" if expected.kind == "graph" else "json")
    data = test.data or [empty_nt]
    argv = [cli, "query", "--base", file_url(test.query)]
    for d in data:
        argv += ["--data", str(d)]
    argv += ["--format", fmt, str(test.query)]
    run = run_cli(argv, timeout)
    if run.returncode != 0:
        out = failed_run(run, test, timeout, test.data)
        out.command, out.seconds = argv, run.seconds
        return out
    try:
        text = run.stdout.decode("utf-8")
        if not text.strip() and fmt != "nt":
            raise BadOutput("nothing on standard output")
        reader = {"json": read_json_results, "csv": read_csv, "tsv": read_tsv, "nt": read_ntriples}[fmt]
        with RDFLIB_LOCK:
            got = reader(text, test.iri_map)
    except UnicodeDecodeError as e:
        got, error = None, f"standard output is not UTF-8: {e}"
    except BadOutput as e:
        got, error = None, str(e)
    if got is None:
        shown = one_line(run.stdout.decode("utf-8", "replace"), 160)
        out = Outcome("fail", BAD_OUTPUT, f"--format {fmt}: {error}", [f"output: {shown}"])
    else:
        if fmt == "tsv":  # the expected side too: numbers by value (see the module's docstring)
            expected.rows = [by_value(r) for r in expected.rows]
        diff = compare(expected, got, outer_order_by(query_text) if expected.kind == "select" else None, test.iri_map,
                       test.lax)
        out = Outcome("pass") if diff is None else Outcome("fail", WRONG, diff[0], diff[1:])
    out.command, out.seconds = argv, run.seconds
    return out


def run_test(test: Test, cli: str, timeout: float, empty_nt: Path) -> Outcome:
    if test.kind == "not-run":
        return Outcome("not run", reason=test.not_run)
    missing = [p for p in [test.query, test.result, *test.data] if p is not None and not p.exists()]
    if missing:
        return Outcome("fail", SETUP, "missing from this copy: " + ", ".join(p.name for p in missing))
    if test.kind == "evaluation":
        return run_evaluation_test(test, cli, timeout, empty_nt)
    return run_syntax_test(test, cli, timeout)


def warm_up():
    """rdflib loads its parsers on first use; loading them here, once,
    keeps the workers from racing to."""
    rdflib.Graph().parse(data="<urn:a> <urn:b> 1 .", format="turtle")
    rdflib.Graph().parse(data="<urn:a> <urn:b> <urn:c> .\n", format="nt")
    rdflib.Graph().parse(data='<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>', format="xml")
    Result.parse(io.BytesIO(b'<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>true</boolean>'
                            b'</sparql>'), format="xml")


def out_of_budget(budget: float) -> str:
    return f"the run's --budget of {budget:g} s was spent before it started"


def run_all(tests: list, cli: str, jobs: int, timeout: float,
            progress: Optional[Callable[[int, int], None]] = None, budget: Optional[float] = None) -> list:
    warm_up()
    deadline = None if budget is None else time.monotonic() + budget

    def one(t):
        if deadline is not None and time.monotonic() > deadline:
            return Outcome("not run", reason=out_of_budget(budget))
        return run_test(t, cli, timeout, empty_nt)

    with tempfile.TemporaryDirectory(prefix="w3c-sparql-") as tmp:
        empty_nt = Path(tmp) / "empty.nt"
        empty_nt.write_bytes(b"")
        outcomes = [None] * len(tests)
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(one, t): i for i, t in enumerate(tests)}
            for done, f in enumerate(concurrent.futures.as_completed(futures), 1):
                i = futures[f]
                try:
                    outcomes[i] = f.result()
                except Exception as e:  # the runner's own bug: shown on the test, the run goes on
                    outcomes[i] = Outcome("fail", SETUP, f"run_w3c.py failed on this test: {type(e).__name__}: {e}")
                if progress:
                    progress(done, len(tests))
    return outcomes


# ----------------------------------------------------------------------------
# Known failures

HEADER = """\
# W3C SPARQL query tests that tacomesh-rdf is known to fail: test IRI (or mf:name), TAB, reason.
# run_w3c.py (the CTest test rdf.w3c_sparql) fails when a test fails that is not listed here,
# and when a listed test passes or is not run. Regenerate after a change to the engine:
#   python3 apps/rdf/tests/w3c/run_w3c.py --cli build/apps/rdf/tacomesh-rdf --write-known
# which keeps the reason of each test still failing (edit reasons freely) and fills in the
# observed reason for new ones (a reason that starts with a failure kind, as the runner
# writes them, is refreshed; one written by hand is kept).
"""


def read_known(path: Path) -> dict:
    known = {}
    if not path.exists():
        return known
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        key, _, reason = line.partition("\t")
        known[key.strip()] = reason.strip()
    return known


def known_key(test: Test, known: dict, names: collections.Counter) -> Optional[str]:
    if test.id in known:
        return test.id
    if test.name in known and names[test.name] == 1:
        return test.name
    return None


@dataclass
class Verdict:
    regressions: list
    now_pass: list
    not_run: list
    unknown: list
    ambiguous: list
    unfinished: list        # not run: --budget spent


def check_known(tests: list, outcomes: list, known: dict, all_tests: list) -> Verdict:
    names = collections.Counter(t.name for t in all_tests)
    v = Verdict([], [], [], [], [], [])
    for t, o in zip(tests, outcomes):
        if o.status == "not run" and o.reason.startswith("the run's --budget"):
            v.unfinished.append(t)
            continue
        key = known_key(t, known, names)
        if o.status == "fail" and key is None:
            v.regressions.append(t)
        elif o.status == "pass" and key is not None:
            v.now_pass.append(t)
        elif o.status == "not run" and key is not None:
            v.not_run.append(t)
    ids = {t.id for t in all_tests}
    for key in known:
        if key not in ids:
            if names[key] > 1:
                v.ambiguous.append(key)
            elif names[key] == 0:
                v.unknown.append(key)
    return v


def write_known(path: Path, tests: list, outcomes: list, known: dict, all_tests: list):
    """This run's failures, in the suites' order, with the old reasons kept;
    entries for tests this run did not select (--only) are kept as they were."""
    names = collections.Counter(t.name for t in all_tests)
    selected = {t.id for t in tests}
    lines, directory = [HEADER], None
    ran = dict(zip((t.id for t in tests), outcomes))
    for t in all_tests:
        if t.id in selected:
            o = ran[t.id]
            if o.status != "fail":
                continue
            key = known_key(t, known, names)
            kept = known[key] if key is not None else ""
            reason = kept if kept and not written_by_runner(kept) else observed_reason(o)
        else:
            key = known_key(t, known, names)
            if key is None:
                continue
            reason = known[key]
        if t.directory != directory:
            directory = t.directory
            lines.append(f"# {directory}\n")
        lines.append(f"{t.id}\t{reason}\n")
    path.write_text("".join(lines), encoding="utf-8")


def written_by_runner(reason: str) -> bool:
    return reason.split(":", 1)[0] in CATEGORIES


def observed_reason(o: Outcome) -> str:
    r = f"{o.category}: {o.reason}" if o.category else o.reason
    return one_line(r.replace("\t", " "), 200)


# ----------------------------------------------------------------------------
# Reports

def tally(tests: list, outcomes: list) -> tuple:
    rows = collections.OrderedDict()
    for t, o in zip(tests, outcomes):
        r = rows.setdefault(t.directory, {"directory": t.directory, "tests": 0, "passed": 0, "failed": 0,
                                          "not_run": 0})
        r["tests"] += 1
        r[{"pass": "passed", "fail": "failed", "not run": "not_run"}[o.status]] += 1
    total = {"directory": "total", "tests": 0, "passed": 0, "failed": 0, "not_run": 0}
    for r in rows.values():
        for k in ("tests", "passed", "failed", "not_run"):
            total[k] += r[k]
    return list(rows.values()), total


def print_report(tests, outcomes, suite: Suite, verdict: Optional[Verdict], known: dict, verbose: bool, out=sys.stdout):
    rows, total = tally(tests, outcomes)
    width = max([len(r["directory"]) for r in rows] + [9])
    print(f"{'directory':<{width}}  {'tests':>5}  {'passed':>6}  {'failed':>6}  {'not run':>7}", file=out)
    for r in rows + [total]:
        if r is total:
            print("-" * (width + 33), file=out)
        print(f"{r['directory']:<{width}}  {r['tests']:>5}  {r['passed']:>6}  {r['failed']:>6}  {r['not_run']:>7}",
              file=out)
    categories = collections.Counter(o.category for o in outcomes if o.status == "fail")
    if categories:
        print("\nfailures by kind: " + ", ".join(f"{c} {n}" for c, n in categories.most_common()), file=out)
    approvals = collections.Counter(t.approval or "no approval given" for t in tests)
    print("approval: " + ", ".join(f"{a} {n}" for a, n in sorted(approvals.items())), file=out)
    with_req = [t for t in tests if t.requires]
    if with_req:
        print(f"tests with mf:requires: {len(with_req)} (shown with them below when not passed)", file=out)
    if suite.notes:
        print("\nnotes:", file=out)
        for n in suite.notes:
            print(f"  {n}", file=out)
    names = collections.Counter(t.name for t in tests)
    not_passed = [(t, o) for t, o in zip(tests, outcomes) if o.status != "pass"]
    if not_passed:
        print(f"\nnot passed ({len(not_passed)}):", file=out)
    directory = None
    for t, o in not_passed:
        if t.directory != directory:
            directory = t.directory
            print(f"{directory}", file=out)
        flags = []
        if t.approval and t.approval != "Approved":
            flags.append(f"approval: {t.approval}")
        if t.requires:
            flags.append("requires " + ", ".join(t.requires))
        mark = "NOT RUN" if o.status == "not run" else \
            "FAIL (known)" if known_key(t, known, names) is not None else "FAIL"
        what = f"{o.category}: {o.reason}" if o.category else o.reason
        ident = "" if local_name(t.id) == t.name else f" [{local_name(t.id)}]"
        print(f"  {mark:<12} {t.name}{ident}{' (' + '; '.join(flags) + ')' if flags else ''}: {what}", file=out)
        for line in o.detail[:16]:
            print(f"               {line}", file=out)
        if verbose and o.command:
            print(f"               $ {' '.join(o.command)}", file=out)
    if verdict is None:
        return
    print(file=out)
    for title, items in (("REGRESSION (fails, not in known_failures.tsv)", verdict.regressions),
                         ("now passes: remove it from known_failures.tsv", verdict.now_pass),
                         ("listed in known_failures.tsv but not run: remove it", verdict.not_run)):
        if title.startswith("listed") and verdict.unfinished:
            print(f"not run, the --budget spent: {len(verdict.unfinished)} tests", file=out)
        for t in items:
            print(f"{title}: {t.directory}: {t.name} <{t.id}>", file=out)
    for key in verdict.unknown:
        print(f"known_failures.tsv names no test of these suites: {key} (remove it)", file=out)
    for key in verdict.ambiguous:
        print(f"known_failures.tsv: the name {key!r} is shared by several tests: use the IRI", file=out)


def json_report(tests, outcomes, suite: Suite, verdict: Optional[Verdict], known: dict, args) -> dict:
    rows, total = tally(tests, outcomes)
    names = collections.Counter(t.name for t in tests)
    return {
        "cli": args.cli, "suites": [str(s) for s in args.suites], "timeout_seconds": args.timeout,
        "directories": rows, "totals": total,
        "failures_by_kind": dict(collections.Counter(o.category for o in outcomes if o.status == "fail")),
        "notes": suite.notes,
        "tests": [{"id": t.id, "name": t.name, "directory": t.directory, "type": t.type, "status": o.status,
                   "category": o.category or None, "reason": o.reason, "detail": o.detail,
                   "approval": t.approval, "requires": t.requires,
                   "known_failure": known_key(t, known, names) is not None,
                   "command": o.command, "seconds": round(o.seconds, 3)} for t, o in zip(tests, outcomes)],
        "known_failures": None if verdict is None else {
            "regressions": [t.id for t in verdict.regressions], "now_pass": [t.id for t in verdict.now_pass],
            "listed_not_run": [t.id for t in verdict.not_run], "unknown": verdict.unknown,
            "not_run_budget_spent": [t.id for t in verdict.unfinished],
            "ambiguous": verdict.ambiguous},
    }


# ----------------------------------------------------------------------------
# The runner's own check (--self-test): a fake CLI over a fake suite

FAKE_CLI = r'''
"""A stand-in for tacomesh-rdf: it checks the command line against the
contract and does what a "#fake:" line of the query says."""
import os, re, signal, sys, time
from pathlib import Path
def usage(why):
    sys.stderr.write(f"tacomesh-rdf: {why}\n(run tacomesh-rdf --help for the commands and options)\n")
    sys.exit(2)
args = sys.argv[1:]
command = args.pop(0) if args else usage("no command")
opts, data, files = {}, [], []
while args:
    a = args.pop(0)
    if a == "--data": data.append(args.pop(0))
    elif a.startswith("--"): opts[a] = args.pop(0)
    else: files.append(a)
if command not in ("parse", "query") or len(files) != 1: usage(f"bad command line {sys.argv[1:]}")
query = Path(files[0])
if opts.get("--base") != query.absolute().as_uri(): usage(f"--base {opts.get('--base')} is not the query's URL")
text = query.read_text()
do = dict(re.findall(r"^#fake: (\S+) ?(.*)$", text, re.M))
if command == "query":
    if not data or not all(Path(d).is_file() for d in data): usage(f"--data {data}")
    if opts.get("--format") != do.get("format", "json"): usage(f"--format {opts.get('--format')}")
    if "data-count" in do and len(data) != int(do["data-count"]): usage(f"{len(data)} --data")
    if "empty-data" in do and Path(data[0]).stat().st_size != 0: usage("data not empty")
elif opts.keys() != {"--base"} or data: usage("parse takes --base and the query alone")
for d in data: sys.stderr.write(f"{d}: 1 triples, 1 new\n")  # progress, as the CLI prints it
if "sleep" in do: time.sleep(float(do["sleep"]))
if "signal" in do: os.kill(os.getpid(), getattr(signal, "SIG" + do["signal"]))
if "usage" in do: usage(do["usage"])
if "loader" in do:
    sys.stderr.write(f"tacomesh-rdf: {data[0]}:3:5: {do['loader']}\n"); sys.exit(1)
if "refuse" in do:
    sys.stderr.write(f"tacomesh-rdf: {query}: {do['refuse']}\n"); sys.exit(1)
if "stdout" in do:
    out = (query.parent / do["stdout"]).read_text()
    sys.stdout.write(out.replace("@DIR@", query.parent.absolute().as_uri() + "/"))
'''

# Long enough for the fake (a Python start of 30 ms, standard library only)
# on a loaded machine, short enough that the case that sleeps, which waits
# for it three times (the runs in process and the two whole-program ones),
# does not make the check slow: at 5 s it was 15 of the check's 16 s.
SELF_TEST_TIMEOUT = 2.0


def self_test() -> int:
    """The runner against a fake CLI and a fake suite: each case says what
    the runner must conclude, so the verdicts (a right answer passes, a wrong
    one fails, and why) are checked, not only the happy path."""
    P = "http://example.test/suite/t/manifest#"
    cases = []  # (id, type, query, action extras, result, status, reason words)

    def case(name, type_, query, result=None, status="pass", words=(), data=("data.ttl",), extra=""):
        cases.append((name, type_, query, list(data), result, status, words, extra))

    files = {
        "data.ttl": "@prefix : <http://ex/> .\n:a :p :b .\n",
        "rel.ttl": "<x> <http://ex/p> <y> .\n",
        "sel.srx": SRX(["x", "n"], [
            [("x", "bnode", "r1"), ("n", "literal", "chat", ' xml:lang="en-GB"')],
            [("x", "bnode", "r1"), ("n", "literal", "abc", ' datatype="http://www.w3.org/2001/XMLSchema#string"')],
            [("x", "uri", "http://ex/a"), ("n", "literal", "1", f' datatype="{XSD}integer"')],
        ]),
        "sel-good.json": JSR(["n", "x"], [
            {"x": U("http://ex/a"), "n": L("1", dt="http://www.w3.org/2001/XMLSchema#integer")},
            {"x": B("zz"), "n": L("abc")},
            {"x": B("zz"), "n": L("chat", lang="en-gb")},
        ]),
        "sel-missing.json": JSR(["n", "x"], [
            {"x": B("zz"), "n": L("abc")},
            {"x": B("zz"), "n": L("chat", lang="en-gb")},
        ]),
        "sel-extra.json": JSR(["n", "x"], [
            {"x": U("http://ex/a"), "n": L("1", dt="http://www.w3.org/2001/XMLSchema#integer")},
            {"x": U("http://ex/a"), "n": L("2", dt="http://www.w3.org/2001/XMLSchema#integer")},
            {"x": B("zz"), "n": L("abc")},
            {"x": B("zz"), "n": L("chat", lang="en-gb")},
        ]),
        "sel-split.json": JSR(["n", "x"], [
            {"x": U("http://ex/a"), "n": L("1", dt="http://www.w3.org/2001/XMLSchema#integer")},
            {"x": B("b1"), "n": L("abc")},
            {"x": B("b2"), "n": L("chat", lang="en-gb")},
        ]),
        "sel-lexical.json": JSR(["n", "x"], [
            {"x": U("http://ex/a"), "n": L("01", dt="http://www.w3.org/2001/XMLSchema#integer")},
            {"x": B("zz"), "n": L("abc")},
            {"x": B("zz"), "n": L("chat", lang="en-gb")},
        ]),
        "sel-decimal.json": JSR(["n", "x"], [
            {"x": U("http://ex/a"), "n": L("1.0", dt="http://www.w3.org/2001/XMLSchema#decimal")},
            {"x": B("zz"), "n": L("abc")},
            {"x": B("zz"), "n": L("chat", lang="en-gb")},
        ]),
        "sel-vars.json": JSR(["x", "m"], []),
        "ord.srx": SRX(["k", "v"], [
            [("k", "literal", "1", ""), ("v", "literal", "a", "")],
            [("k", "literal", "1", ""), ("v", "literal", "b", "")],
            [("k", "literal", "2", ""), ("v", "literal", "c", "")],
        ]),
        "dup.srx": SRX(["k", "v"], [[("k", "literal", "1"), ("v", "literal", v)] for v in "aabbb"] +
                       [[("k", "literal", "2"), ("v", "literal", "c")]]),
        "dup-more.json": JSR(["k", "v"], [{"k": L("1"), "v": L("a")}] * 3 + [{"k": L("1"), "v": L("b")},
                                                                             {"k": L("2"), "v": L("c")}]),
        "ord-tie.json": JSR(["k", "v"], [{"k": L("1"), "v": L("b")}, {"k": L("1"), "v": L("a")},
                                         {"k": L("2"), "v": L("c")}]),
        "ord-wrong.json": JSR(["k", "v"], [{"k": L("2"), "v": L("c")}, {"k": L("1"), "v": L("a")},
                                           {"k": L("1"), "v": L("b")}]),
        "ord.ttl": "@prefix rs: <http://www.w3.org/2001/sw/DataAccess/tests/result-set#> .\n"
                   "[] a rs:ResultSet ; rs:resultVariable \"v\" ;\n"
                   "  rs:solution [ rs:index 2 ; rs:binding [ rs:variable \"v\" ; rs:value \"b\" ] ] ;\n"
                   "  rs:solution [ rs:index 1 ; rs:binding [ rs:variable \"v\" ; rs:value \"a\" ] ] .\n",
        "ord-ab.json": JSR(["v"], [{"v": L("a")}, {"v": L("b")}]),
        "ord-ba.json": JSR(["v"], [{"v": L("b")}, {"v": L("a")}]),
        "true.srx": '<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>true</boolean></sparql>\n',
        "true.json": '{"head": {}, "boolean": true}\n',
        "false.json": '{"head": {}, "boolean": false}\n',
        "graph.ttl": "@prefix : <http://ex/> .\n:a :p [ :q \"x\"@EN ] .\n_:c :r 1 .\n",
        "graph-good.nt": '<http://ex/a> <http://ex/p> _:n1 .\n_:n1 <http://ex/q> "x"@en .\n'
                         '_:n2 <http://ex/r> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n',
        "graph-wrong.nt": '<http://ex/a> <http://ex/p> _:n1 .\n_:n1 <http://ex/q> "y"@en .\n'
                          '_:n2 <http://ex/r> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n',
        "rel.srx": SRX(["s"], [[("s", "uri", "http://example.test/suite/t/x", "")]]),
        "rel.json": '{"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "value": "@DIR@x"}}]}}\n',
        "garbage.json": "s\tp\n<http://ex/a>\t<http://ex/p>\n",
        "res.csv": 's,o\nhttp://ex/a,"x,y"\n_:b1,1.0E6\n',
        "res-good.csv": 's,o\r\n_:q,1.0E6\r\nhttp://ex/a,"x,y"\r\n',
        "res-wrong.csv": 's,o\r\n_:q,1.0e6\r\nhttp://ex/a,"x,y"\r\n',
        "res.tsv": '?s\t?o\n<http://ex/a>\t1.0e6\n_:b1\t"x"@en\n<http://ex/c>\t\n',
        "res-good.tsv": '?s\t?o\n_:z\t"x"@EN\n<http://ex/a>\t"1.0E6"^^<http://www.w3.org/2001/XMLSchema#double>\n'
                        '<http://ex/c>\t\n',
        "res-wrong.tsv": '?s\t?o\n_:z\t"x"@en\n<http://ex/a>\t"1.0E6"^^<http://www.w3.org/2001/XMLSchema#float>\n'
                         '<http://ex/c>\t\n',
    }
    # concat02's shape: comments among the results are not results
    files["sel-commented.srx"] = files["sel.srx"].replace("</result>\n", "</result> <!-- a row -->\n")
    S, N = "mf:PositiveSyntaxTest11", "mf:NegativeSyntaxTest11"
    E = "mf:QueryEvaluationTest"
    case("syntax-accepted", S, "#fake: accept\nSELECT * {}")
    case("syntax-refused", "mf:PositiveSyntaxTest", "#fake: refuse line 2, column 8: expected '{'\nSELECT *",
         status="fail", words=(REFUSED, "line 2, column 8"))
    case("negative-refused", N, "#fake: refuse line 1, column 3: unexpected 'X'\nSEX")
    case("negative-accepted", "mf:NegativeSyntaxTest", "#fake: accept\nSEX", status="fail", words=(ACCEPTED,))
    case("negative-unknown-command", N, "#fake: usage unknown command 'parse' (load, query, bench)\nSEX",
         status="fail", words=(USAGE, "unknown command 'parse'"))
    case("negative-no-place", N, "#fake: refuse bad query\nSEX", status="fail", words=("line L, column C",))
    case("syntax-crash", S, "#fake: signal SEGV\nSELECT * {}", status="fail", words=(CRASH, "SIGSEGV"))
    case("syntax-timeout", S, "#fake: sleep 60\nSELECT * {}", status="fail", words=(TIMEOUT,))
    q = "SELECT * { ?x ?p ?n }"
    case("select-right", E, f"#fake: stdout sel-good.json\n{q}", "sel.srx")
    case("select-commented-results", E, f"#fake: stdout sel-good.json\n{q}", "sel-commented.srx")
    case("select-missing-row", E, f"#fake: stdout sel-missing.json\n{q}", "sel.srx", "fail",
         (WRONG, "missing (1)", '"1"^^xsd:integer'))
    case("select-extra-row", E, f"#fake: stdout sel-extra.json\n{q}", "sel.srx", "fail", (WRONG, "extra (1)"))
    case("select-bnodes-split", E, f"#fake: stdout sel-split.json\n{q}", "sel.srx", "fail",
         (WRONG, "shared differently"))
    # Numbers by datatype and value: "01" is "1" as an integer; 1.0 as a decimal is another datatype.
    case("select-number-by-value", E, f"#fake: stdout sel-lexical.json\n{q}", "sel.srx")
    case("select-number-datatype", E, f"#fake: stdout sel-decimal.json\n{q}", "sel.srx", "fail",
         (WRONG, "missing (1)", '"1"^^xsd:integer'))
    case("select-variables", E, f"#fake: stdout sel-vars.json\n{q}", "sel.srx", "fail", (WRONG, "variables differ"))
    oq = "SELECT ?k ?v { ?s ?p ?k ; ?q ?v } ORDER BY ?k # ORDER BY ?v in a comment\n"
    case("order-ties-any-order", E, f"#fake: stdout ord-tie.json\n{oq}", "ord.srx")
    case("order-wrong", E, f"#fake: stdout ord-wrong.json\n{oq}", "ord.srx", "fail", (WRONG, "wrong order"))
    case("order-in-subquery-only", E, "#fake: stdout ord-wrong.json\n"
         "SELECT ?k ?v { { SELECT ?k ?v { ?s ?p ?k ; ?q ?v } ORDER BY ?k LIMIT 9 } }", "ord.srx")
    case("order-rs-index", E, "#fake: stdout ord-ab.json\nSELECT ?v { ?s ?p ?v } ORDER BY DESC(str(?v))", "ord.ttl")
    case("order-rs-index-wrong", E, "#fake: stdout ord-ba.json\nSELECT ?v { ?s ?p ?v ; ?q ?w } ORDER BY ?w", "ord.ttl",
         "fail", (WRONG, "ties cannot be told"))
    case("no-order-by", E, "#fake: stdout ord-wrong.json\nSELECT ?k ?v { ?s ?p ?k ; ?q ?v }", "ord.srx")
    lax = "mf:resultCardinality mf:LaxCardinality ;"
    case("reduced-fewer", E, "#fake: stdout ord-tie.json\nSELECT REDUCED * {}", "dup.srx", extra=lax)
    case("reduced-more", E, "#fake: stdout dup-more.json\nSELECT REDUCED * {}", "dup.srx", "fail", (WRONG, "Lax"),
         extra=lax)
    case("data-refused", E, "#fake: loader bad IRI\nASK {}", "true.srx", "fail", (LOADER, "data.ttl:3:5: bad IRI"))
    case("crash-after-progress", E, "#fake: signal SEGV\nASK {}", "true.srx", "fail", (CRASH,), )
    case("ask-right", E, "#fake: stdout true.json\nASK {}", "true.srx")
    case("ask-wrong", E, "#fake: stdout false.json\nASK {}", "true.srx", "fail", (WRONG, "expected true, got false"))
    case("construct-right", E, "#fake: stdout graph-good.nt\n#fake: format nt\nCONSTRUCT WHERE { ?s ?p ?o }",
         "graph.ttl")
    case("construct-wrong", E, "#fake: stdout graph-wrong.nt\n#fake: format nt\nCONSTRUCT WHERE { ?s ?p ?o }",
         "graph.ttl", "fail", (WRONG, "missing (1)", "extra (1)"))
    case("relative-iris", E, "#fake: stdout rel.json\nSELECT ?s { ?s ?p ?o }", "rel.srx", data=("rel.ttl",))
    case("not-json", E, "#fake: stdout garbage.json\nSELECT * {}", "sel.srx", "fail", (BAD_OUTPUT, "not JSON"))
    case("no-data", E, "#fake: stdout true.json\n#fake: empty-data\nASK {}", "true.srx", data=())
    case("two-data", E, "#fake: stdout true.json\n#fake: data-count 2\nASK {}", "true.srx",
         data=("data.ttl", "rel.ttl"))
    case("graph-data", E, "ASK {}", "true.srx", "not run", (NOT_RUN_GRAPHS,), extra="qt:graphData <data.ttl> ;")
    case("update", "mf:UpdateEvaluationTest", "INSERT DATA {}", "true.srx", "not run", (NOT_RUN_UPDATE,))
    case("csv-right", "mf:CSVResultFormatTest", "#fake: stdout res-good.csv\n#fake: format csv\nSELECT * {}",
         "res.csv")
    case("csv-wrong", "mf:CSVResultFormatTest", "#fake: stdout res-wrong.csv\n#fake: format csv\nSELECT * {}",
         "res.csv", "fail", (WRONG, "1.0e6"))
    case("tsv-right", E, "#fake: stdout res-good.tsv\n#fake: format tsv\nSELECT * {}", "res.tsv")
    case("tsv-wrong", E, "#fake: stdout res-wrong.tsv\n#fake: format tsv\nSELECT * {}", "res.tsv", "fail",
         (WRONG, "xsd:float"))
    case("proposed-requires", E, "#fake: stdout false.json\nASK {}", "true.srx", "fail", (WRONG,),
         extra="dawgt:approval dawgt:Proposed ; mf:requires mf:XsdDateOperations ;")

    problems = []
    with tempfile.TemporaryDirectory(prefix="w3c-self-test-") as tmp:
        root = Path(tmp) / "suite"
        t_dir = root / "t"
        t_dir.mkdir(parents=True)
        for name, text in files.items():
            (t_dir / name).write_text(text, encoding="utf-8")
        fake = Path(tmp) / "fake-tacomesh-rdf"
        fake.write_text(f"#!{sys.executable}\n{FAKE_CLI}", encoding="utf-8")
        fake.chmod(0o755)
        entries, body = [], []
        for name, type_, query, data, result, status, words, extra in cases:
            (t_dir / f"{name}.rq").write_text(query + "\n", encoding="utf-8")
            entries.append(f":{name}")
            if type_.endswith("SyntaxTest") or type_.endswith("SyntaxTest11"):
                action = f"<{name}.rq>"
            else:
                action = f"[ qt:query <{name}.rq> ; " + "".join(f"qt:data <{d}> ; " for d in data) + \
                         (extra if "graphData" in extra else "") + "]"
            body.append(f":{name} a {type_} ; mf:name \"{name}\" ; mf:action {action} ;"
                        + (f" mf:result <{result}> ;" if result else "")
                        + (f" {extra}" if extra and "graphData" not in extra else "") + " .\n")
        prefixes = ("@prefix mf: <http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#> .\n"
                    "@prefix qt: <http://www.w3.org/2001/sw/DataAccess/tests/test-query#> .\n"
                    "@prefix dawgt: <http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#> .\n"
                    "@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .\n")
        (t_dir / "manifest.ttl").write_text(
            prefixes + f"@prefix : <{P}> .\n<> a mf:Manifest ; mf:entries ( {' '.join(entries)} ) .\n" + "".join(body),
            encoding="utf-8")
        (root / "manifest-all.ttl").write_text(
            prefixes + "<> a mf:Manifest ; mf:include ( <t/manifest.ttl> <gone/manifest.ttl> ) .\n", encoding="utf-8")

        suite = discover([root])
        by_name = {t.name: t for t in suite.tests}
        if len(by_name) != len(cases):
            problems.append(f"found {len(by_name)} tests in the fake suite, wrote {len(cases)}")
        if not any("gone/manifest.ttl" in n and "not in this copy" in n for n in suite.notes):
            problems.append(f"the missing include is not in the notes: {suite.notes}")
        outcomes = run_all(suite.tests, str(fake), 2, SELF_TEST_TIMEOUT)
        results = dict(zip((t.name for t in suite.tests), outcomes))
        for name, type_, query, data, result, status, words, extra in cases:
            o = results.get(name)
            if o is None:
                problems.append(f"{name}: not found in the fake suite")
                continue
            text = " ".join([o.category, o.reason] + o.detail)
            if o.status != status or not all(w in text for w in words):
                problems.append(f"{name}: wanted {status} {list(words)}, got {o.status}: {text}")
        if results.get("crash-after-progress", Outcome("")).reason != "killed by SIGSEGV":
            problems.append("a crash's reason shows the progress lines: "
                            f"{results.get('crash-after-progress', Outcome('')).reason!r}")
        t = by_name.get("proposed-requires")
        buf = io.StringIO()
        print_report(suite.tests, outcomes, suite, None, {}, False, out=buf)
        if t is None or "approval: Proposed; requires XsdDateOperations" not in buf.getvalue():
            problems.append("the report does not show a failing test's approval and mf:requires")

        spent = run_all(suite.tests[:3], str(fake), 1, SELF_TEST_TIMEOUT, budget=0)
        if any(o.status != "not run" or "--budget" not in o.reason for o in spent) or \
                len(check_known(suite.tests[:3], spent, {}, suite.tests).unfinished) != 3:
            problems.append(f"--budget 0 ran tests: {spent}")

        # known_failures.tsv: a listed failure, a listed pass, a stale entry, a name instead of an IRI.
        known_file = Path(tmp) / "known.tsv"
        known_file.write_text(f"# comment\n{P}select-missing-row\tthe reason we wrote\n{P}select-right\tstale\n"
                              f"{P}no-such-test\tgone\nselect-extra-row\tlisted by name\n"
                              f"{P}syntax-crash\t{TIMEOUT}: an old reason the runner wrote\n", encoding="utf-8")
        known = read_known(known_file)
        v = check_known(suite.tests, outcomes, known, suite.tests)
        failing = {t.name for t, o in zip(suite.tests, outcomes) if o.status == "fail"}
        if {t.name for t in v.regressions} != failing - {"select-missing-row", "select-extra-row", "syntax-crash"}:
            problems.append(f"regressions: {sorted(t.name for t in v.regressions)}")
        if [t.name for t in v.now_pass] != ["select-right"] or v.unknown != [f"{P}no-such-test"]:
            problems.append(f"now passing {[t.name for t in v.now_pass]}, unknown {v.unknown}")
        write_known(known_file, suite.tests, outcomes, known, suite.tests)
        rewritten = read_known(known_file)
        if rewritten.get(f"{P}select-missing-row") != "the reason we wrote" or f"{P}select-right" in rewritten \
                or len(rewritten) != len(failing) or not rewritten.get(f"{P}syntax-crash", "").startswith(CRASH):
            problems.append(f"--write-known wrote {rewritten}")
        if check_known(suite.tests, outcomes, rewritten, suite.tests) != Verdict([], [], [], [], [], []):
            problems.append("after --write-known the run is not as expected")
        # The whole program: its exit status with and without a complete list.
        argv = [sys.executable, str(Path(__file__).resolve()), "--cli", str(fake), "--timeout", str(SELF_TEST_TIMEOUT),
                "--known"]
        status_ok = subprocess.run(argv + [str(known_file), str(root)], capture_output=True).returncode
        known_file.write_text(known_file.read_text().replace(f"{P}syntax-crash\t", "#"), encoding="utf-8")
        status_regression = subprocess.run(argv + [str(known_file), str(root)], capture_output=True)
        if status_ok != 0 or status_regression.returncode != 1 or b"REGRESSION" not in status_regression.stdout:
            problems.append(f"exit statuses {status_ok} (complete list), {status_regression.returncode} (a regression)")
    for p in problems:
        print(f"self-test: {p}")
    print(f"self-test: {len(cases)} cases, {'all as expected' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


def SRX(names, rows) -> str:
    """A SPARQL XML result; rows of (var, kind, value[, attributes])."""
    head = "".join(f'<variable name="{n}"/>' for n in names)
    body = "".join("<result>" + "".join(f'<binding name="{b[0]}"><{b[1]}{b[3] if len(b) > 3 else ""}>{b[2]}'
                                        f'</{b[1]}></binding>' for b in r) + "</result>\n" for r in rows)
    return f'<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head>{head}</head>' \
           f"<results>\n{body}</results></sparql>\n"


def JSR(names, rows) -> str:
    return json.dumps({"head": {"vars": names}, "results": {"bindings": rows}}) + "\n"


def U(v):
    return {"type": "uri", "value": v}


def B(v):
    return {"type": "bnode", "value": v}


def L(v, dt=None, lang=None):
    d = {"type": "literal", "value": v}
    if dt:
        d["datatype"] = dt
    if lang:
        d["xml:lang"] = lang
    return d


# ----------------------------------------------------------------------------

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Run the W3C SPARQL query test suites against tacomesh-rdf (the module docstring says how "
                    "tests are run and answers compared).")
    ap.add_argument("suites", nargs="*", type=Path, default=[HERE / "sparql10", HERE / "sparql11"],
                    help="suite directories (default: sparql10 and sparql11 beside this script)")
    ap.add_argument("--cli", default=str(REPO / "build" / "apps" / "rdf" / "tacomesh-rdf"),
                    help="the tacomesh-rdf program (default: build/apps/rdf/tacomesh-rdf)")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="tests run at once (default 2)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds a test may take (default 20)")
    ap.add_argument("--budget", type=float, metavar="SECONDS",
                    help="seconds the whole run may take; tests not started by then are reported as not run")
    ap.add_argument("--known", type=Path, default=HERE / "known_failures.tsv",
                    help="the expected failures (default: known_failures.tsv beside this script)")
    ap.add_argument("--write-known", action="store_true", help="rewrite --known from this run's failures")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON")
    ap.add_argument("--only", metavar="REGEX", help="run only tests whose IRI, name or directory matches")
    ap.add_argument("--verbose", "-v", action="store_true", help="show the command line of each test not passed")
    ap.add_argument("--self-test", action="store_true", help="check the runner against a fake CLI, then exit")
    args = ap.parse_args(argv)
    if RDFLIB_MISSING is not None:  # the CTest test is skipped, not failed (SKIP_RETURN_CODE)
        print(f"run_w3c.py: rdflib cannot be imported by {sys.executable} ({RDFLIB_MISSING}): skipped. "
              "Debian: apt-get install python3-rdflib", file=sys.stderr)
        return SKIP
    if args.self_test:
        return self_test()
    cli = shutil.which(args.cli) if os.sep not in args.cli else args.cli
    if not cli or not os.access(cli, os.X_OK):
        print(f"run_w3c.py: no tacomesh-rdf at {args.cli} (build it, or give --cli)", file=sys.stderr)
        return 2
    args.cli = os.path.abspath(cli)
    for s in args.suites:
        if not s.is_dir():
            print(f"run_w3c.py: {s}: not a directory", file=sys.stderr)
            return 2
    suite = discover(args.suites)
    tests = suite.tests
    if args.only:
        pattern = re.compile(args.only)
        tests = [t for t in tests if pattern.search(t.id) or pattern.search(t.name) or pattern.search(t.directory)]
    t0 = time.monotonic()
    interactive = sys.stderr.isatty()

    def progress(done, total):
        if interactive and (done % 20 == 0 or done == total):
            print(f"\r{done}/{total} tests", end="" if done < total else "\n", file=sys.stderr, flush=True)

    outcomes = run_all(tests, args.cli, args.jobs, args.timeout, progress, args.budget)
    known = read_known(args.known)
    if args.write_known:
        write_known(args.known, tests, outcomes, known, suite.tests)
        print(f"wrote {args.known}")
        known = read_known(args.known)
    verdict = check_known(tests, outcomes, known, suite.tests)
    if args.only:  # entries for tests not selected are not stale
        verdict.unknown, verdict.ambiguous = [], []
    print_report(tests, outcomes, suite, verdict, known, args.verbose)
    if args.json:
        args.json.write_text(json.dumps(json_report(tests, outcomes, suite, verdict, known, args), indent=1,
                                        ensure_ascii=False) + "\n", encoding="utf-8")
    bad = len(verdict.regressions) + len(verdict.now_pass) + len(verdict.not_run) + len(verdict.unknown) \
        + len(verdict.ambiguous) + len(verdict.unfinished)
    _, total = tally(tests, outcomes)
    print(f"\n{total['passed']} passed, {total['failed']} failed ({total['failed'] - len(verdict.regressions)} known), "
          f"{total['not_run']} not run, of {total['tests']} tests in {time.monotonic() - t0:.1f} s: "
          + ("as expected" if not bad else f"{bad} not as expected (above)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
