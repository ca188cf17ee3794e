// scc_figures: the papers' 48-core figures on the emulated SCC, in modelled
// cycles of an 800 MHz core (platforms/scc/README.md, "The figures"):
//
//   CCI paper, Figure 2   round trip of a sync call, polling and with hlt
//   CCI paper, Figure 4   reduce over 2..48 cores, polling (and with hlt at 48;
//                         in the tables, hlt with the interrupt raised before
//                         the message too, the paper's section V)
//   MESH paper, Figure 6  world trade (66 vertices), globally greedy vertex
//                         moving to convergence, Broadcast controller, maps
//                         DCM, NCM, WT and Mix: speed-up against 1-core DCM
//   RDF paper, Figure 1   task-parallel LUBM queries of small footprint (the
//                         paper's ST model), a master and n - 1 workers:
//                         speed-up against 1 core
//
// and, with --set, the other figures of the MESH paper:
//
//   --set memory    Figure 4 (uncached reads by 1..48 cores of one memory
//                   controller, and of all four) and Figure 5 (the L2 flush
//                   routine over 1..128 lines, clean and modified, and the
//                   whole cache): the prices the model rests on, shown as it
//                   gives them back
//   --set patents   Figure 7: the first moves of the greedy search on a graph
//                   large enough that a move's work outweighs the flushes
//                   (the paper: NBER patents, 240 547 vertices, 500 moves;
//                   here cond-mat, 16 726 vertices, --graph and --moves to
//                   change), DCM, NCM, WT and Mix: speed-up against 1-core DCM
//
//   --set beyond    the same chip made bigger (emulated::grid: --mesh, default
//                   16x8 and 32x16 tiles of two cores, 256 and 1024 cores):
//                   the reduce over all cores, world trade and the RDF task
//                   pool on all of them, beside the SCC's 48
//
//   scc_figures [--set papers|memory|patents|beyond] [--quick] [--json] [--order host|modelled]
//               [--modularity-data DIR] [--rdf-data DIR] [--repeat N] [--graph FILE] [--moves N]
//               [--mesh XxY[,XxY...]] [--in-process]
//
// --quick: fewer rounds of the round trip and the reduce (4 minutes on 2 host CPUs);
// --json: one JSON object on stdout (the keys below), nothing else.
// modelled_cycles_spread: the largest relative difference of modelled
// cycles between two identical runs of the same experiment (each of round
// trip, reduce at 48, world trade Mix at 15 and DCM at 48, RDF at 48 runs
// twice). --order: the emulated cores run in modelled-time order (the
// default: the cycles then do not depend on the host's load) or as the
// host schedules them (faster; emulated/time_order.hpp says what differs;
// the round trips, the calibration's target, are in modelled order always).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include <sys/personality.h>
#include <unistd.h>

#include <modularity/greedy.hpp>
#include <modularity/variants.hpp>
#include <modularity/graph_reader.hpp>
#include <rdf/engine.hpp>
#include <rdf/lubm_scale.hpp>
#include <tacomesh/scc/emulated/experiments.hpp>
#include <tacomesh/scc/emulated/fresh_process.hpp>

namespace scc = tacomesh::scc::emulated;

namespace {

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class figure_set { papers, memory, patents, beyond };

struct options {
    figure_set set = figure_set::papers;
    bool quick = false, json = false, in_process = false;
    scc::core_order order = scc::core_order::modelled;
    std::string modularity_data = MODULARITY_DATA, rdf_data = RDF_DATA;
    std::optional<std::uint64_t> repeat; ///< RDF: the query list's copies in the pool
    std::string graph;                   ///< --set patents (default: cond-mat from modularity_data)
    std::optional<std::uint64_t> moves;  ///< --set patents
    std::vector<tacomesh::scc::chip_shape> meshes; ///< --set beyond (empty: 16x8 and 32x16)
};

const char* usage_text =
    "usage: scc_figures [--set papers|memory|patents|beyond] [--quick] [--json] [--order host|modelled]\n"
    "                   [--modularity-data DIR] [--rdf-data DIR] [--repeat N] [--graph FILE] [--moves N]\n"
    "                   [--mesh XxY[,XxY...]] [--in-process]\n"
    "  the CCI, MESH and RDF papers' 48-core figures on the emulated SCC, in modelled cycles\n"
    "  --set              papers (default): CCI Fig. 2 and 4, MESH Fig. 6, RDF Fig. 1;\n"
    "                     memory: MESH Fig. 4 and 5 (the controllers' queues, the L2 flush);\n"
    "                     patents: MESH Fig. 7 (the greedy search's first moves on a larger graph)\n"
    "  --quick            fewer rounds of the round trip and the reduce (4 minutes on 2 CPUs);\n"
    "                     patents: 20 moves at 1, 8 and 48 cores; beyond: world trade's DCM and Mix only\n"
    "  --json             print one JSON object and nothing else\n"
    "  --order            the emulated cores' host threads run in modelled-time order (default: modelled),\n"
    "                     or as the host schedules them (host: faster, the cycles vary with the host's load;\n"
    "                     the round trips, which the calibration fits, stay in modelled order)\n"
    "  --modularity-data  the directory of WorldImport1999.el (default: the repository's)\n"
    "  --rdf-data         the directory of lubm1-inferred.nt.gz and queries/ (default: the repository's)\n"
    "  --repeat N         RDF: copies of the small-footprint queries in the task pool (default 100, as the paper)\n"
    "  --graph FILE       patents: the graph (default: cond-mat.graph.gz of --modularity-data)\n"
    "  --moves N          patents: the moves measured (default 100; --quick 20; the paper: 500)\n"
    "  --mesh XxY[xC],... beyond: the chips, X x Y tiles of C cores (default 2), the MPB per core and\n"
    "                     the memory controllers as emulated::grid sizes them (default 16x8,32x16)\n"
    "  --in-process       run every experiment in this process, with address randomisation as the\n"
    "                     system sets it (default: each in a child forked from the same state, without\n"
    "                     randomisation, so that two runs give the same cycles)\n";

std::uint64_t count(std::string_view option, const std::string& v) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end || v[0] == '-' || n == 0 || n > 100000)
        throw usage_error(std::string(option) + " " + v + ": a whole number from 1 to 100000");
    return n;
}

/// --mesh: "16x8,32x16x2".
std::vector<tacomesh::scc::chip_shape> meshes(const std::string& v) {
    std::vector<tacomesh::scc::chip_shape> out;
    std::size_t at = 0;
    while (at <= v.size()) {
        const std::size_t end = std::min(v.find(',', at), v.size());
        const std::string one = v.substr(at, end - at);
        unsigned x = 0, y = 0, c = tacomesh::scc::cores_per_tile;
        char tail = 0;
        const int n = std::sscanf(one.c_str(), "%ux%u%c", &x, &y, &tail);
        if (n == 3 && (tail != 'x' || std::sscanf(one.c_str(), "%ux%ux%u%c", &x, &y, &c, &tail) != 3))
            throw usage_error("--mesh " + one + ": X x Y tiles, as 16x8, or 16x8x2 with the cores per tile");
        if (n < 2 || x == 0 || y == 0 || c == 0 || x > 1024 || y > 1024 || c > 64)
            throw usage_error("--mesh " + one + ": X x Y tiles, as 16x8, or 16x8x2 with the cores per tile");
        const tacomesh::scc::chip_shape shape = scc::grid(x, y, c);
        if (const std::string e = scc::shape_error(shape, shape.cores()); !e.empty())
            throw usage_error("--mesh " + one + ": " + e);
        out.push_back(shape);
        at = end + 1;
    }
    return out;
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw usage_error(std::string(a) + " needs a value");
            return argv[++i];
        };
        if (a == "--quick") o.quick = true;
        else if (a == "--set") {
            const std::string v = value();
            if (v == "papers") o.set = figure_set::papers;
            else if (v == "memory") o.set = figure_set::memory;
            else if (v == "patents") o.set = figure_set::patents;
            else if (v == "beyond") o.set = figure_set::beyond;
            else throw usage_error("--set " + v + ": papers, memory, patents or beyond");
        }
        else if (a == "--graph") o.graph = value();
        else if (a == "--mesh") o.meshes = meshes(value());
        else if (a == "--in-process") o.in_process = true;
        else if (a == "--json") o.json = true;
        else if (a == "--order") {
            const std::string v = value();
            if (v == "host") o.order = scc::core_order::host;
            else if (v == "modelled") o.order = scc::core_order::modelled;
            else throw usage_error("--order " + v + ": host or modelled");
        }
        else if (a == "--modularity-data") o.modularity_data = value();
        else if (a == "--rdf-data") o.rdf_data = value();
        else if (a == "--repeat") o.repeat = count(a, value());
        else if (a == "--moves") o.moves = count(a, value());
        else if (a == "--help" || a == "-h") {
            std::fputs(usage_text, stdout);
            std::exit(0);
        } else throw usage_error("unknown option '" + std::string(a) + "'");
    }
    return o;
}

/// Progress on stderr (stdout is the result).
template <class... A>
void note(const options& o, const char* fmt, A... a) {
    if (o.json) return;
    std::fprintf(stderr, fmt, a...);
    std::fflush(stderr);
}

// ---- repeatable runs ----
//
// Modelled-time order makes the cycles independent of the host's
// scheduling, but loads and stores of private data are priced at their
// host addresses, and which lines share a cache set moves with them: with
// the addresses a run's heap and stacks get under address-space layout
// randomisation, and with the heap's history (the blocks earlier runs
// freed). Measured on one core's world trade (WT): 69.35-69.59 M cycles in
// separate processes, 69.40-70.08 M in three runs in one process. So
// scc_figures runs with randomisation off (it re-executes itself as
// `setarch -R` would) and each experiment in a child process forked from
// the same state, with an arena of malloc's per core thread and large
// blocks taken from the arenas rather than mmap (no two threads'
// allocations interleave in one arena, whose addresses are aligned to
// 64 MB: a thread's blocks land at the same offsets in every run; core 0
// too runs on a new thread, as the main arena holds what this process
// allocated between the forks). Two runs then give the same cycles on one
// core, and within about 0.1 % on many (some of the runtime's steps still
// follow the host's order).

/// Re-execute this program with address randomisation off, once; false if
/// that cannot be done (the runs then vary a little, as before).
bool without_randomisation(char** argv) {
    const int current = personality(0xffffffff);
    if (current == -1) return false;
    if (current & ADDR_NO_RANDOMIZE) return true;
    if (personality(static_cast<unsigned long>(current) | ADDR_NO_RANDOMIZE) == -1) return false;
    execv("/proc/self/exe", argv); // returns only on failure
    (void)personality(static_cast<unsigned long>(current));
    return false;
}

bool in_process = false; ///< --in-process: every experiment in this process (to see what isolation buys)

/// f() in a child forked from this process (fresh_process.hpp): the
/// experiment's threads start on heaps of their own. Its exceptions become
/// ours. (Runs to compare with each other: rdf_tasks.)
template <class F>
auto isolated(F&& f) -> std::invoke_result_t<F&> {
    return in_process ? f() : scc::in_fresh_process(f);
}

// ---- the experiments ----

/// The chip's prices with cycles_per_block fitted to the round trip in this
/// build (run() sets it first): every experiment's configuration.
scc::cost_model costs{};
scc::core_order order = scc::core_order::modelled; ///< --order
tacomesh::scc::chip_shape shape{}; ///< the chip the experiments run on (--set beyond changes it)
scc::config chip(taco::core_id cores, scc::idle_policy idle = scc::idle_policy::poll) {
    return {.cores = cores, .shape = shape, .idle = idle, .costs = costs, .order = order};
}

/// Waits that went ahead of the modelled order make a run's cycles follow
/// the host: said on stderr, whatever the output format.
void warn_out_of_order(const scc::run_report& report, const char* what, taco::core_id cores) {
    if (report.order_timeouts)
        std::fprintf(stderr, "scc_figures: %llu wait(s) of %s at %u cores went ahead of the modelled order\n",
                     (unsigned long long)report.order_timeouts, what, unsigned(cores));
}

/// The greedy search, compiled here rather than taken from the modularity
/// library: its code runs on the emulated cores and must be counted
/// (tacomesh::scc_counted), and only the Broadcast variants are needed.
/// What the figures need of a search (its result's vectors stay in the child).
struct search_run {
    std::uint64_t steps = 0, ticks = 0;
    std::uint64_t order_timeouts = 0; ///< waits that went ahead out of modelled order (the cycles then follow the host)
};

template <mesh::map_memory G, mesh::map_memory M>
search_run greedy_on(const modularity::graph_data& g, taco::core_id cores, std::optional<std::uint64_t> moves) {
    return isolated([&] {
        search_run out;
        scc::run_report report;
        scc::config cfg = chip(cores);
        cfg.report = &report;
        taco::run(cfg, [&] {
            // The steps' modelled cycles, without building the graph in shared memory.
            const modularity::greedy_result r = modularity::greedy_search<G, M, mesh::controllers::broadcast>(
                g, {.max_steps = moves, .progress = {}, .ticks = &scc::cycles, .data_consumed = {}});
            out = {r.steps, r.ticks, 0};
        });
        out.order_timeouts = report.order_timeouts;
        warn_out_of_order(report, "the greedy search", cores);
        return out;
    });
}

/// The greedy search with one of the paper's map variants (to convergence,
/// or `moves` moves).
search_run search(const modularity::graph_data& g, modularity::maps_kind maps, taco::core_id cores,
                  std::optional<std::uint64_t> moves = {}) {
    using mesh::map_memory;
    using modularity::maps_kind;
    return maps == maps_kind::dcm   ? greedy_on<map_memory::dcm, map_memory::dcm>(g, cores, moves)
           : maps == maps_kind::ncm ? greedy_on<map_memory::ncm, map_memory::ncm>(g, cores, moves)
           : maps == maps_kind::wt  ? greedy_on<map_memory::wt, map_memory::wt>(g, cores, moves)
                                    : greedy_on<map_memory::dcm, map_memory::wt>(g, cores, moves); // Mix
}

std::uint64_t world_trade(const modularity::graph_data& g, modularity::maps_kind maps, taco::core_id cores) {
    const search_run r = search(g, maps, cores);
    if (r.steps != 63 && r.steps != 64)
        throw std::runtime_error("world trade took " + std::to_string(r.steps) +
                                 " moves, not the paper's 64 (63 and a last that finds none to make)");
    return r.ticks;
}

/// Modelled cycles of the RDF task pool at each of `cores`, each run in a
/// child process forked, with the others, from the same state of this one
/// (in_fresh_processes): forked one at a time, the second run at 48 cores
/// differed from the first by what this process had allocated between.
std::vector<std::uint64_t> rdf_tasks(rdf::store& s, const std::vector<std::string>& queries,
                                     std::span<const taco::core_id> cores, std::uint64_t repeat) {
    auto one = [&](taco::core_id n) {
        std::uint64_t cycles = 0;
        scc::run_report report;
        scc::config cfg = chip(n);
        cfg.report = &report;
        rdf::with_cluster_on(cfg, s, [&](rdf::rdf_cluster& c) {
            // As the paper ran it: a master that hands out queries and n - 1
            // workers (one core: the master answers them all).
            const bool master_works = n == 1;
            c.run_workload(queries, 1, master_works); // every worker's first touch of the store
            const std::uint64_t before = scc::cycles();
            (void)c.run_workload(queries, repeat, master_works);
            cycles = scc::cycles() - before;
        });
        warn_out_of_order(report, "the RDF task pool", n);
        if (std::getenv("SCC_FIGURES_MEMORY"))
            for (std::size_t k = 0; k < report.memory.size() && k < 3; ++k) {
                const scc::memory_counts& m = report.memory[k];
                std::fprintf(stderr, "    core %zu: %llu cycles, loads %llu stores %llu, L1 %llu L2 %llu, dram reads %llu writes %llu, write-backs %llu, queued %llu\n",
                             k, (unsigned long long)report.cycles[k], (unsigned long long)m.loads, (unsigned long long)m.stores,
                             (unsigned long long)m.l1_hits, (unsigned long long)m.l2_hits, (unsigned long long)m.dram_reads,
                             (unsigned long long)m.dram_writes, (unsigned long long)m.write_backs, (unsigned long long)m.queued_cycles);
            }
        return cycles;
    };
    if (!in_process) return scc::in_fresh_processes(cores, one);
    std::vector<std::uint64_t> out;
    for (taco::core_id n : cores) out.push_back(one(n));
    return out;
}

std::uint64_t rdf_task(rdf::store& s, const std::vector<std::string>& queries, taco::core_id cores,
                       std::uint64_t repeat) {
    return rdf_tasks(s, queries, std::span<const taco::core_id>(&cores, 1), repeat).front();
}

/// LUBM(1), parsed by one thread: the store's term numbers follow how many
/// parsers shared the file (each numbers its own terms, merged after), and
/// the queries' work follows the numbers, so a load sized by the host's CPUs
/// (two here, one under taskset) gave the task pool other cycles (26.5x or
/// 28.6x at 48 cores).
rdf::store lubm1(const options& o) {
    rdf::store s;
    rdf::load_options one;
    one.threads = 1;
    s.load_file(o.rdf_data + "/lubm1-inferred.nt.gz", one);
    return s;
}

/// The RDF paper's ST model (section IV.E.1): the queries of small I/O
/// footprint, the task pool their list `repeat` times over (the paper: 100).
/// --quick too: with fewer copies the last queries' imbalance, not the
/// chip, would set the speed-up (47 workers share 1,000 queries).
constexpr std::uint64_t paper_repeat = 100;

/// The small-footprint queries of `all`. The paper measured a query's I/O
/// footprint with iostat after dropping the file cache; an in-memory store
/// has none, so a query's serial modelled cycles (on one core, caches warm)
/// stand for it: in the paper's Table II the small queries were also the
/// fast ones (LUBM 1.4-3.5 s serial against 207-300 s). Small: the queries
/// below the largest ratio between two neighbours in the sorted costs (the
/// paper's split between its two classes is a ratio of about 20 in
/// footprint). A rule over the queries' own costs, never over a speed-up.
std::vector<std::string> small_footprint(const options& o, rdf::store& s, const std::vector<std::string>& all) {
    std::vector<std::pair<std::uint64_t, std::size_t>> cost; // serial cycles, query
    for (std::size_t q = 0; q < all.size(); ++q) cost.emplace_back(rdf_task(s, {all[q]}, 1, 1), q);
    std::sort(cost.begin(), cost.end());
    std::size_t split = cost.size();
    double widest = 0;
    for (std::size_t i = 1; i < cost.size(); ++i)
        if (const double r = double(cost[i].first) / double(std::max<std::uint64_t>(cost[i - 1].first, 1)); r > widest) {
            widest = r;
            split = i;
        }
    std::vector<std::string> small;
    note(o, "  serial cycles per query (small footprint: below the widest gap, %.1fx):\n   ", widest);
    for (std::size_t i = 0; i < cost.size(); ++i) {
        note(o, " %sq%zu %llu", i == split ? "| " : "", cost[i].second + 1, (unsigned long long)cost[i].first);
        if (i < split) small.push_back(all[cost[i].second]);
    }
    note(o, "\n");
    return small;
}

// ---- output ----

struct figures {
    std::uint64_t round_trip_poll = 0, round_trip_halt = 0, reduce48_halt = 0;
    /// idle_policy::halt_overlapped (tables only: the JSON has the paper's keys)
    std::uint64_t round_trip_overlapped = 0, reduce48_overlapped = 0;
    std::map<taco::core_id, std::uint64_t> reduce_poll;
    std::map<std::string, std::map<taco::core_id, double>> worldtrade; ///< speed-ups
    std::map<taco::core_id, double> rdf;                               ///< speed-ups
    double spread = 0;
};

std::string number(double x) {
    char b[64];
    std::snprintf(b, sizeof b, "%.4g", x);
    return b;
}
std::string number(std::uint64_t x) { return std::to_string(x); }
template <class Map>
std::string object(const Map& m) {
    std::string s = "{";
    for (const auto& [k, v] : m) s += (s.size() > 1 ? ", \"" : "\"") + std::to_string(k) + "\": " + number(v);
    return s + "}";
}

void print_json(const figures& f) {
    std::string s = "{\"round_trip_cycles\": {\"polling\": " + std::to_string(f.round_trip_poll) +
                    ", \"halting\": " + std::to_string(f.round_trip_halt) + "},\n";
    s += " \"reduce48_cycles\": {\"polling\": " + std::to_string(f.reduce_poll.at(48)) +
         ", \"halting\": " + std::to_string(f.reduce48_halt) + "},\n";
    s += " \"reduce_cycles_polling\": " + object(f.reduce_poll) + ",\n";
    s += " \"worldtrade_speedup\": {";
    bool first = true;
    for (const char* v : {"dcm", "ncm", "wt", "mix"}) {
        s += std::string(first ? "" : ",\n                        ") + "\"" + v + "\": " + object(f.worldtrade.at(v));
        first = false;
    }
    s += "},\n \"rdf_task_speedup\": " + object(f.rdf) + ",\n";
    s += " \"modelled_cycles_spread\": " + number(f.spread) + "}\n";
    std::fputs(s.c_str(), stdout);
}

void print_tables(const figures& f) {
    std::printf("CCI paper, Figure 2: round trip (cycles)   polling %llu (paper ~2000), hlt %llu (paper ~3000)\n",
                (unsigned long long)f.round_trip_poll, (unsigned long long)f.round_trip_halt);
    std::printf("CCI paper, Figure 4: reduce (cycles), polling:");
    for (const auto& [n, c] : f.reduce_poll) std::printf("  %u: %llu", n, (unsigned long long)c);
    std::printf("   (paper at 48: 11000; hlt: %llu, paper 14000)\n", (unsigned long long)f.reduce48_halt);
    std::printf("  hlt, the interrupt raised before the message (CCI paper, section V: the latency \"nearly completely\" "
                "hidden): round trip %llu, reduce at 48 %llu\n",
                (unsigned long long)f.round_trip_overlapped, (unsigned long long)f.reduce48_overlapped);
    std::printf("MESH paper, Figure 6: world trade speed-up against 1-core DCM (paper: Mix 7 at 15, WT 6 at 13-14)\n");
    for (const auto& [v, row] : f.worldtrade) {
        std::printf("  %-4s", v.c_str());
        for (const auto& [n, x] : row) std::printf("  %u: %.2f", n, x);
        std::printf("\n");
    }
    std::printf("RDF paper, Figure 1: task-parallel LUBM speed-up (paper: 32.7 at 48)\n ");
    for (const auto& [n, x] : f.rdf) std::printf("  %u: %.2f", n, x);
    std::printf("\nmodelled cycles of two identical runs differ by at most %.2f%%\n", 100 * f.spread);
}


double relative_difference(double a, double b) { return a == b ? 0 : std::abs(a - b) / std::max(a, b); }

/// Every set's first step: the price of a block, fitted to the round trip
/// in this build (the one fitted parameter), and the order of the cores.
void calibrate(const options& o) {
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    note(o, "emulated cores run as host threads: up to 48 on %u host CPUs (oversubscribed), %s\n", cpus,
         o.order == scc::core_order::modelled ? "in modelled-time order" : "as the host schedules them");

    note(o, "calibration: the price of a counted block from the round trip ...\n");
    const scc::calibration cal = isolated([] { return scc::calibrated(); });
    costs = cal.costs;
    order = o.order;
    note(o, "  without computation %llu / %llu cycles polling / halting, %.0f / %.0f blocks on the path: "
            "%.2f cycles per block\n",
         (unsigned long long)cal.fixed_polling, (unsigned long long)cal.fixed_halting, cal.blocks_polling,
         cal.blocks_halting, costs.cycles_per_block);
}

/// --set memory: MESH paper, Figures 4 and 5.
int run_memory(const options& o) {
    calibrate(o);
    const int reads = o.quick ? 500 : 2000;
    std::map<taco::core_id, double> one, four;
    note(o, "MESH paper, Figure 4: uncached reads, mean cycles of one (paper: flat to 3 readers of a "
            "controller, then linear; 12 cores fill the four)\n  readers  one controller  four controllers\n");
    for (taco::core_id n : {1u, 2u, 3u, 4u, 5u, 6u, 8u, 10u, 12u, 16u, 24u, 32u, 48u}) {
        one[n] = isolated([&] { return scc::uncached_read_cycles(chip(n), reads); });
        four[n] = isolated([&] { return scc::uncached_read_cycles(chip(n), reads, true); });
        note(o, "  %7u  %14.1f  %16.1f\n", n, one[n], four[n]);
    }
    std::map<std::uint64_t, std::uint64_t> clean, modified;
    note(o, "MESH paper, Figure 5: the L2 flush routine (paper: about 300 N + 7 500 cycles for N lines, 47 100 "
            "for a 4 KB page, 582 000 for the whole cache, a modified line about 80 more)\n  lines  clean  modified\n");
    for (std::uint64_t n : {1u, 2u, 4u, 8u, 16u, 32u, 64u, 128u}) {
        clean[n] = isolated([&] { return scc::flush_cycles(chip(1), n); });
        modified[n] = isolated([&] { return scc::flush_cycles(chip(1), n, true); });
        note(o, "  %5llu  %6llu  %8llu\n", (unsigned long long)n, (unsigned long long)clean[n],
             (unsigned long long)modified[n]);
    }
    const std::uint64_t whole =
        isolated([] { return scc::flush_cycles(chip(1), tacomesh::scc::l2_bytes / tacomesh::scc::line_bytes); });
    note(o, "  whole cache (%zu lines): %llu\n", tacomesh::scc::l2_bytes / tacomesh::scc::line_bytes, (unsigned long long)whole);
    if (o.json)
        std::printf("{\"mesh_fig4_read_cycles\": {\"one_controller\": %s,\n"
                    "                          \"four_controllers\": %s},\n"
                    " \"mesh_fig5_flush_cycles\": {\"clean\": %s,\n"
                    "                           \"modified\": %s,\n"
                    "                           \"whole_cache\": %llu}}\n",
                    object(one).c_str(), object(four).c_str(), object(clean).c_str(), object(modified).c_str(),
                    (unsigned long long)whole);
    return 0;
}

/// --set patents: MESH paper, Figure 7, on the stand-in graph.
int run_patents(const options& o) {
    calibrate(o);
    const std::string file = o.graph.empty() ? o.modularity_data + "/cond-mat.graph.gz" : o.graph;
    const modularity::graph_data g = modularity::read_graph(file);
    const std::uint64_t moves = o.moves.value_or(o.quick ? 20 : 100);
    const std::vector<taco::core_id> counts =
        o.quick ? std::vector<taco::core_id>{1, 8, 48} : std::vector<taco::core_id>{1, 2, 4, 8, 12, 16, 24, 32, 48};
    note(o, "MESH paper, Figure 7: %s (%llu vertices), the first %llu moves, Broadcast\n", file.c_str(),
         (unsigned long long)g.vertex_count(), (unsigned long long)moves);
    std::map<std::string, std::map<taco::core_id, std::uint64_t>> cycles;
    for (modularity::maps_kind m : modularity::all_maps)
        for (taco::core_id n : counts) {
            const search_run r = search(g, m, n, moves);
            if (r.steps != moves)
                throw std::runtime_error(file + " converged after " + std::to_string(r.steps) + " moves, before the " +
                                         std::to_string(moves) + " asked for: ask for fewer (--moves)");
            cycles[modularity::name(m)][n] = r.ticks;
            note(o, "  %s %u: %llu cycles\n", modularity::name(m), n, (unsigned long long)r.ticks);
        }
    // Repeatable runs (above): the baseline and the largest run again.
    const taco::core_id most = counts.back();
    const double spread = std::max(
        relative_difference(double(cycles["dcm"][1]), double(search(g, modularity::maps_kind::dcm, 1, moves).ticks)),
        relative_difference(double(cycles["mix"][most]),
                            double(search(g, modularity::maps_kind::mix, most, moves).ticks)));
    std::map<std::string, std::map<taco::core_id, double>> speedup;
    const double baseline = double(cycles["dcm"][1]);
    for (const auto& [v, row] : cycles)
        for (const auto& [n, c] : row) speedup[v][n] = baseline / double(c);
    if (o.json) {
        std::string s = "{\"graph\": \"" + std::filesystem::path(file).filename().string() +
                        "\", \"vertices\": " + std::to_string(g.vertex_count()) + ", \"moves\": " + std::to_string(moves) +
                        ",\n \"patents_speedup\": {";
        bool first = true;
        for (const char* v : {"dcm", "ncm", "wt", "mix"}) {
            s += std::string(first ? "" : ",\n                     ") + "\"" + v + "\": " + object(speedup.at(v));
            first = false;
        }
        std::fputs((s + "},\n \"modelled_cycles_spread\": " + number(spread) + "}\n").c_str(), stdout);
    } else {
        std::printf("MESH paper, Figure 7 (stand-in: %s, %llu moves): speed-up against 1-core DCM\n", file.c_str(),
                    (unsigned long long)moves);
        for (const auto& [v, row] : speedup) {
            std::printf("  %-4s", v.c_str());
            for (const auto& [n, x] : row) std::printf("  %u: %.2f", n, x);
            std::printf("\n");
        }
        std::printf("modelled cycles of two identical runs differ by %.2f%%\n", 100 * spread);
    }
    return 0;
}

/// --set beyond: the SCC made bigger, the same cores, caches and prices
/// (emulated::grid): what the reduce, world trade and the RDF task pool
/// would give on all of a 256- or 1024-core chip's cores.
int run_beyond(const options& o) {
    calibrate(o);
    const std::vector<tacomesh::scc::chip_shape> chips =
        o.meshes.empty() ? std::vector{scc::grid(16, 8), scc::grid(32, 16)} : o.meshes;
    for (const tacomesh::scc::chip_shape& c : chips)
        note(o, "and up to %u on a %u x %u chip (oversubscribed %ux)\n", c.cores(), c.mesh_x, c.mesh_y,
             c.cores() / std::max(1u, std::thread::hardware_concurrency()));
    const int reduce_rounds = o.quick ? 10 : 100;
    const modularity::graph_data g = modularity::read_graph(o.modularity_data + "/WorldImport1999.el");
    rdf::store s = lubm1(o);
    const std::vector<std::string> queries = small_footprint(o, s, rdf::lubm_queries(o.rdf_data));
    // As many queries per worker as the paper's pool gave 47 workers: with
    // the paper's 100 copies, 1023 workers would wait for the pool's tail.
    const std::uint64_t per_48 = o.repeat.value_or(paper_repeat);
    struct row {
        tacomesh::scc::chip_shape chip;
        std::uint64_t reduce = 0, repeat = 0;
        std::map<std::string, double> worldtrade;
        double rdf = 0;
    };
    std::vector<row> rows;
    const std::uint64_t trade_base = world_trade(g, modularity::maps_kind::dcm, 1);
    // One core's cycles for a pool of r copies: measured at the paper's
    // pool and at twice it, and, for the larger pools, extrapolated along
    // that line (a serial pass over the same queries, warm: 1024 cores'
    // pool on one emulated core would take most of an hour of host time).
    const std::uint64_t base_1 = rdf_task(s, queries, 1, per_48), base_2 = rdf_task(s, queries, 1, 2 * per_48);
    const double per_copy = double(base_2 - base_1) / double(per_48);
    note(o, "RDF on one core: %llu cycles for %llu copies, %llu for %llu: %.0f a copy (%.2f %% off a line through 0)\n",
         (unsigned long long)base_1, (unsigned long long)per_48, (unsigned long long)base_2,
         (unsigned long long)(2 * per_48), per_copy, 100 * std::abs(double(base_1) - per_copy * double(per_48)) / double(base_1));
    auto rdf_base = [&](std::uint64_t r) {
        return r == per_48 ? double(base_1) : r == 2 * per_48 ? double(base_2) : double(base_1) + per_copy * double(r - per_48);
    };
    // --quick: world trade's best and worst variants (Mix, DCM) only.
    std::vector<modularity::maps_kind> variants;
    for (modularity::maps_kind m : modularity::all_maps)
        if (!o.quick || m == modularity::maps_kind::dcm || m == modularity::maps_kind::mix) variants.push_back(m);
    std::vector<tacomesh::scc::chip_shape> all{tacomesh::scc::chip_shape{}};
    all.insert(all.end(), chips.begin(), chips.end());
    for (const tacomesh::scc::chip_shape& c : all) {
        shape = c;
        const taco::core_id n = c.cores();
        row r;
        r.chip = c;
        note(o, "%u x %u tiles, %u cores, %zu bytes of MPB per core, %u memory controllers:\n", c.mesh_x, c.mesh_y, n,
             c.mpb_bytes, c.controllers);
        r.reduce = isolated([&] { return scc::reduce_cycles(chip(n), reduce_rounds); });
        note(o, "  reduce over %u cores: %llu cycles\n", n, (unsigned long long)r.reduce);
        for (modularity::maps_kind m : variants) {
            const std::uint64_t t = world_trade(g, m, n);
            r.worldtrade[modularity::name(m)] = double(trade_base) / double(t);
            note(o, "  world trade %s: %llu cycles, %.2fx\n", modularity::name(m), (unsigned long long)t,
                 r.worldtrade[modularity::name(m)]);
        }
        r.repeat = std::max<std::uint64_t>(1, (per_48 * (n - 1) + 46) / 47);
        const std::uint64_t t = rdf_task(s, queries, n, r.repeat);
        r.rdf = rdf_base(r.repeat) / double(t);
        note(o, "  RDF task pool (%llu copies of %zu queries): %llu cycles, %.2fx\n", (unsigned long long)r.repeat,
             queries.size(), (unsigned long long)t, r.rdf);
        rows.push_back(r);
    }
    if (o.json) {
        std::string out = "{\"beyond\": [";
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const row& r = rows[i];
            out += std::string(i ? ",\n            " : "") + "{\"mesh\": \"" + std::to_string(r.chip.mesh_x) + "x" +
                   std::to_string(r.chip.mesh_y) + "\", \"cores\": " + std::to_string(r.chip.cores()) +
                   ", \"mpb_bytes\": " + std::to_string(r.chip.mpb_bytes) +
                   ", \"controllers\": " + std::to_string(r.chip.controllers) +
                   ", \"reduce_cycles_polling\": " + std::to_string(r.reduce) + ", \"worldtrade_speedup\": {";
            bool first = true;
            for (const auto& [v, x] : r.worldtrade) {
                out += std::string(first ? "" : ", ") + "\"" + v + "\": " + number(x);
                first = false;
            }
            out += "}, \"rdf_task_copies\": " + std::to_string(r.repeat) +
                   ", \"rdf_task_speedup\": " + number(r.rdf) + "}";
        }
        std::fputs((out + "]}\n").c_str(), stdout);
    } else {
        std::printf("The SCC made bigger (same cores, caches, prices; the mesh's distance priced):\n"
                    "  mesh     cores  MPB/core  controllers  reduce (cycles)  world trade DCM / NCM / WT / Mix   RDF tasks\n"
                    "  (0: a variant --quick leaves out)\n");
        for (const row& r : rows)
        {
            auto x = [&](const char* v) { return r.worldtrade.count(v) ? r.worldtrade.at(v) : 0.0; };
            std::printf("  %2ux%-2u  %6u  %8zu  %11u  %15llu  %6.2f / %5.2f / %5.2f / %5.2f   %6.2f (%llu copies)\n",
                        r.chip.mesh_x, r.chip.mesh_y, r.chip.cores(), r.chip.mpb_bytes, r.chip.controllers,
                        (unsigned long long)r.reduce, x("dcm"), x("ncm"), x("wt"), x("mix"), r.rdf,
                        (unsigned long long)r.repeat);
        }
    }
    return 0;
}

/// The default set: the figures the JSON object names.
int run_papers(const options& o) {
    figures f;
    const int rounds = o.quick ? 100 : 1000, reduce_rounds = o.quick ? 10 : 100;
    calibrate(o);

    // The round trip is the calibration's target, and is measured as the
    // calibration fitted it, in modelled-time order, whatever --order says:
    // in host order a core's clock runs on while the host has not scheduled
    // its partner, and a CI run on a loaded host came out 4 % off the fit.
    auto round_trip = [&](scc::idle_policy idle) {
        scc::config c = chip(2, idle);
        c.order = scc::core_order::modelled;
        return isolated([&] { return scc::round_trip_cycles(c, rounds); });
    };
    auto reduce = [&](taco::core_id n, scc::idle_policy idle) {
        return isolated([&] { return scc::reduce_cycles(chip(n, idle), reduce_rounds); });
    };
    note(o, "round trip ...\n");
    f.round_trip_poll = round_trip(scc::idle_policy::poll);
    f.round_trip_halt = round_trip(scc::idle_policy::halt);
    f.spread = std::max(f.spread,
                        relative_difference(double(f.round_trip_poll), double(round_trip(scc::idle_policy::poll))));

    note(o, "reduce ...\n");
    for (taco::core_id n : {2u, 4u, 8u, 16u, 32u, 48u}) f.reduce_poll[n] = reduce(n, scc::idle_policy::poll);
    f.reduce48_halt = reduce(48, scc::idle_policy::halt);
    if (!o.json) {
        f.round_trip_overlapped = round_trip(scc::idle_policy::halt_overlapped);
        f.reduce48_overlapped = reduce(48, scc::idle_policy::halt_overlapped);
    }
    f.spread = std::max(f.spread,
                        relative_difference(double(f.reduce_poll[48]), double(reduce(48, scc::idle_policy::poll))));

    note(o, "world trade ...\n");
    const modularity::graph_data g = modularity::read_graph(o.modularity_data + "/WorldImport1999.el");
    const std::vector<taco::core_id> counts{1, 2, 4, 8, 12, 15, 16, 24, 32, 48};
    std::map<std::string, std::map<taco::core_id, std::uint64_t>> trade;
    for (modularity::maps_kind m : modularity::all_maps)
        for (taco::core_id n : counts) {
            trade[modularity::name(m)][n] = world_trade(g, m, n);
            note(o, "  %s %u: %llu cycles\n", modularity::name(m), n,
                 (unsigned long long)trade[modularity::name(m)][n]);
        }
    const double baseline = double(trade["dcm"][1]);
    for (const auto& [v, row] : trade)
        for (const auto& [n, c] : row) f.worldtrade[v][n] = baseline / double(c);
    f.spread = std::max(f.spread, relative_difference(double(trade["mix"][15]),
                                                      double(world_trade(g, modularity::maps_kind::mix, 15))));
    f.spread = std::max(f.spread, relative_difference(double(trade["dcm"][48]),
                                                      double(world_trade(g, modularity::maps_kind::dcm, 48))));

    note(o, "RDF task-parallel ...\n");
    rdf::store s = lubm1(o);
    const std::vector<std::string> queries = small_footprint(o, s, rdf::lubm_queries(o.rdf_data));
    const std::uint64_t repeat = o.repeat.value_or(paper_repeat);
    const std::vector<taco::core_id> pools{1, 2, 4, 8, 16, 32, 48, 48}; // 48 twice: the spread
    const std::vector<std::uint64_t> tasks = rdf_tasks(s, queries, pools, repeat);
    for (std::size_t i = 0; i + 1 < pools.size(); ++i) {
        note(o, "  %u: %llu cycles\n", pools[i], (unsigned long long)tasks[i]);
        f.rdf[pools[i]] = double(tasks[0]) / double(tasks[i]);
    }
    f.spread = std::max(f.spread, relative_difference(double(tasks[pools.size() - 2]), double(tasks.back())));

    if (o.json) print_json(f);
    else print_tables(f);
    return 0;
}

int run(const options& o) {
    try {
        switch (o.set) {
        case figure_set::memory: return run_memory(o);
        case figure_set::patents: return run_patents(o);
        case figure_set::beyond: return run_beyond(o);
        case figure_set::papers: break;
        }
        return run_papers(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "scc_figures: %s\n", e.what());
        return 1;
    }
}

} // namespace

int main(int argc, char** argv) {
    try {
        const options o = parse(argc, argv);
        in_process = o.in_process;
        if (!o.in_process && !without_randomisation(argv))
            note(o, "scc_figures: could not turn address randomisation off (personality): runs may differ a little\n");
        // The experiments' inputs (the graph, the store, the queries) are
        // read by the emulated cores at their host addresses, which their
        // priced loads see (private memory: the caches' sets). On the main
        // thread they would sit on a stack and a heap whose addresses move
        // with the size of the environment (4 % of the RDF task pool's
        // cycles at 48 cores); a thread's stack and arena are mapped where
        // the environment does not reach.
        int rc = 1;
        std::thread([&] { rc = run(o); }).join();
        return rc;
    } catch (const usage_error& e) {
        std::fprintf(stderr, "scc_figures: %s\n%s", e.what(), usage_text);
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "scc_figures: %s\n", e.what());
        return 1;
    }
}
