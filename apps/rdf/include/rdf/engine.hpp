#pragma once
// One call from a store to parallel work on POSIX cores (threads or core
// processes): starts the cores, builds the rdf_cluster (parallel.hpp) on
// core 0, runs the caller's function with it, and returns on the calling
// thread. The CLI, the tests and the benchmarks go through here;
// with_cluster_on does the same on another platform's cores (the emulated
// SCC: bench/platforms/scc).
//
//   rdf::engine_options o{.cores = 2, .platform = rdf::execution_mode::processes};
//   rdf::with_cluster(store, o, [&](rdf::rdf_cluster& c) { answer = c.run_split(text); });
#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <tacomesh/posix.hpp>
#include <rdf/parallel.hpp>

namespace rdf {

using tacomesh::posix::execution_mode;

using tacomesh::posix::name;
using tacomesh::posix::parse_execution_mode;

struct engine_options {
    taco::core_id cores = 2;
    execution_mode platform = execution_mode::threads;
};

struct engine_report {
    bool oversubscribed = false; ///< more cores than CPUs
};

/// As with_cluster, on the platform `cfg` names, with its cores: the same
/// cluster on any platform, e.g. the emulated SCC (bench/platforms/scc).
template <class Config, class F>
void with_cluster_on(Config cfg, store& s, F&& fn) {
    // The store's parts live in MESH's cached shared memory: reserve enough
    // for them (a view each on core processes), with room to grow.
    cfg.cached_bytes = std::max(cfg.cached_bytes, 4 * (s.bytes() + (std::size_t(64) << 20)));
    // The workers' rows, in non-cached memory where the cores share it (worker_output).
    if constexpr (requires { cfg.non_cached_bytes; })
        cfg.non_cached_bytes = std::max(cfg.non_cached_bytes, 2 * (s.bytes() + (std::size_t(64) << 20)));
    taco::run(cfg, [&] {
        rdf_cluster c(s);
        fn(c);
    });
}

/// Run fn(rdf_cluster&) on core 0 of freshly started cores. `s` is what the
/// cluster shares; fn may change it and call publish().
template <class F>
engine_report with_cluster(store& s, const engine_options& o, F&& fn) {
    if (o.cores < 1) throw std::invalid_argument("--cores must be at least 1");
    if (o.cores > 1024) throw std::invalid_argument("--cores " + std::to_string(o.cores) + ": at most 1024");
    tacomesh::posix::run_report report;
    tacomesh::posix::config cfg{.cores = o.cores, .report = &report, .mode = o.platform};
    // idle and pin unset: with more cores than free CPUs (oversubscribed,
    // or other work on the machine) waiting cores park instead of taking
    // the CPU from the ones computing (tacomesh/posix/host_load.hpp).
    with_cluster_on(cfg, s, std::forward<F>(fn));
    return {report.oversubscribed};
}

} // namespace rdf
