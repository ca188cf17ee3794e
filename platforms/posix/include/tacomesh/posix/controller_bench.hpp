#pragma once
// Benchmarking the consistency controllers on one's own shared type: which
// of noop, broadcast, overlapped_broadcast and timestamp suits *this*
// object under *this* traffic? One round: the writers write in turn (a
// writer proxy each: acquire, the type's write, release), then the readers
// read at once (a reader proxy each), and every read is checked to see the
// round just written. Each controller's object is made in the same run and
// timed in batches of rounds, the controllers in rotated order from pair to
// pair (taco/paired_timing.hpp, as the framework's own benchmarks), so the
// figure to read is each one's time as a ratio to a baseline timed in the
// same pairs, not the microseconds (the host's cross-core latency shifts
// by ~4x within seconds).
//
// Thread mode and process mode both run. With core threads there is one
// memory: a write-back or refresh copies nothing, so a controller's ratio
// there is its bookkeeping alone; the rows say so. With core processes each
// core has a private view, and the row gives the bytes copied per round.
// A controller that lets a reader see an older round (noop with private
// views) has its stale reads counted in its row: its time is not that of a
// correct run.
//
//   struct graph_traffic {                       // the workload on your type
//       using object = graph;
//       template <class C>
//       static mesh::sharing_ptr<graph> make() { return mesh::make_shared_object<graph, C>(400u); }
//       static void write(graph& g, std::size_t bytes, std::uint64_t round);  // change ~bytes, remember round
//       static std::uint64_t read(const graph& g);                           // the round it sees
//   };
//   auto r = tacomesh::posix::controller_bench::run<graph_traffic>({.writers = 1, .readers = 2, .bytes_changed = 4096});
//   tacomesh::posix::controller_bench::print(std::cout, r);
//
// The functions are static: readers and writers call them on their own
// cores (in process mode, other processes). docs/tutorial.md, "Benchmarking
// the controllers on your own type", walks through a complete program.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include <mesh/mesh.hpp>
#include <mesh/traffic.hpp>
#include <taco/paired_timing.hpp>
#include <taco/usage_error.hpp>
#include <tacomesh/posix.hpp>

namespace tacomesh::posix::controller_bench {

/// The traffic on the object, and how long to time it.
struct workload {
    unsigned writers = 1;           ///< cores that write in turn each round (core 0 first), at least 1
    unsigned readers = 1;           ///< cores that then read at once
    std::size_t bytes_changed = 64; ///< handed to the type's write: what each release should change
    std::size_t rounds = 200;       ///< rounds per timed batch
    std::size_t pairs = 7;          ///< batches per controller (rotated order: the ratios' sample)
    std::string baseline = "timestamp"; ///< the controller the others' times are divided by
    bool threads = true;            ///< run with core threads (one memory)
    bool processes = true;          ///< run with core processes (private views)
};

/// The user's side: the object, how to make it under a controller, what a
/// writer changes and what a reader computes (the last round written).
using mesh::traffic;

/// One controller in one mode.
struct row {
    std::string mode;       ///< "threads" or "processes"
    std::string controller; ///< "noop", "broadcast", "overlapped_broadcast", "timestamp"
    double ns_per_round = 0;   ///< median over the pairs
    double ratio_median = 0;   ///< time / the baseline's, pair by pair
    double ratio_p10 = 0, ratio_p90 = 0;
    bool copies = false;       ///< false: thread mode, one memory, nothing is copied
    double copied_bytes_per_round = 0; ///< written back + refreshed, every core (process mode)
    std::uint64_t reads = 0, stale_reads = 0;
};

struct result {
    workload w;
    std::vector<row> rows;
    unsigned cores = 0, cpus = 0; ///< more cores than CPUs: rounds wait for time slices
};

namespace detail {

using namespace mesh::detail::traffic;

struct tally {
    std::uint64_t reads = 0, stale = 0, copied = 0, rounds = 0;
};

/// Core 0's part of one mode's run.
template <class W>
void run_mode(const workload& w, std::size_t baseline, bool copies, std::vector<row>& rows) {
    using object_ptr = mesh::sharing_ptr<typename W::object>;
    std::vector<object_ptr> objects = make_all<W>(controllers{});
    std::vector<std::uint64_t> next_round(controller_count, 1);
    std::vector<tally> tallies(controller_count);
    std::vector<taco::future<std::uint64_t>> seen(w.readers);

    auto one_round = [&](std::size_t i) {
        tallies[i].stale += run_round<W>(objects[i], w.writers, w.readers, w.bytes_changed, next_round[i]++, seen);
        tallies[i].reads += w.readers;
        ++tallies[i].rounds;
    };
    taco::timing::rotated_series series(controller_count);
    for (std::size_t pair = 0; pair < w.pairs; ++pair)
        series.run_round([&](std::size_t i) {
            const std::uint64_t before = copies ? copied_everywhere() : 0; // outside the timed batch
            const double ns = taco::timing::time_batch(w.rounds, [&] { one_round(i); });
            if (copies) tallies[i].copied += copied_everywhere() - before;
            return ns;
        });
    for (std::size_t i = 0; i < controller_count; ++i) {
        const std::vector<double> r = series.ratios(i, baseline);
        row out;
        out.mode = copies ? "processes" : "threads";
        out.controller = controller_names[i];
        out.ns_per_round = taco::timing::median(series.times(i));
        out.ratio_median = taco::timing::median(r);
        out.ratio_p10 = taco::timing::quantile(r, 0.1);
        out.ratio_p90 = taco::timing::quantile(r, 0.9);
        out.copies = copies;
        out.copied_bytes_per_round = copies ? double(tallies[i].copied) / double(tallies[i].rounds) : 0;
        out.reads = tallies[i].reads;
        out.stale_reads = tallies[i].stale;
        rows.push_back(out);
    }
    for (object_ptr& p : objects) mesh::destroy_shared_object(p);
}

} // namespace detail

/// Time W's traffic under every controller, in the modes `w` asks for
/// (each mode is one taco::run on writers + readers cores).
template <class W>
result run(const workload& w) {
    mesh::detail::traffic::check<W>();
    if (w.writers < 1) throw taco::usage_error("controller_bench: a workload needs at least 1 writer (core 0 is the first)");
    if (w.rounds < 1 || w.pairs < 1) throw taco::usage_error("controller_bench: rounds and pairs must be at least 1");
    if (!w.threads && !w.processes) throw taco::usage_error("controller_bench: neither threads nor processes asked for");
    const std::size_t baseline = detail::controller_index(w.baseline);
    const taco::core_id cores = taco::core_id(w.writers + w.readers);
    result out{w, {}, cores, taco::timing::available_cpus()};
    for (const bool processes : {false, true}) {
        if (processes ? !w.processes : !w.threads) continue;
        const config cfg{.cores = cores, .mode = processes ? execution_mode::processes : execution_mode::threads};
        taco::run(cfg, [&] { detail::run_mode<W>(w, baseline, processes, out.rows); });
    }
    return out;
}

/// The table: a row per mode and controller, the ratio to the baseline
/// first, and what a row's figure means.
inline void print(std::ostream& os, const result& r) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "%u writer(s), %u reader(s), %zu bytes changed per release, %zu rounds per batch, %zu pairs; "
                  "ratio = time / %s's in the same pairs (median [p10, p90])\n",
                  r.w.writers, r.w.readers, r.w.bytes_changed, r.w.rounds, r.w.pairs, r.w.baseline.c_str());
    os << line;
    if (r.cores > r.cpus)
        os << "oversubscribed: " << r.cores << " cores on " << r.cpus
           << " CPUs, so a round waits for time slices and the times measure the scheduler as much as the "
              "controllers\n";
    std::snprintf(line, sizeof line, "%-10s %-21s %22s %11s %14s  %s\n", "mode", "controller", "ratio [p10, p90]",
                  "us/round", "copied/round", "note");
    os << line;
    for (const row& x : r.rows) {
        std::string note;
        if (!x.copies) note = "one memory: nothing copied, the ratio is bookkeeping only";
        if (x.stale_reads)
            note += (note.empty() ? "" : "; ") + std::to_string(x.stale_reads) + " of " + std::to_string(x.reads) +
                    " reads stale: not a correct run";
        if (x.controller == r.w.baseline) note += (note.empty() ? "" : "; ") + std::string("baseline");
        char ratio[48], copied[32];
        std::snprintf(ratio, sizeof ratio, "%.2f [%.2f, %.2f]", x.ratio_median, x.ratio_p10, x.ratio_p90);
        if (x.copies) std::snprintf(copied, sizeof copied, "%.0f B", x.copied_bytes_per_round);
        else std::snprintf(copied, sizeof copied, "-");
        std::snprintf(line, sizeof line, "%-10s %-21s %22s %11.2f %14s  %s\n", x.mode.c_str(), x.controller.c_str(),
                      ratio, x.ns_per_round / 1e3, copied, note.c_str());
        os << line;
    }
}

/// The same as one JSON object: {"workload": {...}, "threads": {"noop": {...}, ...}, "processes": {...}}.
inline void print_json(std::ostream& os, const result& r) {
    os << "{\"workload\": {\"writers\": " << r.w.writers << ", \"readers\": " << r.w.readers
       << ", \"bytes_changed\": " << r.w.bytes_changed << ", \"rounds\": " << r.w.rounds << ", \"pairs\": " << r.w.pairs
       << ", \"baseline\": \"" << r.w.baseline << "\"}, \"cores\": " << r.cores << ", \"cpus\": " << r.cpus;
    for (const char* mode : {"threads", "processes"}) {
        bool first = true;
        for (const row& x : r.rows) {
            if (x.mode != mode) continue;
            os << (first ? std::string(", \"") + mode + "\": {" : std::string(", ")) << "\"" << x.controller
               << "\": {\"ns_per_round\": " << x.ns_per_round << ", \"ratio_median\": " << x.ratio_median
               << ", \"ratio_p10\": " << x.ratio_p10 << ", \"ratio_p90\": " << x.ratio_p90
               << ", \"copies\": " << (x.copies ? "true" : "false")
               << ", \"copied_bytes_per_round\": " << x.copied_bytes_per_round << ", \"reads\": " << x.reads
               << ", \"stale_reads\": " << x.stale_reads << "}";
            first = false;
        }
        if (!first) os << "}";
    }
    os << "}\n";
}

} // namespace tacomesh::posix::controller_bench
