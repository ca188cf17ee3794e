// The multilevel search's schedules against each other in the same run
// (apps/modularity/README.md, "the schedule"): on the shipped graphs of 10k
// to 100k vertices + edges, where the paced schedule runs by default, pairs
// of runs, the thorough schedule (the baseline) and the paced one, the same
// seed in both runs of a pair (pair k: seed k + 1), their order flipping
// every pair. The figure is the median of the per-pair time ratios, paced /
// thorough (ratio_median, with p10 and p90): the host's latency shifts move
// both runs of a pair alike. Time is the search alone (cluster_result's
// seconds). Beside it, each schedule's mean Q over the pairs' seeds and
// their difference (q_gain, paced - thorough), since the schedule trades
// work for Q.
//
//   bench_schedule --benchmark_out=schedule.json --benchmark_out_format=json
//   (BENCH_SMOKE=1: 2 pairs a graph)
#include <benchmark/benchmark.h>
#include <paired.hpp>

#include <string>
#include <vector>

#include <modularity/cluster.hpp>
#include <modularity/graph_reader.hpp>

using namespace modularity;

namespace {

int pairs() { return bench::smoke() ? 2 : 12; }

void paced_vs_thorough(benchmark::State& state, const std::string& file) {
    const graph_data g = read_graph(std::string(MODULARITY_DATA) + "/" + file);
    if (schedule_for(ensemble_params{}, std::size_t(g.vertex_count()) + g.undirected_edge_count()) !=
        ensemble_schedule::paced)
        return bench::fail(state, "the graph is out of the paced schedule's range: it measures no default");
    bench::paired_series series;
    std::vector<double> q_base, q_ours;
    bool oversubscribed = false, wrong_schedule = false;
    std::uint64_t seed = 0;
    auto run = [&](ensemble_schedule s, std::vector<double>& q) {
        cluster_options o;
        o.cores = 2;
        o.seed = seed;
        o.schedule = s;
        const cluster_result r = cluster_graph(g, o);
        wrong_schedule |= r.schedule != s;
        oversubscribed |= r.oversubscribed;
        q.push_back(r.modularity);
        return r.seconds * 1e9;
    };
    for (auto _ : state) {
        ++seed;
        series.run_pair(
            state, [&] { return run(ensemble_schedule::thorough, q_base); },
            [&] { return run(ensemble_schedule::paced, q_ours); });
    }
    series.report_latency(state, oversubscribed);
    auto mean = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return v.empty() ? 0.0 : s / double(v.size());
    };
    const double base = mean(q_base), ours = mean(q_ours);
    state.counters["q_thorough"] = base;
    state.counters["q_paced"] = ours;
    state.counters["q_gain"] = ours - base;
    if (wrong_schedule) bench::fail(state, "a run did not take the schedule it was given");
}

void register_all() {
    // n + m from 11.5k (power) to 64k (cond-mat): the range the paced schedule has by default
    for (const char* file :
         {"power.graph.gz", "hep-th.graph.gz", "polblogs.graph.gz", "PGPgiantcompo.graph.gz", "cond-mat.graph.gz"}) {
        std::string name = file;
        name = "paced_vs_thorough/" + name.substr(0, name.find('.'));
        benchmark::RegisterBenchmark(name.c_str(), paced_vs_thorough, std::string(file))
            ->UseManualTime()
            ->Iterations(pairs())
            ->Unit(benchmark::kMillisecond);
    }
}

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, register_all, "bench_schedule"); }
