// tacomesh-rdf: SPARQL basic graph pattern queries over N-Triples data on
// tacomesh cores. Run with --help for the commands and options.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <rdf/engine.hpp>
#include <rdf/inference.hpp>
#include <rdf/query_engine.hpp>
#include <rdf/results.hpp>
#include <rdf/sharded.hpp>
#include <rdf/sparql_algebra.hpp>
#include <rdf/sparql_engine.hpp>
#include <rdf/store_file.hpp>
#include <tacomesh/cli/options.hpp>

#include "serve.hpp"
#if TACOMESH_WITH_MPI
#include <tacomesh/mpi/platform.hpp>
#endif

namespace {

const char* usage_text = R"(usage: tacomesh-rdf load  [options] --data FILE... --output STORE
       tacomesh-rdf query [options] --data FILE QUERY.rq
       tacomesh-rdf parse [--base IRI] QUERY.rq
       tacomesh-rdf bench [options] --data FILE QUERY.rq...
       tacomesh-rdf serve [options] --data FILE... --port N [--host ADDR]

SPARQL 1.1 queries (SELECT, ASK, CONSTRUCT, DESCRIBE) over RDF data, on
tacomesh cores sharing the store through MESH. Basic graph patterns under
SELECT run on one core or split over the cores; other queries run on one core.

commands:
  load     parse the data (and infer) once, write a compact binary STORE
  query    answer QUERY.rq ('-' reads standard input): SELECT and ASK as TSV (default),
           JSON, XML or CSV results; CONSTRUCT and DESCRIBE as N-Triples
  parse    check QUERY.rq's syntax only: exit 0 if it is a query we answer, else 1
           with "line L, column C: ..." on stderr
  bench    time the queries (basic graph patterns under SELECT): one core, task-parallel
           (a pool of queries handed to the cores) or data-parallel (each split over the cores)
  serve    answer the SPARQL 1.1 Protocol at http://ADDR:N/sparql (GET, or POST as a form or
           as application/sparql-query): results as JSON, XML, TSV or CSV and graphs as
           N-Triples, by Accept or format=; each query on one of --cores N query cores

data:
  --data FILE          N-Triples (plain or .gz), a STORE made by load, or an RDF/XML
                       (.owl, .rdf) / Turtle (.ttl) file; repeat for more files
  --infer ONTOLOGY     add the ontology and close the data under its RDFS / OWL RL
                       rules (subclass, subproperty, domain, range, inverse,
                       transitive, symmetric, intersections, existential restrictions)
  --output STORE       load: the store file to write
  --load-memory SIZE   the parsed triples' buffer while loading N-Triples (default 64M):
                       past it they are sorted into runs in a temporary file and merged
                       as they are indexed, so a load takes about the store plus this
                       plus 40 MB, whatever the file's size (bytes, or K, M, G, T)
  --check-store        check a store file whole (bounds and checksums) even if it was checked
                       before. A query on one core reads a store file where it lies and
                       checks it when first opened and after any change (device, inode, size,
                       times or checksums); the files checked are recorded in
                       $XDG_CACHE_HOME/tacomesh/checked-stores (else ~/.cache/tacomesh/...)

running:
  --cores N            cores (query: default 1; bench, and inference: the CPUs, at least 2;
                       serve: the cores answering queries, default the CPUs)
  --platform threads|processes|mpi   cores as threads, or as processes with private
                       memory (the store reaches them through MESH) (default threads);
                       mpi: one core per MPI rank, started by
                       mpirun -np N tacomesh-rdf ... --platform mpi (--cores, if given, must be N)
  --model single|task|data|shard   query: single (default on 1 core) or data (default
                       on more); bench: the first three by default, or the one named.
                       shard: the store dealt out over the cores (MPI ranks), each
                       keeping its METIS regions' part, for data one machine's memory
                       does not hold; only core 0 (rank 0) reads --data. Prints each
                       core's part and its process's memory on stderr (bench: --json)

query:
  --count              print the number of result rows (or triples) and nothing else
  --format tsv|json|xml|csv   SPARQL 1.1 results format (default tsv); ASK prints true or
                       false in TSV and CSV; CONSTRUCT and DESCRIBE print N-Triples
  --base IRI           the IRI relative IRIs of the query resolve against, unless it has
                       a BASE (default: none, and a relative IRI is an error: the data's
                       IRIs are absolute, so it would match nothing)
  --explain            print the plan (join order, operators, estimates) on stderr

limits (query and bench):
  --memory-limit SIZE  the most memory one table of a query's joins may take, in
                       bytes or with K, M, G, T (binary); default an eighth of
                       this machine's memory. A query past it (patterns that share
                       no variable multiply their rows) is refused, naming the
                       patterns, instead of running the machine out of memory
  --max-intermediate-rows N   the most rows one such table may have (default: no
                       bound but --memory-limit's)

bench:
  --repeat N           task-parallel: run the query list N times (default 20)
  --runs R             timed runs per query, after one untimed (default 5); the median counts
  --json               the report as JSON on stdout

serve:
  --port N             the port to listen on (0: a free one; the address is printed on stderr)
  --host ADDR          the address to listen on (default 127.0.0.1; 0.0.0.0: all)
                       SIGINT or SIGTERM stops the server (status 0)

  --quiet              no progress or timing lines on stderr (serve: no line per request)
  --help               this text
)";

constexpr tacomesh::cli::program me{"tacomesh-rdf", "(run tacomesh-rdf --help for the commands and options)"};

[[noreturn]] void usage_error(const std::string& why) { tacomesh::cli::usage_error(me, why); }

enum class model { single, task, data, shard };

struct options {
    std::string command;
    std::vector<std::string> data, queries;
    std::optional<std::string> infer, output;
    tacomesh::cli::core_options where; ///< --cores, --platform
    std::optional<model> mdl;
    bool count = false, json = false, explain = false, quiet = false;
    std::string format = "tsv";
    std::optional<std::string> base; ///< --base
    bool format_given = false;       ///< --format was on the command line
    std::optional<std::uint64_t> port; ///< serve: --port
    std::string host = "127.0.0.1";    ///< serve: --host
    std::uint64_t repeat = 20, runs = 5;
    rdf::query_limits limits; ///< --memory-limit, --max-intermediate-rows
    std::optional<std::uint64_t> load_memory; ///< --load-memory
    bool check_store = false;                 ///< --check-store
};

/// A whole-number option's value, from lo to hi: out of range is a usage
/// error, never a value quietly raised or lowered to fit.
std::uint64_t number(const std::string& opt, const std::string& v, std::uint64_t lo, std::uint64_t hi) {
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
        usage_error(opt + " wants a whole number, not '" + v + "'");
    const std::size_t digits = v.size() - std::min(v.find_first_not_of('0'), v.size());
    const std::uint64_t n = digits > 18 ? hi + 1 : std::stoull(v); // 19 digits may not fit; any that many is too large
    if (n < lo || n > hi) usage_error(opt + " " + v + ": from " + std::to_string(lo) + " to " + std::to_string(hi));
    return n;
}

/// A size in bytes: digits, optionally followed by K, M, G or T (powers of 1024).
std::uint64_t byte_size(const std::string& opt, const std::string& v) {
    std::string digits = v;
    std::uint64_t unit = 1;
    if (!v.empty()) {
        const std::string units = "KMGT";
        if (const auto u = units.find(char(std::toupper(static_cast<unsigned char>(v.back())))); u != std::string::npos) {
            unit = std::uint64_t(1) << (10 * (u + 1));
            digits.pop_back();
        }
    }
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
        usage_error(opt + " wants a size in bytes, e.g. 4096, 512M or 8G, not '" + v + "'");
    const std::uint64_t most = (std::uint64_t(1) << 60) / unit;
    const std::uint64_t n = number(opt, digits, 1, most);
    return n * unit;
}

options parse(int argc, char** argv) {
    options o;
    if (argc < 2) usage_error("no command (load, query, parse, bench or serve)");
    o.command = argv[1];
    if (o.command == "--help" || o.command == "-h") {
        std::fputs(usage_text, stdout);
        std::exit(0);
    }
    if (o.command != "load" && o.command != "query" && o.command != "bench" && o.command != "parse" && o.command != "serve")
        usage_error("unknown command '" + o.command + "' (load, query, parse, bench, serve)");
    const tacomesh::cli::core_option_readers readers{
        .cores = [](const std::string& flag, const std::string& v) { return taco::core_id(number(flag, v, 1, 1024)); },
        .controller = {},
    };
    for (int i = 2; i < argc; ++i) {
        if (tacomesh::cli::read_core_option(me, readers, argc, argv, i, o.where)) continue;
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        try {
            if (a == "--help" || a == "-h") {
                std::fputs(usage_text, stdout);
                std::exit(0);
            } else if (a == "--data") o.data.push_back(value());
            else if (a == "--infer") o.infer = value();
            else if (a == "--output" || a == "-o") o.output = value();
            else if (a == "--model") {
                const std::string m = value();
                if (m == "single") o.mdl = model::single;
                else if (m == "task") o.mdl = model::task;
                else if (m == "data") o.mdl = model::data;
                else if (m == "shard") o.mdl = model::shard;
                else usage_error("unknown model '" + m + "' (single, task, data, shard)");
            } else if (a == "--count") o.count = true;
            else if (a == "--format") {
                o.format = value();
                o.format_given = true;
                if (o.format != "tsv" && o.format != "json" && o.format != "xml" && o.format != "csv" && o.format != "nt")
                    usage_error("unknown format '" + o.format + "' (tsv, json, xml, csv; nt for CONSTRUCT and DESCRIBE)");
            } else if (a == "--base") {
                o.base = value();
            } else if (a == "--port") o.port = number(a, value(), 0, 65535);
            else if (a == "--host") o.host = value();
            else if (a == "--json") o.json = true;
            else if (a == "--explain") o.explain = true;
            else if (a == "--quiet") o.quiet = true;
            else if (a == "--repeat") o.repeat = number(a, value(), 1, 1000000);
            else if (a == "--runs") o.runs = number(a, value(), 1, 1000000);
            else if (a == "--memory-limit") o.limits.max_bytes = byte_size(a, value());
            else if (a == "--load-memory") o.load_memory = byte_size(a, value());
            else if (a == "--check-store") o.check_store = true;
            else if (a == "--max-intermediate-rows") o.limits.max_rows = number(a, value(), 1, std::uint64_t(1) << 62);
            else if (a.size() > 1 && a[0] == '-' && a != "-") usage_error("unknown option '" + a + "'");
            else if (o.command == "load") o.data.push_back(a);
            else o.queries.push_back(a);
        } catch (const std::invalid_argument& e) {
            usage_error(e.what());
        }
    }
    if (o.command == "parse") {
        if (o.queries.size() != 1) usage_error("parse takes one QUERY.rq (or '-' for standard input)");
        return o;
    }
    if (o.data.empty()) usage_error("no data: give --data FILE");
    if (o.command == "load" && !o.output) usage_error("load needs --output STORE");
    if (o.command == "query" && o.queries.size() != 1) usage_error("query takes one QUERY.rq (or '-' for standard input)");
    if (o.command == "bench" && o.queries.empty()) usage_error("bench needs at least one QUERY.rq");
    if (o.command == "query" && o.mdl == model::task)
        usage_error("--model task runs a pool of queries: use 'tacomesh-rdf bench --model task'");
    if (o.mdl == model::shard && o.infer)
        usage_error("--model shard takes no --infer: close the data first (tacomesh-rdf load --infer ONTOLOGY --output "
                    "STORE) and shard the store file");
    if (o.command == "serve") {
        if (!o.port) usage_error("serve needs --port N (0: a free port)");
        if (!o.queries.empty()) usage_error("serve takes no QUERY.rq: its clients send the queries");
        if (o.where.mpi) usage_error("serve runs on --platform threads or processes");
        // What a client chooses per request is no option of the server's.
        if (o.count || o.format_given || o.explain || o.mdl)
            usage_error("serve takes no --count, --format, --explain or --model: each request chooses its format "
                        "(Accept, or format=), and each query runs on one core");
    }
    tacomesh::cli::start_platform(me, o.where, o.quiet);
    return o;
}

const char* platform_name(const options& o) { return o.where.platform_name(); }

/// rdf::with_cluster on the platform the options name. On MPI every rank
/// gets here with the store it loaded; rank 0 runs fn (on its core 0) and
/// returns, the others serve its cores and end with its program.
template <class F>
void on_cluster(rdf::store& s, const options& o, taco::core_id cores, F&& fn) {
#if TACOMESH_WITH_MPI
    if (o.where.mpi) return rdf::with_cluster_on(tacomesh::mpi::config{}, s, std::forward<F>(fn));
#endif
    rdf::with_cluster(s, {cores, o.where.platform}, std::forward<F>(fn));
}

std::string shown_name(const std::string& path) { return path == "-" ? "standard input" : path; }

/// A query file's text and its algebra, parsed here so that a mistake is
/// reported with the file it is in, before any data is loaded.
struct query_file {
    std::string text;
    rdf::sparql::query_tree tree;
};

query_file read_query(const std::string& path, const options& o) {
    std::stringstream ss;
    if (path == "-") {
        if (std::cin.peek() != std::istream::traits_type::eof()) ss << std::cin.rdbuf();
        if (std::cin.bad()) throw std::runtime_error("standard input: cannot read");
    } else {
        // A directory opens and reads as empty: it would be reported as an empty query.
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) throw std::runtime_error(path + ": is a directory, not a query file");
        std::ifstream f(path, std::ios::binary);
        if (!f) throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
        if (f.peek() != std::ifstream::traits_type::eof()) ss << f.rdbuf();
        if (f.bad()) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
    }
    query_file q;
    q.text = ss.str();
    try {
        q.tree = rdf::sparql::parse_sparql(q.text, o.base.value_or(""));
    } catch (const rdf::query_error& e) {
        throw std::runtime_error(shown_name(path) + ": " + e.what()); // what(): "line L, column C: ..."
    }
    return q;
}

/// A query the parallel models and the benchmark take: a basic graph
/// pattern under SELECT, as text they parse again on every core.
std::string bgp_text(const std::string& path, const options& o) {
    query_file q = read_query(path, o);
    if (!rdf::sparql::as_bgp_query(q.tree))
        throw std::runtime_error(shown_name(path) + ": bench times basic graph patterns under SELECT (with DISTINCT and "
                                                    "LIMIT); time other queries with 'tacomesh-rdf query'");
    return std::move(q.text);
}

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

taco::core_id default_cores() { return taco::core_id(std::max(2u, std::thread::hardware_concurrency())); }

struct loaded {
    rdf::store store;
    /// A store file read in place (`map`): then `store` is empty.
    std::optional<rdf::mapped_store> mapped;
    double load_seconds = 0;
    std::optional<rdf::inference_report> inference;

    rdf::store_view view() const { return mapped ? mapped->view() : store.view(); }
    std::uint64_t triple_count() const { return mapped ? mapped->triple_count() : store.triple_count(); }
    std::size_t bytes() const { return mapped ? mapped->bytes() : store.bytes(); }
    std::size_t index_bytes() const { return mapped ? mapped->index_bytes() : store.index_bytes(); }
};

/// `map`: a store file given as --data is mapped and read in place (what
/// a query on one core needs); otherwise it is read into private memory,
/// where the cores can share it and inference can add to it.
loaded load_inputs(const options& o, bool map = false) {
    loaded l;
    const bool progress = !o.quiet && isatty(2);
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& file : o.data) {
        if (rdf::is_store_file(file)) {
            if (l.store.triple_count() != 0 || o.data.size() > 1)
                throw std::runtime_error(file + ": a store file must be the only --data");
            if (map && !o.infer) {
                const rdf::checked_stores record = rdf::checked_stores::for_user();
                l.mapped.emplace(file, &record, o.check_store);
            }
            else l.store = rdf::open_store(file);
            continue;
        }
        rdf::load_options lo;
        if (o.load_memory) lo.memory_bytes = std::size_t(*o.load_memory);
        const auto file_t0 = std::chrono::steady_clock::now();
        if (progress)
            lo.progress = [&](const rdf::load_progress& p) {
                const double s = since(file_t0);
                std::fprintf(stderr, "\rloading %s: %3d%%, %.1f M triples, %.2f M triples/s", file.c_str(),
                             p.file_bytes ? int(100 * std::min(p.file_bytes_read, p.file_bytes) / p.file_bytes) : 100,
                             double(p.statements) / 1e6, s > 0 ? double(p.statements) / s / 1e6 : 0.0);
            };
        const rdf::load_report r = l.store.load_file(file, lo);
        if (progress) std::fputs("\r\033[K", stderr);
        if (!o.quiet)
            std::fprintf(stderr, "%s: %llu triples, %llu new\n", file.c_str(), (unsigned long long)r.statements,
                         (unsigned long long)r.added);
        if (!o.quiet && r.parse_seconds > 0)
            std::fprintf(stderr, "  read %.2f s, parse %.2f s, fold dictionaries %.2f s, sort and index %.2f s\n",
                         r.read_seconds, r.parse_seconds, r.fold_seconds, r.index_seconds);
    }
    l.load_seconds = since(t0);
    if (o.infer) {
        const rdf::load_report r = l.store.load_file(*o.infer);
        if (!o.quiet) std::fprintf(stderr, "%s: %llu ontology triples\n", o.infer->c_str(), (unsigned long long)r.statements);
        const taco::core_id cores = o.where.cores.value_or(default_cores());
        if (cores == 1) l.inference = rdf::infer(l.store);
        else
            on_cluster(l.store, o, cores, [&](rdf::rdf_cluster& c) { l.inference = c.infer(l.store); });
        if (!o.quiet)
            std::fprintf(stderr, "inference: %llu triples added in %u rounds, %.3f s on %u cores\n",
                         (unsigned long long)l.inference->added, l.inference->rounds, l.inference->seconds, unsigned(cores));
    }
    if (!o.quiet) {
        const double per = double(std::max<std::uint64_t>(1, l.triple_count()));
        std::fprintf(stderr, "store: %llu triples, %u terms, %.1f bytes/triple (indexes %.1f), %s in %.3f s\n",
                     (unsigned long long)l.triple_count(), l.view().dict.size(), double(l.bytes()) / per,
                     double(l.index_bytes()) / per,
                     !l.mapped ? "loaded" : l.mapped->checked() ? "mapped and checked" : "mapped (checked before, unchanged since)",
                     l.load_seconds);
    }
    return l;
}

/// The plan on stderr; `e`: the query encoded against the data.
void explain(const rdf::query_answer& a, const rdf::query& q, const rdf::encoded_query& e) {
    std::fprintf(stderr, "plan (estimated %.0f rows%s):\n", a.used.estimated_rows,
                 e.unsatisfiable ? "; a constant is not in the data, so none match" : "");
    for (const auto& st : a.used.steps) {
        const auto& pat = e.patterns[st.pattern];
        const rdf::pattern_term* written[] = {&q.patterns[st.pattern].s, &q.patterns[st.pattern].p, &q.patterns[st.pattern].o};
        std::string s;
        for (std::size_t i = 0; i < 3; ++i) {
            const rdf::slot& sl = pat.at[i];
            if (sl.is_var()) s += "?" + e.variables[sl.var];
            else s += rdf::key(written[i]->constant) + (sl.id == rdf::no_term ? " (not in the data)" : "");
            s += " ";
        }
        std::fprintf(stderr, "  %-5s %s  %s~ %.0f rows\n", rdf::name(st.kind), rdf::name(st.index), s.c_str(), st.estimate);
    }
}

void explain(const rdf::query_answer& a, const std::string& text, const rdf::store_view& v) {
    // Constants as the query wrote them: one the data lacks has no id to look up.
    const rdf::query q = rdf::parse_query(text);
    explain(a, q, rdf::encode(q, v.dict));
}

/// A query beyond a basic graph pattern: the algebra on one core (sparql_engine.hpp).
int run_algebra_query(const options& o, const query_file& q, loaded& l) {
    const taco::core_id cores = o.where.cores.value_or(1);
    if (!o.quiet && (cores > 1 || o.mdl == model::data))
        std::fprintf(stderr, "note: only basic graph patterns under SELECT split over the cores; this query runs on one core\n");
    const auto t0 = std::chrono::steady_clock::now();
    rdf::sparql::evaluate_options eo;
    eo.limits = o.limits;
    const rdf::sparql::result r = rdf::sparql::evaluate(q.tree, l.view(), eo);
    const double seconds = since(t0);
    const rdf::sparql::result_terms terms(l.view().dict, r.pool);
    using form = rdf::sparql::query_tree::form;
    const bool graph = r.what == form::construct || r.what == form::describe;
    const std::size_t n = graph ? r.triples.size() : r.what == form::ask ? std::size_t(r.boolean) : r.rows.rows();
    std::string out;
    if (o.count) out = std::to_string(n) + "\n";
    else if (graph) rdf::append_ntriples(out, r.triples, terms);
    else if (r.what == form::ask) rdf::append_boolean(out, r.boolean, o.format);
    else if (o.format == "json") rdf::append_json(out, r.rows, r.names, terms);
    else if (o.format == "xml") rdf::append_xml(out, r.rows, r.names, terms);
    else if (o.format == "csv") rdf::append_csv(out, r.rows, r.names, terms);
    else rdf::append_tsv(out, r.rows, r.names, terms);
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (!o.quiet)
        std::fprintf(stderr, "%zu %s in %.3f ms (one core)\n", n, graph ? "triples" : r.what == form::ask ? "(ask)" : "rows",
                     seconds * 1e3);
    return 0;
}

int run_parse_command(const options& o) {
    const query_file q = read_query(o.queries[0], o);
    using form = rdf::sparql::query_tree::form;
    if (!o.quiet) {
        const char* what = q.tree.what == form::select ? "SELECT" : q.tree.what == form::ask ? "ASK" : q.tree.what == form::construct ? "CONSTRUCT" : "DESCRIBE";
        std::printf("%s: a %s query%s\n", shown_name(o.queries[0]).c_str(), what,
                    rdf::sparql::as_bgp_query(q.tree) ? " over one basic graph pattern" : "");
    }
    return 0;
}

/// The whole store's figures, taken on core 0 before it is dealt out and let go.
struct whole_store {
    std::uint64_t triples = 0;
    std::size_t bytes = 0, index_bytes = 0;
    double load_seconds = 0;
};

/// rdf::with_sharded_cluster_on on the platform the options name; only
/// core 0 (rank 0) reads the data.
template <class F>
void on_shards(const options& o, taco::core_id cores, whole_store& whole, F&& fn) {
    // A store file is mapped, not read: its pages are the page cache's,
    // which the kernel can take back under pressure, so rank 0 can deal out
    // a store larger than its memory; they are unmapped once dealt out.
    auto load = [&] {
        loaded l = load_inputs(o, true);
        whole = {l.triple_count(), l.bytes(), l.index_bytes(), l.load_seconds};
        return l;
    };
#if TACOMESH_WITH_MPI
    if (o.where.mpi) return rdf::with_sharded_cluster_on(tacomesh::mpi::config{}, load, std::forward<F>(fn));
#endif
    rdf::with_sharded_cluster_on(tacomesh::posix::config{.cores = cores, .mode = o.where.platform}, load, std::forward<F>(fn));
}

double megabytes(std::uint64_t bytes) { return double(bytes) / double(1 << 20); }

/// Each core's part of the sharded store beside the whole's, on stderr.
void report_shards(const std::vector<rdf::shard_stats>& parts, const whole_store& whole, const options& o) {
    std::fprintf(stderr, "whole store: %llu triples, %.1f MB (indexes %.1f MB); dealt out over %zu cores:\n",
                 (unsigned long long)whole.triples, megabytes(whole.bytes), megabytes(whole.index_bytes), parts.size());
    for (std::size_t k = 0; k < parts.size(); ++k) {
        const rdf::shard_stats& p = parts[k];
        std::fprintf(stderr, "  core %zu: %llu triples by subject, %llu by object, indexes %.1f MB, dictionary %.1f MB, "
                             "resident %.1f MB (peak %.1f MB)\n",
                     k, (unsigned long long)p.subject_triples, (unsigned long long)p.object_triples, megabytes(p.index_bytes),
                     megabytes(p.dictionary_bytes), megabytes(p.resident_bytes), megabytes(p.peak_resident_bytes));
    }
    if (!o.where.mpi && o.where.platform == rdf::execution_mode::threads)
        std::fprintf(stderr, "  (cores as threads share one process: each resident figure is the whole run's)\n");
}

/// A basic graph pattern over the store sharded across the cores.
int run_sharded_query(const options& o, const query_file& q) {
    if (!rdf::sparql::as_bgp_query(q.tree) || (o.format != "tsv" && o.format != "json"))
        throw std::runtime_error(shown_name(o.queries[0]) + ": --model shard answers basic graph patterns under SELECT "
                                                            "(with DISTINCT and LIMIT), as TSV or JSON");
    const taco::core_id cores = o.where.cores.value_or(default_cores());
    whole_store whole;
    on_shards(o, cores, whole, [&](rdf::sharded_cluster& c) {
        const auto t0 = std::chrono::steady_clock::now();
        const rdf::query_answer a = c.run(q.text, o.limits);
        const double seconds = since(t0);
        if (o.explain) {
            const rdf::query parsed = rdf::parse_query(q.text);
            explain(a, parsed, c.encode(parsed));
        }
        if (o.count) {
            std::printf("%zu\n", a.rows.rows());
        } else {
            // Each term's key from the core that keeps it.
            const rdf::spelled_rows rows = c.spell(a.rows);
            std::string out;
            if (o.format == "json") rdf::append_json(out, rows.rows, a.names, rows.dict());
            else rdf::append_tsv(out, rows.rows, a.names, rows.dict());
            std::fwrite(out.data(), 1, out.size(), stdout);
        }
        if (!o.quiet) {
            report_shards(c.stats(), whole, o);
            std::fprintf(stderr, "%zu rows in %.3f ms (sharded over %u cores)\n", a.rows.rows(), seconds * 1e3, c.cores());
        }
    });
    return 0;
}

int run_query_command(const options& o) {
    const query_file q = read_query(o.queries[0], o);
    if (o.mdl == model::shard) return run_sharded_query(o, q);
    const std::optional<rdf::query> bgp = rdf::sparql::as_bgp_query(q.tree);
    const bool algebra = !bgp || (o.format != "tsv" && o.format != "json");
    const taco::core_id cores = o.where.cores.value_or(1);
    const model m = o.mdl.value_or(cores > 1 ? model::data : model::single);
    // On one core a store file is read in place; the cores share a copy.
    loaded l = load_inputs(o, algebra || m == model::single);
    if (algebra) return run_algebra_query(o, q, l);
    const std::string& text = q.text;
    rdf::query_answer a;
    const bool tsv = !o.count && o.format != "json";
    std::string tsv_rows; // data-parallel: decoded by the workers
    bool split = false;
    std::vector<std::uint64_t> rows_per_core;
    std::vector<double> seconds_per_core;
    auto t0 = std::chrono::steady_clock::now();
    if (m == model::single) a = rdf::answer(rdf::prepare(*bgp, l.view(), 1, o.limits), l.view());
    else
        on_cluster(l.store, o, cores, [&](rdf::rdf_cluster& c) {
            c.limits(o.limits);
            t0 = std::chrono::steady_clock::now(); // the cores are up; the METIS partition is part of the first query
            rdf::tsv_sink sink;
            if (tsv) sink = [&](std::string_view s) { tsv_rows += s; };
            rdf::parallel_answer r = c.run_split(text, sink);
            split = r.split;
            rows_per_core = r.rows_per_core;
            seconds_per_core = r.seconds_per_core;
            a = std::move(r.answer);
        });
    const double seconds = since(t0);
    if (o.explain) {
        explain(a, text, l.view());
        // The deal's balance: a share much longer than the others is the split's latency.
        for (std::size_t k = 0; k < seconds_per_core.size(); ++k)
            std::fprintf(stderr, "  core %zu: %llu rows in %.3f ms\n", k, (unsigned long long)rows_per_core[k],
                         seconds_per_core[k] * 1e3);
    }
    if (o.count) {
        std::printf("%zu\n", a.rows.rows());
    } else {
        std::string out;
        if (!tsv) rdf::append_json(out, a.rows, a.names, l.view().dict);
        else if (m == model::single) rdf::append_tsv(out, a.rows, a.names, l.view().dict);
        else rdf::append_tsv_header(out, a.names);
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fwrite(tsv_rows.data(), 1, tsv_rows.size(), stdout);
    }
    const char* how = m == model::single ? "one core"
                      : split              ? "data-parallel, with partitioning the store"
                                           : "on core 0: too small to split";
    if (!o.quiet) std::fprintf(stderr, "%zu rows in %.3f ms (%s)\n", a.rows.rows(), seconds * 1e3, how);
    return 0;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string base_name(const std::string& p) { return p.substr(p.find_last_of('/') + 1); }

/// bench's report: each query's median time per model, as lines or JSON.
class bench_report {
public:
    bench_report(const options& o, const std::vector<std::string>& texts) : o_(o), texts_(texts) {}

    void header(std::uint64_t triples, std::size_t bytes, double load_seconds, taco::core_id cores) {
        std::snprintf(buf_, sizeof buf_, "{\"triples\":%llu,\"bytes_per_triple\":%.2f,\"load_seconds\":%.4f,\"cores\":%u,\"cpus\":%u,\"platform\":\"%s\"",
                      (unsigned long long)triples, double(bytes) / double(std::max<std::uint64_t>(1, triples)), load_seconds,
                      unsigned(cores), std::thread::hardware_concurrency(), platform_name(o_));
        json_ += buf_;
        if (cores > std::thread::hardware_concurrency() && !o_.quiet)
            std::fprintf(stderr, "note: %u cores on %u CPUs: oversubscribed, times are not speed-ups\n", unsigned(cores),
                         std::thread::hardware_concurrency());
    }

    /// Each query once untimed, then --runs timed: the median counts.
    template <class Run>
    void time_each(const char* label, Run&& run_one) {
        json_ += ",\"";
        json_ += label;
        json_ += "\":{\"queries\":[";
        double sum = 0;
        for (std::size_t i = 0; i < texts_.size(); ++i) {
            std::size_t rows = run_one(texts_[i]); // untimed
            std::vector<double> ms;
            for (std::uint64_t r = 0; r < o_.runs; ++r) {
                const auto t0 = std::chrono::steady_clock::now();
                rows = run_one(texts_[i]);
                ms.push_back(since(t0) * 1e3);
            }
            const double m = median(ms);
            sum += m;
            // The file name escaped: any name gives valid JSON.
            json_ += i ? ",{\"query\":" : "{\"query\":";
            rdf::detail::append_json_string(json_, base_name(o_.queries[i]));
            std::snprintf(buf_, sizeof buf_, ",\"rows\":%zu,\"median_ms\":%.4f}", rows, m);
            json_ += buf_;
            if (!o_.quiet && !o_.json)
                std::printf("%-6s %-12s %8zu rows %10.3f ms\n", label, base_name(o_.queries[i]).c_str(), rows, m);
        }
        std::snprintf(buf_, sizeof buf_, "],\"sum_ms\":%.4f}", sum);
        json_ += buf_;
        if (!o_.json) std::printf("%-6s sum of medians: %.3f ms\n", label, sum);
    }

    /// A member of the top object, written whole by the caller ("\"name\":value").
    void add(const std::string& member) { json_ += "," + member; }

    void finish() {
        json_ += "}\n";
        if (o_.json) std::fputs(json_.c_str(), stdout);
    }

private:
    const options& o_;
    const std::vector<std::string>& texts_;
    std::string json_;
    char buf_[512];
};

/// bench --model shard: the queries over the sharded store, and each core's part.
int run_sharded_bench(const options& o, const std::vector<std::string>& texts) {
    const taco::core_id cores = o.where.cores.value_or(default_cores());
    whole_store whole;
    on_shards(o, cores, whole, [&](rdf::sharded_cluster& c) {
        bench_report report(o, texts);
        report.header(whole.triples, whole.bytes, whole.load_seconds, c.cores());
        // The rows decoded to TSV on core 0, as the single-core loop has
        // them, each term's key fetched from the core that keeps it.
        std::string out;
        report.time_each("shard", [&](const std::string& t) {
            const rdf::query_answer a = c.run(t, o.limits);
            const rdf::spelled_rows rows = c.spell(a.rows);
            out.clear();
            rdf::append_tsv_rows(out, rows.rows, rows.dict());
            return a.rows.rows();
        });
        const auto parts = c.stats();
        std::string shards = "\"whole_store_bytes\":" + std::to_string(whole.bytes) + ",\"shards\":[";
        for (std::size_t k = 0; k < parts.size(); ++k) {
            const rdf::shard_stats& p = parts[k];
            shards += (k ? ",{" : "{") + std::string("\"subject_triples\":") + std::to_string(p.subject_triples) +
                      ",\"object_triples\":" + std::to_string(p.object_triples) + ",\"index_bytes\":" + std::to_string(p.index_bytes) +
                      ",\"dictionary_bytes\":" + std::to_string(p.dictionary_bytes) + ",\"resident_bytes\":" +
                      std::to_string(p.resident_bytes) + ",\"peak_resident_bytes\":" + std::to_string(p.peak_resident_bytes) + "}";
        }
        report.add(shards + "]");
        if (!o.quiet && !o.json) report_shards(parts, whole, o);
        report.finish();
    });
    return 0;
}

int run_bench_command(const options& o) {
    std::vector<std::string> texts;
    for (const auto& q : o.queries) texts.push_back(bgp_text(q, o));
    if (o.mdl == model::shard) return run_sharded_bench(o, texts);
    loaded l = load_inputs(o);
    const taco::core_id cores = o.where.cores.value_or(default_cores());
    const bool all = !o.mdl;
    bench_report report(o, texts);
    report.header(l.store.triple_count(), l.store.bytes(), l.load_seconds, cores);
    char buf[512];
    if (l.inference) {
        std::snprintf(buf, sizeof buf, "\"inference\":{\"added\":%llu,\"rounds\":%u,\"seconds\":%.4f}",
                      (unsigned long long)l.inference->added, l.inference->rounds, l.inference->seconds);
        report.add(buf);
    }
    if (all || o.mdl == model::single) {
        const rdf::store_view v = l.store.view();
        std::string out;
        report.time_each("single", [&](const std::string& t) { return rdf::answer_as_tsv(t, v, out, o.limits); });
    }
    if (all || o.mdl == model::data || o.mdl == model::task) {
        on_cluster(l.store, o, cores, [&](rdf::rdf_cluster& c) {
            c.limits(o.limits);
            if (all || o.mdl == model::data) {
                // The rows decoded to TSV, as the single-core loop has them,
                // read where the workers left them.
                std::size_t bytes = 0;
                const rdf::tsv_sink sink = [&](std::string_view s) { bytes += s.size(); };
                report.time_each("data", [&](const std::string& t) { return c.run_split(t, sink).answer.rows.rows(); });
            }
            if (all || o.mdl == model::task) {
                c.run_workload(texts, 1); // untimed
                const rdf::workload_result w = c.run_workload(texts, o.repeat);
                std::snprintf(buf, sizeof buf, "\"task\":{\"queries\":%llu,\"seconds\":%.4f,\"queries_per_second\":%.1f,\"runs_per_core\":[",
                              (unsigned long long)w.queries, w.seconds, double(w.queries) / w.seconds);
                std::string task = buf;
                for (std::size_t i = 0; i < w.runs.size(); ++i) task += (i ? "," : "") + std::to_string(w.runs[i]);
                report.add(task + "]}");
                if (!o.json)
                    std::printf("task   %llu queries on %u cores in %.3f s: %.0f queries/s\n", (unsigned long long)w.queries,
                                unsigned(cores), w.seconds, double(w.queries) / w.seconds);
            }
        });
    }
    report.finish();
    return 0;
}

int run_load_command(const options& o) {
    loaded l = load_inputs(o);
    rdf::save_store(l.store, *o.output);
    if (!o.quiet) std::fprintf(stderr, "wrote %s\n", o.output->c_str());
    return 0;
}

int run_serve_command(const options& o) {
    loaded l = load_inputs(o);
    rdf::serve::serve_options so;
    so.host = o.host;
    so.port = std::uint16_t(*o.port);
    so.cores = o.where.cores.value_or(std::max(1u, std::thread::hardware_concurrency()));
    so.platform = o.where.platform;
    so.limits = o.limits;
    so.base = o.base.value_or("");
    so.quiet = o.quiet;
    return rdf::serve::run_serve(l.store, so);
}

} // namespace

int main(int argc, char** argv) {
    const options o = parse(argc, argv);
    try {
        if (o.command == "load") return run_load_command(o);
        if (o.command == "query") return run_query_command(o);
        if (o.command == "parse") return run_parse_command(o);
        if (o.command == "serve") return run_serve_command(o);
        return run_bench_command(o);
    } catch (const rdf::load_error& e) {
        std::fprintf(stderr, "tacomesh-rdf: %s\n", e.what());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tacomesh-rdf: %s\n", e.what());
    }
    return 1;
}
