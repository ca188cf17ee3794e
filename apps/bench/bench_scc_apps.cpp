// The apps on the emulated SCC, in modelled cycles of the chip, beside the
// papers' figures (platforms/scc/README.md has the tables):
//
//   greedy/world_trade/{dcm,ncm,wt,mix}/broadcast/cores:N
//       the modularity app's globally greedy vertex moving on the world-trade
//       graph to convergence (MESH paper, Figure 6: Mix reaches speed-up 7 at
//       15 cores, DCM scales poorly)
//   greedy/cond_mat/{dcm,mix}/broadcast/cores:N
//       its first 500 moves on cond-mat (16 726 vertices), standing in for
//       the paper's Patents graph (Figure 7, not among our data)
//   rdf_task/lubm1/cores:N
//       the RDF app's task-parallel model: the 14 LUBM queries x 10 handed
//       out by a master to n - 1 workers (RDF paper, Figure 1: 32.7 at 48
//       cores on LUBM)
//
// Counters: modelled_cycles of the timed part (the steps; the workload), and
// speedup against the paper's baseline in the same run (1-core DCM +
// Broadcast; 1 core). N = 1..48 emulated cores on this machine's CPUs:
// oversubscribed, labelled. Computation is charged as host CPU time at the
// chip's clock (cost_model::compute_cycles_per_ns, 0.8 per host ns), or, in
// bench_scc_apps_counted (built with tacomesh::scc_counted, on request), as
// counted basic blocks (cost_model::cycles_per_block); SCC_COMPUTE_SCALE=k
// charges k times that, for a P54C k times slower. The README discusses
// what that does to the curves.
//   (BENCH_SMOKE=1: a few moves and queries, up to 4 cores)
#include <benchmark/benchmark.h>
#include <paired.hpp>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <tacomesh/scc/emulated/platform.hpp>
#include <modularity/cluster.hpp>
#include <modularity/graph_reader.hpp>
#include <rdf/engine.hpp>
#include <rdf/lubm_scale.hpp>

namespace scc = tacomesh::scc::emulated;

namespace {

const bool smoke = std::getenv("BENCH_SMOKE") != nullptr;

scc::config chip(taco::core_id cores) {
    scc::config c{.cores = cores};
    if (const char* k = std::getenv("SCC_COMPUTE_SCALE")) c.costs.scale_compute(std::atof(k));
    return c;
}

void label(benchmark::State& state, taco::core_id cores) {
    state.counters["cores"] = cores;
    state.counters["compute_scale"] = chip(1).costs.compute_cycles_per_ns / scc::cost_model{}.compute_cycles_per_ns;
    if (cores > std::thread::hardware_concurrency())
        state.SetLabel("oversubscribed: " + std::to_string(cores) + " emulated cores on " +
                       std::to_string(std::thread::hardware_concurrency()) + " CPUs");
}

/// Modelled cycles of each experiment's baseline, run first (registration order).
std::map<std::string, double>& baselines() {
    static std::map<std::string, double> b;
    return b;
}
void report(benchmark::State& state, const std::string& experiment, bool baseline, std::uint64_t cycles) {
    state.counters["modelled_cycles"] = double(cycles);
    if (baseline) baselines()[experiment] = double(cycles);
    if (auto it = baselines().find(experiment); it != baselines().end() && cycles > 0)
        state.counters["speedup"] = it->second / double(cycles);
}

const modularity::graph_data& graph(const std::string& file) {
    static std::map<std::string, modularity::graph_data> cache;
    auto it = cache.find(file);
    if (it == cache.end()) it = cache.emplace(file, modularity::read_graph(std::string(MODULARITY_DATA) + "/" + file)).first;
    return it->second;
}

void greedy(benchmark::State& state, std::string experiment, std::string file, std::optional<std::uint64_t> steps,
            modularity::maps_kind maps, taco::core_id cores) {
    label(state, cores);
    modularity::cluster_options o;
    o.algo = modularity::algorithm::greedy;
    o.maps = maps;
    o.controller = modularity::controller_kind::broadcast;
    o.max_steps = smoke ? std::optional<std::uint64_t>(5) : steps; // unset: to convergence
    o.ticks = &scc::cycles;
    modularity::cluster_result r;
    for (auto _ : state) r = modularity::cluster_graph_on(chip(cores), graph(file), o);
    state.counters["steps"] = double(r.steps);
    state.counters["modularity"] = r.modularity;
    report(state, experiment, maps == modularity::maps_kind::dcm && cores == 1, r.ticks);
}

const std::string rdf_data = RDF_DATA;

rdf::store& lubm1() {
    static rdf::store s = [] {
        rdf::store st;
        st.load_file(rdf_data + "/lubm1-inferred.nt.gz");
        return st;
    }();
    return s;
}
const std::vector<std::string>& lubm_queries() {
    static const std::vector<std::string> q = rdf::lubm_queries(rdf_data);
    return q;
}

void rdf_task(benchmark::State& state, taco::core_id cores) {
    label(state, cores);
    const std::uint64_t repeat = smoke ? 1 : 10;
    std::uint64_t cycles = 0, done = 0;
    for (auto _ : state)
        rdf::with_cluster_on(chip(cores), lubm1(), [&](rdf::rdf_cluster& c) {
            // As the paper ran it: a master that hands out queries and n - 1
            // workers (one core: the master answers them all).
            const bool master_works = cores == 1;
            c.run_workload(lubm_queries(), 1, master_works); // every worker's first touch of the store
            const std::uint64_t before = scc::cycles();
            done = c.run_workload(lubm_queries(), repeat, master_works).queries;
            cycles = scc::cycles() - before;
        });
    state.counters["queries"] = double(done);
    report(state, "rdf_task", cores == 1, cycles);
}

const bool registered = [] {
    using modularity::maps_kind;
    const std::vector<taco::core_id> counts =
        smoke ? std::vector<taco::core_id>{1, 2, 4} : std::vector<taco::core_id>{1, 2, 4, 8, 12, 16, 24, 32, 48};
    auto add_greedy = [&](const char* experiment, const char* file, std::optional<std::uint64_t> steps,
                          std::vector<maps_kind> maps) {
        for (maps_kind m : maps)
            for (taco::core_id cores : counts)
                benchmark::RegisterBenchmark((std::string("greedy/") + experiment + "/" + modularity::name(m) +
                                              "/broadcast/cores:" + std::to_string(cores)).c_str(),
                                             greedy, experiment, file, steps, m, cores)
                    ->Iterations(1)
                    ->Unit(benchmark::kMillisecond);
    };
    // DCM first: its 1-core run is the baseline of the others.
    add_greedy("world_trade", "WorldImport1999.el", std::nullopt, {maps_kind::dcm, maps_kind::ncm, maps_kind::wt, maps_kind::mix});
    add_greedy("cond_mat", "cond-mat.graph.gz", 500, {maps_kind::dcm, maps_kind::mix});
    for (taco::core_id cores : counts)
        benchmark::RegisterBenchmark(("rdf_task/lubm1/cores:" + std::to_string(cores)).c_str(), rdf_task, cores)
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
    return true;
}();

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, nullptr, "bench_scc_apps"); }
