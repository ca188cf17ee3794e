#pragma once
// What every paired benchmark shares: the smoke switch, clock, medians and
// the series of alternating (baseline, taco) batch pairs whose per-pair
// ratios are the figures that mean something on a machine whose cross-core
// latency shifts by ~4x within seconds (see bench/README.md).
#include <benchmark/benchmark.h>
#include <taco/config.hpp>
#include <taco/paired_timing.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace bench {

// Clock, medians, batches: taco/paired_timing.hpp, which the controller
// bench users run on their own types shares.
using taco::timing::calibrate;
using taco::timing::clock_type;
using taco::timing::median;
using taco::timing::ns_since;
using taco::timing::quantile;
using taco::timing::time_batch;

/// BENCH_SMOKE=1 (CI): every size shrinks, only "does it run" is checked.
inline bool smoke() {
    static const bool on = [] {
        const char* s = std::getenv("BENCH_SMOKE");
        return s && *s && std::string(s) != "0";
    }();
    return on;
}

/// The same, with each result checked: a wrong one is counted, not just
/// timed, so a fast wrong answer cannot pass as a figure.
template <class Op>
double time_batch(std::size_t n, Op&& op, double expected, std::size_t& wrong) {
    return time_batch(n, [&] { wrong += op() != expected; });
}

using taco::timing::available_cpus;

/// Batch sizes of a paired benchmark: (baseline, taco) pairs = benchmark
/// iterations, and operations per batch.
struct sizes {
    int pairs;
    std::size_t batch;
};

/// Set when a benchmark could not check its result; main() then exits non-zero.
inline bool failed = false;

inline void fail(benchmark::State& state, const char* why) {
    failed = true;
    state.SkipWithError(why);
}

/// Per-operation times of alternating (baseline, taco) batch pairs.
class paired_series {
public:
    /// One pair. The order flips every pair: a latency shift of the host
    /// landing between the two batches then favours each side equally often,
    /// instead of always the second one.
    template <class Base, class Ours>
    void run_pair(benchmark::State& state, Base&& base, Ours&& ours) {
        double b = 0, o = 0;
        taco::timing::rotated_round(base_.size(), 2, [&](std::size_t i) {
            if (i == 0) b = base();
            else o = ours();
        });
        base_.push_back(b);
        ours_.push_back(o);
        state.SetIterationTime(o * 1e-9);
    }

    /// Latency benchmarks: lower is better, ratio = ours / base.
    void report_latency(benchmark::State& state, bool oversubscribed) const {
        std::vector<double> r(base_.size());
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = ours_[i] / base_[i];
        state.counters["base_ns"] = median(base_);
        state.counters["ours_ns"] = median(ours_);
        put_ratios(state, r);
        state.counters["oversubscribed"] = oversubscribed;
    }

    /// Rate benchmarks: higher is better, ratio = ours rate / base rate.
    void report_rate(benchmark::State& state, bool oversubscribed) const {
        std::vector<double> r(base_.size());
        for (std::size_t i = 0; i < r.size(); ++i) r[i] = base_[i] / ours_[i];
        state.counters["base_ns"] = median(base_);
        state.counters["ours_ns"] = median(ours_);
        state.counters["base_mops"] = 1e3 / median(base_);
        state.counters["ours_mops"] = 1e3 / median(ours_);
        put_ratios(state, r);
        state.counters["oversubscribed"] = oversubscribed;
    }

private:
    static void put_ratios(benchmark::State& state, const std::vector<double>& r) {
        state.counters["ratio_median"] = median(r);
        state.counters["ratio_p10"] = quantile(r, 0.1);
        state.counters["ratio_p90"] = quantile(r, 0.9);
    }

    std::vector<double> base_, ours_;
};

/// Into the JSON's context: whether the framework's debug checks were
/// compiled in (taco_debug_checks: on in Debug and RelWithDebInfo builds)
/// and whether the sizes were the smoke run's. Figures from either are not
/// the framework's speed; the report script refuses them.
inline void add_build_context() {
    benchmark::AddCustomContext("taco_debug_checks", TACO_DEBUG_CHECKS ? "1" : "0");
    benchmark::AddCustomContext("bench_smoke", smoke() ? "1" : "0");
}

/// The main() of every benchmark binary: Google Benchmark's, with the build
/// context, plus a non-zero exit when a benchmark failed its own result
/// check. register_all may be null (the benchmarks registered themselves).
inline int run_main(int argc, char** argv, void (*register_all)(), const char* name) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    add_build_context();
    if (register_all) register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (failed) std::fprintf(stderr, "%s: a benchmark failed its result check\n", name);
    return failed ? 1 : 0;
}

} // namespace bench
