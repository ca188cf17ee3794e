// The MESH paper's experiment (section IV.B, Figures 6 and 7): globally
// greedy vertex moving on the world-trade graph (to convergence, 63 moves)
// and on cond-mat (the first 500 moves, as the paper ran Patents), for every
// map variant x controller, on threads and on processes, 1, 2 and 4 cores
// (4 oversubscribed on this 2-CPU machine, labelled). The time is that of the
// steps alone (manual time), as the paper measured. Speed-ups are relative
// to 1-core DCM + Broadcast on the same platform, the paper's baseline; the
// table script (greedy_table.py) computes them from the JSON.
//
//   bench_greedy --benchmark_repetitions=3 --benchmark_enable_random_interleaving=true
//                --benchmark_out=greedy.json --benchmark_out_format=json
//   (BENCH_SMOKE=1: 10 moves, 1 and 2 cores)
#include <benchmark/benchmark.h>
#include <paired.hpp>

#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include <modularity/cluster.hpp>
#include <modularity/graph_reader.hpp>

using namespace modularity;

namespace {

const bool smoke = std::getenv("BENCH_SMOKE") != nullptr;

const graph_data& graph(const std::string& file) {
    static std::map<std::string, graph_data> cache;
    auto it = cache.find(file);
    if (it == cache.end()) it = cache.emplace(file, read_graph(std::string(MODULARITY_DATA) + "/" + file)).first;
    return it->second;
}

void greedy(benchmark::State& state, std::string file, std::uint64_t steps, execution_mode p, maps_kind m,
            controller_kind c, taco::core_id cores) {
    const graph_data& g = graph(file);
    cluster_options o;
    o.algo = algorithm::greedy;
    o.cores = cores;
    o.platform = p;
    o.maps = m;
    o.controller = c;
    o.max_steps = smoke ? 10 : steps;
    cluster_result r;
    for (auto _ : state) {
        r = cluster_graph(g, o);
        state.SetIterationTime(r.seconds);
    }
    state.counters["steps"] = double(r.steps);
    state.counters["modularity"] = r.modularity;
    state.counters["cores"] = cores;
    state.counters["oversubscribed"] = r.oversubscribed ? 1 : 0;
    if (r.oversubscribed) state.SetLabel("oversubscribed: " + std::to_string(cores) + " cores on " +
                                         std::to_string(std::thread::hardware_concurrency()) + " CPUs");
}

const bool registered = [] {
    struct input {
        const char* name;
        const char* file;
        std::uint64_t steps;
    };
    const input inputs[] = {{"world_trade", "WorldImport1999.el", 0}, {"cond_mat", "cond-mat.graph.gz", 500}};
    for (const input& in : inputs)
        for (execution_mode p : {execution_mode::threads, execution_mode::processes})
            for (maps_kind m : all_maps)
                for (controller_kind c : all_controllers) {
                    if (c == controller_kind::none && p == execution_mode::processes) continue; // stale: refused
                    for (taco::core_id cores : {1u, 2u, 4u}) {
                        if (smoke && cores > 2) continue;
                        const std::string name = std::string("greedy/") + in.name + "/" + modularity::name(p) + "/" +
                                                 modularity::name(m) + "/" + modularity::name(c) +
                                                 "/cores:" + std::to_string(cores);
                        benchmark::RegisterBenchmark(name.c_str(), greedy, in.file, in.steps, p, m, c, cores)
                            ->UseManualTime()
                            ->Iterations(1)
                            ->Unit(benchmark::kMillisecond);
                    }
                }
    return true;
}();

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, nullptr, "bench_greedy"); }
