#pragma once
// The consistency controllers on a user's own shared type, in modelled
// cycles of the emulated SCC: the same traffic (mesh/traffic.hpp) that
// tacomesh/posix/controller_bench.hpp times on host cores, run on a chip
// without cache coherence, where a write-back and a refresh go through the
// L2 flush routine, the memory controllers and the MPBs at the prices of
// cost_model.hpp. One round: the writers write in turn (core 0 first), then
// the readers read at once, every read checked to see the round just
// written; a row gives the cycles of a round on core 0, which waits for all
// of them.
//
// What the emulation does not show: stale data. It keeps the shared data
// in one host memory and prices the caches without holding old copies, so
// noop's readers see every write here, where the chip's would read old
// lines; its row says so (its cycles are those of a run without the
// copies a correct one needs).
//
// The cycles do not depend on the host (modelled-time order, computation
// counted in blocks: build with tacomesh::scc_counted, which also prices
// loads and stores), so each controller runs once, in its own taco::run,
// and a ratio needs no pairs: two runs give the same figures.
//
//   auto r = tacomesh::scc::emulated::controller_bench::run<graph_traffic>({.writers = 1, .readers = 2});
//   tacomesh::scc::emulated::controller_bench::print(std::cout, r);
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include <mesh/mesh.hpp>
#include <mesh/traffic.hpp>
#include <taco/usage_error.hpp>
#include <tacomesh/scc/emulated/experiments.hpp>
#include <tacomesh/scc/emulated/platform.hpp>

namespace tacomesh::scc::emulated::controller_bench {

using mesh::traffic;

/// The traffic on the object, and the chip it runs on.
struct workload {
    unsigned writers = 1;           ///< cores that write in turn each round (core 0 first), at least 1
    unsigned readers = 1;           ///< cores that then read at once (writers + readers <= 48)
    std::size_t bytes_changed = 64; ///< handed to the type's write: what each release should change
    std::size_t rounds = 20;        ///< rounds counted, after one that warms the caches and channels
    std::string baseline = "timestamp"; ///< the controller the others' cycles are divided by
    idle_policy idle = idle_policy::poll; ///< how a core waits: polling, or asleep in hlt
    /// Fit the price of a counted block to the round trip first (as
    /// scc_figures does); otherwise `costs` as given.
    bool calibrate = true;
    cost_model costs{};
};

/// One controller.
struct row {
    std::string controller;     ///< "noop", "broadcast", "overlapped_broadcast", "timestamp"
    double cycles_per_round = 0; ///< on core 0, which waits for every read
    double ratio = 0;            ///< cycles / the baseline's
    double copied_bytes_per_round = 0; ///< written back + refreshed, every core
    std::uint64_t reads = 0, stale_reads = 0;
};

struct result {
    workload w;
    std::vector<row> rows;
    taco::core_id cores = 0;
    double cycles_per_block = 0; ///< the price used (fitted if w.calibrate)
    bool memory_priced = false;  ///< loads and stores priced (a tacomesh::scc_counted build)
    std::uint64_t order_timeouts = 0; ///< waits that went ahead of the modelled order (0: the figures repeat)
};

namespace detail {

using namespace mesh::detail::traffic;

template <class W, class C>
void run_one(const workload& w, const cost_model& costs, std::size_t index, result& out) {
    const auto cores = taco::core_id(w.writers + w.readers);
    run_report report;
    config cfg{.cores = cores, .idle = w.idle, .costs = costs, .order = core_order::modelled, .report = &report};
    row r;
    r.controller = controller_names[index];
    std::uint64_t cycles_counted = 0, copied = 0;
    taco::run(cfg, [&] {
        mesh::sharing_ptr<typename W::object> p = W::template make<C>();
        std::vector<taco::future<std::uint64_t>> seen;
        // A first round outside the count: first touches, channels, trees.
        r.stale_reads += run_round<W>(p, w.writers, w.readers, w.bytes_changed, 1, seen);
        const std::uint64_t copied_before = copied_everywhere();
        const std::uint64_t before = cycles();
        for (std::size_t k = 0; k < w.rounds; ++k)
            r.stale_reads += run_round<W>(p, w.writers, w.readers, w.bytes_changed, k + 2, seen);
        cycles_counted = cycles() - before;
        copied = copied_everywhere() - copied_before;
        mesh::destroy_shared_object(p);
    });
    r.reads = (w.rounds + 1) * w.readers;
    r.cycles_per_round = double(cycles_counted) / double(w.rounds);
    r.copied_bytes_per_round = double(copied) / double(w.rounds);
    out.order_timeouts += report.order_timeouts;
    out.rows.push_back(r);
}

template <class W, class... C>
void run_all(const workload& w, const cost_model& costs, result& out, controller_list<C...>) {
    std::size_t i = 0;
    (run_one<W, C>(w, costs, i++, out), ...);
}

} // namespace detail

/// W's traffic under every controller on the emulated chip, one taco::run
/// each on writers + readers cores.
template <class W>
result run(const workload& w) {
    mesh::detail::traffic::check<W>();
    if (w.writers < 1) throw taco::usage_error("controller_bench: a workload needs at least 1 writer (core 0 is the first)");
    if (w.rounds < 1) throw taco::usage_error("controller_bench: rounds must be at least 1");
    if (w.writers + w.readers > max_cores)
        throw taco::usage_error("controller_bench: " + std::to_string(w.writers + w.readers) +
                                " writers and readers, but the SCC has " + std::to_string(max_cores) + " cores");
    const std::size_t baseline = detail::controller_index(w.baseline);
    const cost_model costs = w.calibrate ? calibrated(w.costs).costs : w.costs;
    result out{w, {}, taco::core_id(w.writers + w.readers), costs.cycles_per_block, costs.price_memory, 0};
    detail::run_all<W>(w, costs, out, detail::controllers{});
    for (row& r : out.rows) r.ratio = r.cycles_per_round / out.rows[baseline].cycles_per_round;
    return out;
}

/// The table: a row per controller, its ratio to the baseline first.
inline void print(std::ostream& os, const result& r) {
    char line[480];
    std::snprintf(line, sizeof line,
                  "emulated SCC, %u core(s) %s: %u writer(s), %u reader(s), %zu bytes changed per release, %zu "
                  "rounds; modelled cycles of an 800 MHz core, ratio = cycles / %s's\n",
                  unsigned(r.cores), describe(r.w.idle),
                  r.w.writers, r.w.readers, r.w.bytes_changed, r.w.rounds, r.w.baseline.c_str());
    os << line;
    if (!r.memory_priced)
        os << "loads and stores are not priced (build with tacomesh::scc_counted): a copy costs only its "
              "hardware operations\n";
    if (r.order_timeouts)
        os << r.order_timeouts << " wait(s) went ahead of the modelled order: the figures may vary from run to run\n";
    std::snprintf(line, sizeof line, "%-21s %7s %14s %14s  %s\n", "controller", "ratio", "cycles/round",
                  "copied/round", "note");
    os << line;
    for (const row& x : r.rows) {
        std::string note;
        if (x.stale_reads)
            note = std::to_string(x.stale_reads) + " of " + std::to_string(x.reads) + " reads stale: not a correct run";
        if (x.controller == "noop" && !x.stale_reads)
            note = "correct only here: the emulation keeps the data in one host memory (it prices the caches but "
                   "holds no old copies); on the chip its readers would see old lines";
        if (x.controller == r.w.baseline) note += (note.empty() ? "" : "; ") + std::string("baseline");
        char copied[32];
        std::snprintf(copied, sizeof copied, "%.0f B", x.copied_bytes_per_round);
        std::snprintf(line, sizeof line, "%-21s %7.2f %14.0f %14s  %s\n", x.controller.c_str(), x.ratio,
                      x.cycles_per_round, copied, note.c_str());
        os << line;
    }
}

/// The same as one JSON object: {"workload": {...}, "cores": N, "controllers": {"noop": {...}, ...}}.
inline void print_json(std::ostream& os, const result& r) {
    os << "{\"workload\": {\"writers\": " << r.w.writers << ", \"readers\": " << r.w.readers
       << ", \"bytes_changed\": " << r.w.bytes_changed << ", \"rounds\": " << r.w.rounds << ", \"baseline\": \""
       << r.w.baseline << "\", \"idle\": \"" << name(r.w.idle)
       << "\"}, \"cores\": " << r.cores << ", \"cycles_per_block\": " << r.cycles_per_block
       << ", \"memory_priced\": " << (r.memory_priced ? "true" : "false") << ", \"order_timeouts\": " << r.order_timeouts
       << ", \"controllers\": {";
    bool first = true;
    for (const row& x : r.rows) {
        os << (first ? "" : ", ") << "\"" << x.controller << "\": {\"cycles_per_round\": " << x.cycles_per_round
           << ", \"ratio\": " << x.ratio << ", \"copied_bytes_per_round\": " << x.copied_bytes_per_round
           << ", \"reads\": " << x.reads
           << ", \"stale_reads\": " << x.stale_reads << "}";
        first = false;
    }
    os << "}}\n";
}

} // namespace tacomesh::scc::emulated::controller_bench
