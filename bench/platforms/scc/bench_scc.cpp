// TACO on the emulated SCC, in modelled cycles of the chip (cost_model.hpp),
// beside the papers' measurements (platforms/scc/README.md has the table):
//
//   round_trip/{poll,halt}/{hardware,with_compute}
//                                   a sync call to the neighbouring core (CCI paper: ~2 000 / ~3 000)
//   reduce/{poll,halt}/{hardware,with_compute}/cores:N
//                                   a reduce over one member per core, N = 2..48
//                                   (CCI paper, Figure 4: 11 000 polling / 14 000 with interrupts at 48)
//
// hardware: the chip's operations alone; with_compute: plus the runtime's
// instructions, counted in basic blocks (this program is built with
// tacomesh::scc_counted) at cost_model::cycles_per_block. The round trip's
// with_compute rows also report the blocks it charges (blocks_per_round_trip:
// its cycles less the hardware's, over the price per block) and the price
// per block that would make it the paper's (fitted_cycles_per_block: the
// paper's cycles less the hardware's, over those blocks): cost_model.hpp's
// calibration.
//   preempt_latency/poll/{hardware,unpriced_memory}
//                                   an urgent invocation to a core computing inside
//                                   taco::preemptible: send to method start, and what the
//                                   interrupt adds to the same invocation polled
//                                   (interrupt_cycles; CCI paper: ~450 + a 60-90 write);
//                                   unpriced_memory: the register write and the handler
//                                   alone, without the handler's loads and stores
//   flush/{page,whole}              the L2 flush routine over a 4 KB page / the whole cache
//                                   (MESH paper: 47 100 / 582 000)
//
// The benchmark's time is host time and means nothing here; the counters
// modelled_cycles (and paper_cycles where the papers give a figure) are the
// result. Cores above the host's CPUs are oversubscribed (labelled); the
// modelled cycles do not depend on it (platform.hpp).
//   (BENCH_SMOKE=1: fewer rounds, up to 8 cores)
#include <benchmark/benchmark.h>
#include <paired.hpp>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include <taco/taco.hpp>
#include <tacomesh/scc/emulated/experiments.hpp>

namespace scc = tacomesh::scc::emulated;

namespace {

const bool smoke = std::getenv("BENCH_SMOKE") != nullptr;

scc::config chip(taco::core_id cores, scc::idle_policy idle, bool compute) {
    scc::config c{.cores = cores, .idle = idle};
    if (!compute) c.costs.compute = scc::compute_model::none;
    return c;
}

void label(benchmark::State& state, taco::core_id cores) {
    state.counters["cores"] = cores;
    if (cores > std::thread::hardware_concurrency())
        state.SetLabel("oversubscribed: " + std::to_string(cores) + " emulated cores on " +
                       std::to_string(std::thread::hardware_concurrency()) + " CPUs");
}

void round_trip(benchmark::State& state, scc::idle_policy idle, bool compute) {
    label(state, 2);
    const bool poll = idle == scc::idle_policy::poll;
    std::uint64_t per_call = 0;
    for (auto _ : state) per_call = scc::round_trip_cycles(chip(2, idle, compute), smoke ? 20 : 1000);
    state.counters["modelled_cycles"] = double(per_call);
    state.counters["paper_cycles"] = double(poll ? scc::cost_model{}.paper_round_trip_polling
                                                 : scc::cost_model{}.paper_round_trip_halting);
    if (compute) { // the calibration's own figures (experiments.hpp)
        const scc::calibration cal = scc::calibrated({}, smoke ? 20 : 200);
        state.counters["blocks_per_round_trip"] = poll ? cal.blocks_polling : cal.blocks_halting;
        state.counters["fitted_cycles_per_block"] = cal.costs.cycles_per_block;
    }
}

void preempt_latency(benchmark::State& state, bool priced) {
    label(state, 3);
    scc::config cfg = chip(3, scc::idle_policy::poll, false);
    cfg.costs.price_memory = priced && cfg.costs.price_memory;
    scc::preemption_figures f;
    for (auto _ : state) f = scc::preempt_latency(cfg);
    if (f.preempted == 0 || f.halted != 1) state.SkipWithError("no urgent invocation interrupted the computation");
    const scc::cost_model costs{};
    state.counters["modelled_cycles"] = double(f.preempted);
    state.counters["polled_cycles"] = double(f.polled);
    state.counters["interrupt_cycles"] = double(f.preempted - f.polled);
    // The paper's: an interrupt register write of 60-90 (75), and handling "around 450".
    state.counters["paper_cycles"] = 450 + 75;
    state.counters["register_access"] = double(costs.register_access);
    state.counters["interrupt_handling"] = double(costs.interrupt_handling);
}

void reduce(benchmark::State& state, scc::idle_policy idle, bool compute, taco::core_id cores) {
    label(state, cores);
    std::uint64_t per_reduce = 0;
    try {
        for (auto _ : state) per_reduce = scc::reduce_cycles(chip(cores, idle, compute), smoke ? 5 : 100);
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
        return;
    }
    state.counters["modelled_cycles"] = double(per_reduce);
    if (cores == 48) state.counters["paper_cycles"] = idle == scc::idle_policy::poll ? 11000 : 14000;
}

void flush(benchmark::State& state, bool whole) {
    label(state, 1);
    std::uint64_t spent = 0;
    for (auto _ : state) {
        scc::chip chip(1, std::size_t(1) << 20, {});
        scc::hardware h(chip, 0);
        const std::uint64_t before = h.cycles();
        if (whole) h.flush_l2();
        else h.flush_l2_range(0, 4096);
        spent = h.cycles() - before;
    }
    state.counters["modelled_cycles"] = double(spent);
    state.counters["paper_cycles"] = whole ? 582000 : 47100;
}

const bool registered = [] {
    for (auto idle : {scc::idle_policy::poll, scc::idle_policy::halt})
        for (bool compute : {false, true}) {
            const std::string variant = std::string(name(idle)) + (compute ? "/with_compute" : "/hardware");
            benchmark::RegisterBenchmark(("round_trip/" + variant).c_str(), round_trip, idle, compute)->Iterations(1);
            for (taco::core_id cores : {2u, 4u, 8u, 16u, 32u, 48u}) {
                if (smoke && cores > 8) continue;
                benchmark::RegisterBenchmark(("reduce/" + variant + "/cores:" + std::to_string(cores)).c_str(), reduce,
                                             idle, compute, cores)
                    ->Iterations(1);
            }
        }
    benchmark::RegisterBenchmark("preempt_latency/poll/hardware", preempt_latency, true)->Iterations(1);
    benchmark::RegisterBenchmark("preempt_latency/poll/unpriced_memory", preempt_latency, false)->Iterations(1);
    benchmark::RegisterBenchmark("flush/page", flush, false)->Iterations(1);
    benchmark::RegisterBenchmark("flush/whole", flush, true)->Iterations(1);
    return true;
}();

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, nullptr, "bench_scc"); }
