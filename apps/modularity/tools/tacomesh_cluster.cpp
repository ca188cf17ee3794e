// tacomesh-cluster: modularity clustering of a graph file on tacomesh cores.
// Run with --help for the options.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <limits>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <modularity/cluster.hpp>
#include <modularity/graph_reader.hpp>
#include <tacomesh/cli/options.hpp>
#include <tacomesh/posix/resident_memory.hpp>
#if TACOMESH_WITH_MPI
#include <tacomesh/mpi/platform.hpp>
#endif

namespace {

const char* usage_text = R"(usage: tacomesh-cluster [options] GRAPH

Finds a clustering of GRAPH's vertices with high modularity (Newman-Girvan Q),
on tacomesh cores sharing the graph through MESH shared objects.

GRAPH   METIS/DIMACS .graph, edge list .el (FROM TO [WEIGHT] per line; directed
        lines are symmetrised, w(u,v) = a(u,v) + a(v,u)), or Pajek .net; each may
        be gzip-compressed (.gz). --format overrides the file name's suffix.

options:
  --algorithm greedy|multilevel  greedy: globally greedy vertex moving, the MESH
                                 paper's algorithm (deterministic); multilevel:
                                 the best quality (default)
  --cores N                      cores to run on (default: the CPUs, at least 2)
  --platform threads|processes|mpi   cores as threads, or as processes with private
                                 memory (coherence by the controller) (default threads);
                                 mpi: one core per MPI rank, started by
                                 mpirun -np N tacomesh-cluster --platform mpi ...
                                 (--cores, if given, must be N)
  --controller none|broadcast|overlapped|timestamp   consistency controller (default timestamp)
  --maps dcm|ncm|wt|mix          memory of the shared maps: cached, non-cached,
                                 write-through, or mix: static graph cached,
                                 clustering write-through (default mix)
  --max-steps K                  greedy: stop after K moves (default: until no gain)
  --seed S                       random seed of the multilevel algorithm (default 1)
  --effort X                     multilevel: how hard to search (default 1): a gain
                                 below 0.001 / X ends a member's iterations and the rounds
                                 (half that the paced schedule's rounds), and graphs with
                                 n + m < 10000 get up to X * 30000 / (n + m) more rounds
                                 without one (1 to 64 in all; the search ends sooner once
                                 6 x X restarts found the best Q again); X > 1 runs the
                                 thorough schedule at every size (see --schedule)
  --ensemble K                   multilevel: members of the ensemble (default: one per
                                 core, at least 2, on graphs with n + m < 10000; 2 on
                                 bigger ones, so that memory does not grow with the cores)
  --schedule auto|thorough|paced|lean   multilevel: a member's work per round. thorough:
                                 multilevel iterations until one gains no more; paced:
                                 one iteration a round, and more rounds; lean: one
                                 iteration in round 0, then only local moving after each
                                 round's combination. auto (default): at --effort <= 1
                                 lean on graphs with n + m >= 100000, paced from 10000,
                                 else thorough
  --format metis|el|pajek        the file's format, if its name does not say
  --shared-memory BYTES          MESH shared memory to reserve, each of cached and
                                 non-cached (a number, or with K, M, G or T: 64G);
                                 address space, only what is used costs memory
                                 (default: from the graph's size, at least 1G;
                                 under mpi the platform's own)
  --output FILE                  write one cluster id per line, in vertex order
  --json                         print a JSON object on stdout instead of text
  --members                      also list each cluster's vertices (names from the file, else
                                 1-based numbers): the text lists the 20 largest clusters,
                                 up to 24 names each; with --json, "members" is an array
                                 of every cluster's names, element i the cluster that
                                 --output numbers i
  --quiet                        no progress line (it is shown only on a terminal anyway)
  --help                         this text
)";

constexpr tacomesh::cli::program me{"tacomesh-cluster", "(run tacomesh-cluster --help for the options)"};

[[noreturn]] void usage_error(const std::string& why) { tacomesh::cli::usage_error(me, why); }

struct cli {
    modularity::cluster_options run;
    tacomesh::cli::core_options where; ///< --cores, --platform (run.cores and run.platform follow it)
    std::string graph, output;
    std::optional<modularity::graph_format> format;
    bool json = false, quiet = false, members = false;
};

std::uint64_t number(const std::string& flag, const std::string& v) {
    std::size_t used = 0;
    unsigned long long x = 0;
    try {
        if (!v.empty() && v[0] == '-') throw std::invalid_argument("negative");
        x = std::stoull(v, &used);
    } catch (const std::exception&) {
        usage_error(flag + " needs a non-negative integer, not '" + v + "'");
    }
    if (used != v.size()) usage_error(flag + " needs a non-negative integer, not '" + v + "'");
    return x;
}

/// BYTES with an optional binary suffix: 4096, 512M, 64G, 2T.
std::uint64_t byte_count(const std::string& flag, const std::string& v) {
    std::string digits = v;
    int shift = 0;
    if (!digits.empty()) {
        switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        case 'T': shift = 40; break;
        }
        if (shift) digits.pop_back();
    }
    const std::uint64_t n = number(flag, digits.empty() ? v : digits);
    if (n == 0) usage_error(flag + " needs at least 1 byte, not '" + v + "'");
    if (n > (std::numeric_limits<std::uint64_t>::max() >> shift)) usage_error(flag + " " + v + ": too large");
    return n << shift;
}

cli parse(int argc, char** argv) {
    cli c;
    c.run.algo = modularity::algorithm::multilevel;
    const tacomesh::cli::core_option_readers readers{
        .cores = [](const std::string& flag, const std::string& v) {
            return taco::core_id(std::min<std::uint64_t>(number(flag, v), 1u << 20)); // check() bounds it
        },
        .controller = [&c](const std::string& v) { c.run.controller = modularity::parse_controller(v); },
    };
    for (int i = 1; i < argc; ++i) {
        if (tacomesh::cli::read_core_option(me, readers, argc, argv, i, c.where)) continue;
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        try {
            if (a == "--help" || a == "-h") {
                std::fputs(usage_text, stdout);
                std::exit(0);
            } else if (a == "--algorithm") c.run.algo = modularity::parse_algorithm(value());
            else if (a == "--maps") c.run.maps = modularity::parse_maps(value());
            else if (a == "--max-steps") c.run.max_steps = number(a, value());
            else if (a == "--seed") c.run.seed = number(a, value());
            else if (a == "--effort") {
                const std::string v = value();
                char* end = nullptr;
                c.run.effort = std::strtod(v.c_str(), &end);
                if (end == v.c_str() || *end || !(c.run.effort >= 0) || c.run.effort > 1e6)
                    usage_error("--effort needs a number from 0 to 1e6, not '" + v + "'");
            }
            else if (a == "--ensemble") {
                const std::uint64_t k = number(a, value());
                if (k < 1 || k > 1024) usage_error("--ensemble needs a member count from 1 to 1024");
                c.run.members = std::uint32_t(k);
            }
            else if (a == "--schedule") c.run.schedule = modularity::parse_schedule(value());
            else if (a == "--format") c.format = modularity::parse_format(value());
            else if (a == "--shared-memory") c.run.shared_memory = byte_count(a, value());
            else if (a == "--output") c.output = value();
            else if (a == "--json") c.json = true;
            else if (a == "--quiet") c.quiet = true;
            else if (a == "--members") c.members = true;
            else if (a.size() > 1 && a[0] == '-') usage_error("unknown option '" + a + "'");
            else if (!c.graph.empty()) usage_error("more than one graph file ('" + c.graph + "', '" + a + "')");
            else c.graph = a;
        } catch (const std::invalid_argument& e) {
            usage_error(e.what());
        }
    }
    if (c.graph.empty()) usage_error("no graph file given");
    tacomesh::cli::start_platform(me, c.where, c.quiet);
    c.run.cores = c.where.cores.value_or(taco::core_id(std::max(2u, std::thread::hardware_concurrency())));
    c.run.platform = c.where.platform; // under MPI, processes: what check() weighs, a view per core
    try {
        modularity::check(c.run);
    } catch (const std::invalid_argument& e) {
        usage_error(e.what());
    }
    return c;
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char ch : s) {
        if (ch == '"' || ch == '\\') out += '\\', out += char(ch);
        else if (ch < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", ch);
            out += buf;
        } else out += char(ch);
    }
    return out + "\"";
}

/// The vertices of each cluster, by cluster id, each in vertex order.
std::vector<std::vector<modularity::vertex>> members_of(const std::vector<modularity::cluster>& of) {
    std::vector<std::vector<modularity::vertex>> members;
    for (modularity::vertex v = 0; v < of.size(); ++v) {
        if (of[v] >= members.size()) members.resize(of[v] + 1);
        members[of[v]].push_back(v);
    }
    return members;
}

/// The clusters, largest first, with their vertices' names, capped so that
/// a big graph prints a readable summary (--json lists them all).
void print_members(const modularity::graph_data& g, const std::vector<modularity::cluster>& of) {
    auto members = members_of(of);
    std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    constexpr std::size_t max_clusters = 20, max_names = 24;
    for (std::size_t c = 0; c < members.size() && c < max_clusters; ++c) {
        std::printf("  cluster %zu (%zu):", c + 1, members[c].size());
        for (std::size_t i = 0; i < members[c].size() && i < max_names; ++i) std::printf(" %s", g.name(members[c][i]).c_str());
        std::printf("%s\n", members[c].size() > max_names ? " ..." : "");
    }
    if (members.size() > max_clusters) std::printf("  ... and %zu smaller clusters\n", members.size() - max_clusters);
}

/// ", \"members\": [[names of cluster 0], ...]": every cluster and every
/// vertex, uncapped (a program reads it), by cluster id: members[i] are the
/// vertices --output gives id i, so the two agree.
void print_json_members(const modularity::graph_data& g, const std::vector<modularity::cluster>& of) {
    std::fputs(", \"members\": [", stdout);
    const auto members = members_of(of);
    for (std::size_t c = 0; c < members.size(); ++c) {
        std::fputs(c ? ", [" : "[", stdout);
        for (std::size_t i = 0; i < members[c].size(); ++i) {
            if (i) std::fputs(", ", stdout);
            std::fputs(json_string(g.name(members[c][i])).c_str(), stdout);
        }
        std::fputc(']', stdout);
    }
    std::fputc(']', stdout);
}

/// A progress line on stderr, at most every 100 ms, when it is a terminal.
class progress_line {
public:
    explicit progress_line(bool on) : on_(on) {}
    void operator()(const std::string& text) {
        if (!on_) return;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_ < std::chrono::milliseconds(100)) return;
        last_ = now;
        std::fprintf(stderr, "\r\033[K%s", text.c_str());
        shown_ = true;
    }
    bool enabled() const noexcept { return on_; }
    void clear() {
        if (shown_) std::fprintf(stderr, "\r\033[K");
        shown_ = false;
    }

private:
    bool on_;
    bool shown_ = false;
    std::chrono::steady_clock::time_point last_{};
};

const char* platform_name(const cli& c) { return c.where.platform_name(); }

/// On the platform the options name. On MPI every rank gets here with the
/// graph it read; rank 0 runs the search (on its core 0) and returns, the
/// others serve its cores and end with its program.
/// g's edges are freed once the graph is in MESH (its names are kept: the
/// members' listing reads them).
modularity::cluster_result run([[maybe_unused]] const cli& c, modularity::graph_data&& g,
                               const modularity::cluster_options& o) {
#if TACOMESH_WITH_MPI
    if (c.where.mpi) {
        tacomesh::mpi::run_report report;
        tacomesh::mpi::config cfg{.report = &report};
        // Only when asked: the ranks' windows are memory, not address space alone.
        if (o.shared_memory) cfg.cached_bytes = o.shared_memory;
        modularity::cluster_result r = modularity::cluster_graph_on(cfg, g, o);
        r.oversubscribed = report.oversubscribed;
        return r;
    }
#endif
    return modularity::cluster_graph(std::move(g), o);
}

} // namespace

int main(int argc, char** argv) {
    const cli c = parse(argc, argv);
    progress_line progress(!c.quiet && ::isatty(STDERR_FILENO));
    try {
        const auto t0 = std::chrono::steady_clock::now();
        modularity::read_options ro;
        ro.progress = [&](std::uint64_t bytes) { progress("reading " + c.graph + ": " + std::to_string(bytes >> 20) + " MiB"); };
        modularity::graph_data g = modularity::read_graph(c.graph, c.format, ro);
        const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        progress.clear();
        // The run frees g's edges once they are in MESH (a third of its peak
        // memory on big graphs): what is reported of the graph, now.
        const modularity::vertex vertices = g.vertex_count();
        const std::size_t edges = g.undirected_edge_count();
        const modularity::edge directed_edges = g.edge_count();
        const std::uint64_t shared_memory_needed = modularity::shared_memory_for(g);
        const bool weighted = g.weighted;

        modularity::cluster_options o = c.run;
        // Only when the line is shown: the greedy search reads the
        // clustering once more per step for it.
        if (progress.enabled()) o.progress = [&](std::uint64_t steps, double q, modularity::vertex k) {
            char buf[128];
            std::snprintf(buf, sizeof buf, "step %llu: Q = %.6f, %u clusters", static_cast<unsigned long long>(steps), q, k);
            progress(buf);
        };
        modularity::cluster_result r;
        try {
            r = run(c, std::move(g), o);
        } catch (const std::exception& e) {
            // MESH names the platform's config.cached_bytes, which the CLI
            // sets from the graph or --shared-memory: say that instead (the
            // error may come from another core, its text cut short).
            const std::string what = e.what();
            if (what.find("mesh: out of ") == std::string::npos) throw;
            progress.clear();
            std::fprintf(stderr,
                         "tacomesh-cluster: out of MESH shared memory for %s (%u vertices, %u directed edges): the "
                         "run reserved %llu bytes of cached and of non-cached memory%s; give more with "
                         "--shared-memory BYTES (e.g. --shared-memory %lluG)\n  (%s)\n",
                         c.graph.c_str(), vertices, directed_edges,
                         static_cast<unsigned long long>(o.shared_memory ? o.shared_memory
                                                                         : shared_memory_needed),
                         o.shared_memory ? " (--shared-memory)" : ", sized from the graph",
                         static_cast<unsigned long long>(
                             4 * std::max(o.shared_memory, shared_memory_needed) >> 30),
                         what.c_str());
            return 1;
        }
        progress.clear();

        if (!c.output.empty()) {
            std::ofstream out(c.output);
            for (auto id : r.assignment) out << id << '\n';
            out.flush();
            if (!out) throw std::runtime_error("cannot write " + c.output + ": " + std::strerror(errno));
        }
        if (c.json) {
            std::printf("{\"graph\": %s, \"vertices\": %u, \"edges\": %zu, \"weighted\": %s, \"algorithm\": \"%s\", "
                        "\"cores\": %u, \"platform\": \"%s\", \"controller\": \"%s\", \"maps\": \"%s\", "
                        "\"seed\": %llu, \"modularity\": %.10f, \"clusters\": %u, \"steps\": %llu, "
                        "\"converged\": %s, \"seconds\": %.6f, \"load_seconds\": %.6f, \"oversubscribed\": %s, "
                        "\"peak_rss_bytes\": %llu, \"ensemble\": %u",
                        json_string(c.graph).c_str(), vertices, edges,
                        weighted ? "true" : "false", modularity::name(o.algo), o.cores, platform_name(c),
                        modularity::name(o.controller), modularity::name(o.maps),
                        static_cast<unsigned long long>(o.seed), r.modularity, r.clusters,
                        static_cast<unsigned long long>(r.steps), r.converged ? "true" : "false", r.seconds,
                        load_seconds, r.oversubscribed ? "true" : "false",
                        static_cast<unsigned long long>(tacomesh::posix::peak_resident_bytes()), r.members);
            if (o.algo == modularity::algorithm::multilevel)
                std::printf(", \"schedule\": \"%s\", \"iterations\": %llu, \"members_on\": \"%s\"",
                            modularity::name(r.schedule), static_cast<unsigned long long>(r.iterations),
                            r.on_core0 ? "core 0" : "own cores");
            if (c.members) print_json_members(g, r.assignment);
            std::fputs("}\n", stdout);
        } else {
            std::printf("graph: %s: %u vertices, %zu edges%s (read in %.3f s)\n", c.graph.c_str(), vertices,
                        edges, weighted ? ", weighted" : "", load_seconds);
            const bool greedy = o.algo == modularity::algorithm::greedy;
            std::printf("%s on %u cores (%s%s, controller %s, maps %s): %llu %s%s\n", modularity::name(o.algo),
                        o.cores, platform_name(c), r.oversubscribed ? ", oversubscribed" : "",
                        modularity::name(o.controller), modularity::name(o.maps),
                        static_cast<unsigned long long>(r.steps), greedy ? "moves" : "rounds",
                        !greedy ? "" : r.converged ? ", converged" : ", stopped at --max-steps");
            std::printf("modularity Q = %.4f with %u clusters, in %.3f s%s\n", r.modularity, r.clusters, r.seconds,
                        c.output.empty() ? "" : (", clusters written to " + c.output).c_str());
            if (c.members) print_members(g, r.assignment);
        }
        return 0;
    } catch (const std::exception& e) {
        progress.clear();
        std::fprintf(stderr, "tacomesh-cluster: %s\n", e.what());
        return 1;
    }
}
