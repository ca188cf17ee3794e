#!/usr/bin/env python3
"""tacomesh-rdf serve as SPARQL clients use it: the SPARQL 1.1 Protocol over
LUBM(1), with curl (GET, POST as a form and as application/sparql-query,
each result type by Accept) and with SPARQLWrapper (SELECT as JSON and XML,
ASK, CONSTRUCT), the refusals (a query that does not parse, an Accept that
nothing offered matches, updates, datasets, a body past the cap, a query
past the limits), eight queries at once, and SIGTERM ending the server with
status 0.

    serve_test.py TACOMESH_RDF DATA_DIR

Exits 77 (skipped) without curl or SPARQLWrapper (Debian: curl,
python3-sparqlwrapper; ./build.sh installs them).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
import xml.dom.minidom

try:
    from SPARQLWrapper import JSON, POST, TURTLE, XML, SPARQLWrapper
except ImportError:
    print("skipped: no SPARQLWrapper (Debian: python3-sparqlwrapper)")
    sys.exit(77)
if not shutil.which("curl"):
    print("skipped: no curl")
    sys.exit(77)

cli, data = sys.argv[1], sys.argv[2]
# The server is on this machine: no proxy may stand between (curl and urllib read these).
for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
    os.environ.pop(var, None)
os.environ["no_proxy"] = os.environ["NO_PROXY"] = "*"

failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}" + (f": {detail}" if detail else ""), flush=True)


answers = {}
with open(os.path.join(data, "lubm1.answers.tsv")) as f:
    for line in f:
        if line.strip() and not line.startswith("#"):
            q, rows = line.split()[:2]
            answers[q] = int(rows)


def query_text(name):
    with open(os.path.join(data, "queries", name)) as f:
        return f.read()


UB = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>\n"
COUNT_Q14 = UB + "SELECT (COUNT(*) AS ?n) WHERE { ?x a ub:UndergraduateStudent }"
Q14 = answers["q14.rq"]


class server:
    """tacomesh-rdf serve on a free port, until stop()."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([cli, "serve", "--data", os.path.join(data, "lubm1-inferred.nt.gz"), "--port", "0",
                                      "--quiet", *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.url = None
        ready = threading.Event()

        def read():  # every line, so that the server never blocks on a full pipe
            for line in self.proc.stderr:
                self.lines.append(line)
                m = re.match(r"listening on (http://\S+/sparql)", line)
                if m:
                    self.url = m.group(1)
                    ready.set()
            ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        ready.wait(timeout=240)
        if not self.url:
            self.proc.kill()
            sys.exit(f"FAIL: the server did not listen: {''.join(self.lines)}")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = "still running 60 s after SIGTERM"
        self.reader.join(timeout=5)
        return rc


def curl(url, *args):
    """(status, content type, body) of one curl request."""
    with tempfile.NamedTemporaryFile() as body:
        out = subprocess.run(["curl", "-s", "--noproxy", "*", "-o", body.name, "-w", "%{http_code}\n%{content_type}",
                              *args, url], capture_output=True, text=True, timeout=120)
        status, _, ctype = out.stdout.partition("\n")
        return int(status or 0), ctype, open(body.name, "rb").read().decode("utf-8", "replace")


def media(ctype):
    return ctype.split(";")[0].strip()


def json_count(body):
    return int(json.loads(body)["results"]["bindings"][0]["n"]["value"])


srv = server("--cores", "2", "--max-intermediate-rows", "1000000")
url = srv.url

# ---- curl: GET, POST form, POST body; each result type ----
s, t, b = curl(url, "-G", "--data-urlencode", "query=" + COUNT_Q14)
check("GET, no Accept: 200", s == 200, f"{s} {b}")
check("GET, no Accept: JSON results", media(t) == "application/sparql-results+json", t)
check("GET, no Accept: Q14's count", s == 200 and json_count(b) == Q14, b)

s, t, b = curl(url, "--data-urlencode", "query=" + COUNT_Q14, "-H", "Accept: application/sparql-results+xml")
check("POST form, XML: 200 and type", s == 200 and media(t) == "application/sparql-results+xml", f"{s} {t}")
if s == 200:
    lit = xml.dom.minidom.parseString(b).getElementsByTagName("literal")
    check("POST form, XML: Q14's count", len(lit) == 1 and lit[0].firstChild.data == str(Q14), b)

s, t, b = curl(url, "-H", "Content-Type: application/sparql-query", "-H", "Accept: text/tab-separated-values",
               "--data-binary", COUNT_Q14)
check("POST body, TSV: 200 and type", s == 200 and media(t) == "text/tab-separated-values", f"{s} {t}")
check("POST body, TSV: Q14's count", b.splitlines() == ["?n", f'"{Q14}"^^<http://www.w3.org/2001/XMLSchema#integer>'], b)

s, t, b = curl(url, "-G", "--data-urlencode", "query=" + COUNT_Q14, "-H", "Accept: text/csv")
check("GET, CSV", s == 200 and media(t) == "text/csv" and b.split() == ["n", str(Q14)], f"{s} {t} {b}")

# The rows of a query file, through the alias / too.
s, t, b = curl(url.rsplit("/", 1)[0] + "/", "-G", "--data-urlencode", "query=" + query_text("q01.rq"))
check("GET / (alias), q01's rows", s == 200 and len(json.loads(b)["results"]["bindings"]) == answers["q01.rq"], b[:300])

# q-values: the highest wins; q=0 refuses; format= overrides Accept.
s, t, b = curl(url, "-G", "--data-urlencode", "query=" + COUNT_Q14, "-H",
               "Accept: text/csv;q=0.5, application/sparql-results+xml")
check("Accept q-values: XML over CSV;q=0.5", media(t) == "application/sparql-results+xml", t)
s, t, b = curl(url, "-G", "--data-urlencode", "query=" + COUNT_Q14, "-H",
               "Accept: application/sparql-results+json;q=0, */*;q=0.8")
check("Accept q=0 refuses JSON: the next offer", s == 200 and media(t) == "application/sparql-results+xml", t)
s, t, b = curl(url, "-G", "--data-urlencode", "query=" + COUNT_Q14, "--data-urlencode", "format=csv", "-H",
               "Accept: application/sparql-results+json")
check("format=csv overrides Accept", s == 200 and media(t) == "text/csv", t)

# ASK, each way.
s, t, b = curl(url, "-G", "--data-urlencode", "query=ASK { ?s ?p ?o }")
check("ASK true, JSON", s == 200 and json.loads(b) == {"head": {}, "boolean": True}, b)
s, t, b = curl(url, "-H", "Content-Type: application/sparql-query", "-H", "Accept: application/sparql-results+xml",
               "--data-binary", "ASK { <urn:nothing> ?p ?o }")
check("ASK false, XML", s == 200 and "<boolean>false</boolean>" in b, b)

# CONSTRUCT as N-Triples (the default), as Turtle (N-Triples is Turtle), and not as SPARQL results.
construct = UB + "CONSTRUCT { ?x a ub:Student } WHERE { ?x a ub:UndergraduateStudent }"
s, t, b = curl(url, "-G", "--data-urlencode", "query=" + construct)
lines = b.splitlines()
check("CONSTRUCT: N-Triples", s == 200 and media(t) == "application/n-triples", f"{s} {t}")
check("CONSTRUCT: a triple a line", len(lines) == Q14 and all(l.endswith(" .") for l in lines), f"{len(lines)} lines")
s, t, b = curl(url, "--data-urlencode", "query=" + construct, "-H", "Accept: text/turtle")
check("CONSTRUCT: text/turtle", s == 200 and media(t) == "text/turtle" and len(b.splitlines()) == Q14, f"{s} {t}")
try:
    import rdflib
    g = rdflib.Graph().parse(data=b, format="turtle")
    check("CONSTRUCT: the Turtle parses", len(g) == Q14, str(len(g)))
except ImportError:
    pass
s, t, b = curl(url, "-G", "--data-urlencode", "query=" + construct, "-H", "Accept: application/sparql-results+json")
check("CONSTRUCT as SPARQL results: 406", s == 406, f"{s} {b}")

# ---- refusals ----
s, t, b = curl(url, "-G", "--data-urlencode", "query=SELECT ?x WHERE {\n  ?x ?y }")
check("bad query: 400", s == 400, f"{s} {b}")
check("bad query: line and column", "line 2, column" in b and media(t) == "text/plain", b)
s, t, b = curl(url, "-G", "--data-urlencode", "query=" + COUNT_Q14, "-H", "Accept: image/png")
check("Accept image/png: 406", s == 406 and "offered" in b, f"{s} {b}")
s, t, b = curl(url, "-G", "--data-urlencode", "query=" + COUNT_Q14, "--data-urlencode", "default-graph-uri=http://e/g")
check("default-graph-uri: 400", s == 400 and "default-graph-uri" in b, f"{s} {b}")
s, t, b = curl(url, "-G", "--data-urlencode", "query=SELECT * FROM <http://e/g> WHERE { ?s ?p ?o }")
check("FROM: 400", s == 400 and "FROM" in b, f"{s} {b}")
s, t, b = curl(url, "--data-urlencode", "update=INSERT DATA { <urn:a> <urn:b> <urn:c> }")
check("update=: 400, read-only", s == 400 and "read-only" in b, f"{s} {b}")
s, t, b = curl(url, "-H", "Content-Type: application/sparql-update", "--data-binary", "CLEAR ALL")
check("application/sparql-update: 400, read-only", s == 400 and "read-only" in b, f"{s} {b}")
s, t, b = curl(url, "-H", "Content-Type: text/plain", "--data-binary", COUNT_Q14)
check("POST text/plain: 415", s == 415, f"{s} {b}")
s, t, b = curl(url, "-X", "PUT", "--data-binary", "x")
check("PUT: 405", s == 405, f"{s} {b}")
s, t, b = curl(url)
check("GET without a query: 400", s == 400 and "no query" in b, f"{s} {b}")
s, t, b = curl(url.rsplit("/", 1)[0] + "/nothing")
check("another path: 404", s == 404, f"{s} {b}")
s, t, b = curl(url, "-G", "--data-urlencode", "query=SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }")
check("a query past --max-intermediate-rows: 400, refused", s == 400 and "refused" in b, f"{s} {b[:300]}")
with tempfile.NamedTemporaryFile() as big:
    big.write(b"#" * (17 << 20))
    big.flush()
    s, t, b = curl(url, "-H", "Content-Type: application/sparql-query", "--data-binary", "@" + big.name)
    check("a 17 MB body: 413", s == 413, f"{s} {b[:300]}")

# ---- SPARQLWrapper ----
def wrapper(fmt, method=None):
    w = SPARQLWrapper(url)
    w.setReturnFormat(fmt)
    if method:
        w.setMethod(method)
    return w


try:
    w = wrapper(JSON)
    w.setQuery(query_text("q04.rq"))
    r = w.query().convert()
    check("SPARQLWrapper SELECT JSON: q04's rows", len(r["results"]["bindings"]) == answers["q04.rq"])
    w = wrapper(XML, POST)
    w.setQuery(query_text("q07.rq"))
    doc = w.query().convert()
    check("SPARQLWrapper SELECT XML (POST): q07's rows", len(doc.getElementsByTagName("result")) == answers["q07.rq"])
    w = wrapper(JSON)
    w.setQuery(UB + "ASK { ?x a ub:GraduateStudent }")
    check("SPARQLWrapper ASK", w.query().convert() == {"head": {}, "boolean": True})
    w = wrapper(TURTLE)
    w.setQuery(construct)
    body = w.query().convert()
    check("SPARQLWrapper CONSTRUCT (Turtle)", len(body.decode().splitlines()) == Q14)
except Exception as e:  # a failure to report, not to stop the checks that follow
    check("SPARQLWrapper", False, repr(e))

# ---- eight queries at once, each answered right ----
names = ["q01.rq", "q03.rq", "q04.rq", "q05.rq", "q07.rq", "q09.rq", "q11.rq", "q12.rq"]
results = {}


def ask(name, rounds=3):
    got = []
    for _ in range(rounds):
        req = urllib.request.Request(url, data=urllib.parse.urlencode({"query": query_text(name)}).encode(),
                                     headers={"Accept": "application/sparql-results+json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            got.append(len(json.loads(r.read())["results"]["bindings"]))
    results[name] = got


threads = [threading.Thread(target=ask, args=(n,)) for n in names]
for th in threads:
    th.start()
for th in threads:
    th.join()
for n in names:
    check(f"concurrent {n}", results.get(n) == [answers[n]] * 3, f"{results.get(n)}, wanted {answers[n]} x3")

# A second server on the port the first holds is refused (cpp-httplib's
# SO_REUSEPORT let it bind beside the first and take half the connections).
busy_port = urllib.parse.urlparse(srv.url).port
second = subprocess.Popen([cli, "serve", "--data", os.path.join(data, "lubm1-inferred.nt.gz"), "--port", str(busy_port),
                           "--quiet"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
try:
    _, second_err = second.communicate(timeout=120)
except subprocess.TimeoutExpired:  # it listens: the bug
    second.kill()
    _, second_err = second.communicate()
check("a port in use: exit status 1", second.returncode == 1, f"{second.returncode}: {second_err[-300:]}")
check("a port in use: named", f"cannot listen on 127.0.0.1 port {busy_port}" in second_err, second_err[-300:])

rc = srv.stop()
check("SIGTERM: exit status 0", rc == 0, f"{rc}: {''.join(srv.lines[-5:])}")

# ---- the cores as processes ----
srv = server("--cores", "1", "--platform", "processes")
s, t, b = curl(srv.url, "-G", "--data-urlencode", "query=" + COUNT_Q14)
check("--platform processes: Q14's count", s == 200 and json_count(b) == Q14, f"{s} {b}")
rc = srv.stop()
check("--platform processes, SIGTERM: exit status 0", rc == 0, f"{rc}: {''.join(srv.lines[-5:])}")

print(f"{len(failures)} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
