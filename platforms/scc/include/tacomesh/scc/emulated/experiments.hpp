#pragma once
// The papers' micro-benchmarks on the emulated chip, in modelled cycles:
// what the cost model is calibrated on (cost_model.hpp) and what
// scc_figures and the benchmarks report. The CCI paper's two:
//
//   round_trip_cycles(cfg, rounds)  a sync call from core 0 to core 1 and back
//                                   (CCI paper, Figure 2: ~2 000 polling, ~3 000 with hlt)
//   reduce_cycles(cfg, rounds[, tree])
//                                   a reduce over one member per core, from core 0, on a
//                                   binomial tree or the one given (Figure 4: 11 000
//                                   polling, 14 000 with hlt at 48 cores)
//   preempt_latency(cfg)            an urgent invocation from core 0 to core 1, once while
//                                   core 1 polls and once while it computes inside
//                                   taco::preemptible: cycles from the send to the
//                                   method's start (section V: the interrupt's ~450
//                                   cycles, plus its register write, 60-90)
//
// and the MESH paper's two, the prices its controllers rest on:
//
//   uncached_read_cycles(cfg, reads, spread)
//                                   every core reads uncached words of one memory
//                                   controller (or of all four) back to back: the mean
//                                   cycles of a read (Figure 4: flat to three readers,
//                                   then linear)
//   flush_cycles(cfg, lines, modified)
//                                   the L2 flush routine over lines the core has read
//                                   (or written) (Figure 5: about 300 N + 7 500; 47 100
//                                   for a 4 KB page, 582 000 for the whole cache, a
//                                   modified line about 80 more)
//
// The last two need memory priced (cost_model::price_memory, a program
// built with tacomesh::scc_counted): without it they throw.
//
// The CCI paper's two run once before they are measured, so the channels'
// lines and the tree's helpers are in place, as in the paper's averages of
// many rounds.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <taco/taco.hpp>
#include <tacomesh/scc/emulated/platform.hpp>

namespace tacomesh::scc::emulated {

namespace detail {
inline std::uint32_t whoami() { return taco::this_core(); }
struct reduce_member {
    long value() const { return long(taco::this_core()) + 1; }
};
} // namespace detail

/// Modelled cycles of one sync call to core 1 and its answer (cfg.cores >= 2).
inline std::uint64_t round_trip_cycles(config cfg, int rounds) {
    if (cfg.cores < 2) throw std::invalid_argument("round_trip_cycles: a round trip needs 2 cores, config.cores is 1");
    std::uint64_t per_call = 0;
    taco::run(cfg, [&] {
        (void)taco::sync(1, &detail::whoami);
        const std::uint64_t before = cycles();
        for (int i = 0; i < rounds; ++i) (void)taco::sync(1, &detail::whoami);
        per_call = (cycles() - before) / std::uint64_t(rounds > 0 ? rounds : 1);
    });
    return per_call;
}

namespace detail {
/// Core 1's side of preempt_latency: a computation that never polls, and
/// the urgent method that stops it.
struct preempted_core {
    std::atomic<bool> stop{false};
    long compute(long limit_ms) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
        return taco::preemptible([&] {
            std::uint64_t x = 88172645463325252ull;
            for (std::uint64_t i = 0;; ++i) {
                if (stop.load(std::memory_order_relaxed)) return 1L;
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                if ((i & 0xFFFF) == 0 && std::chrono::steady_clock::now() > end) return x == 0 ? 2L : 0L;
            }
        });
    }
    void halt() { stop.store(true, std::memory_order_relaxed); }
    struct seen {
        std::uint64_t cycles;
        bool interrupted;
    };
    seen poke() { return {cycles(), taco::preempting()}; }
};
inline long nothing() { return 0; }
} // namespace detail

/// What preempt_latency measured.
struct preemption_figures {
    std::uint64_t polled = 0;    ///< send to method start, core 1 polling
    std::uint64_t preempted = 0; ///< the same, core 1 computing inside taco::preemptible (0: never interrupted)
    long halted = -1;            ///< 1: the urgent halt stopped the computation (before its 10 s)
    int pokes = 0;               ///< urgent calls until one interrupted it (the first may come before it starts)
    std::uint64_t preemptions = 0; ///< core 1's interruptions (run_report)
};

/// Modelled cycles from an urgent invocation's send to its method's start
/// on core 1 (cfg.cores >= 3: core 2 moves core 0's clock ahead of core 1's
/// by round trips first, so that the message and the interrupt set the
/// start, not core 1's own clock). Meaningful with computation left out
/// of the clock (compute_model::none, or compute_cycles_per_ns = 0) and in
/// host order (modelled-time order interrupts nothing).
inline preemption_figures preempt_latency(config cfg) {
    if (cfg.cores < 3) throw std::invalid_argument("preempt_latency: needs 3 cores, config.cores is " + std::to_string(cfg.cores));
    preemption_figures f;
    run_report report;
    cfg.report = &report;
    taco::run(cfg, [&] {
        const auto gp = taco::new_on<detail::preempted_core>(1).get();
        const auto urgent_poke = [&](bool& interrupted) {
            for (int i = 0; i < 20; ++i) (void)taco::sync(2, &detail::nothing);
            const std::uint64_t before = cycles();
            const auto s = taco::call(gp, taco::m2f(&detail::preempted_core::poke), taco::urgent).get();
            interrupted = s.interrupted;
            return s.cycles - before;
        };
        bool interrupted = false;
        (void)urgent_poke(interrupted); // once before it is measured, as the others (the top of this file)
        f.polled = urgent_poke(interrupted);
        taco::future<long> done;
        taco::async(gp, taco::m2f(&detail::preempted_core::compute, 10'000L), done);
        interrupted = false;
        while (!interrupted && f.pokes < 1000 && !done.ready()) {
            ++f.pokes;
            const std::uint64_t c = urgent_poke(interrupted);
            if (interrupted) f.preempted = c;
        }
        taco::async(gp, taco::m2f(&detail::preempted_core::halt), taco::urgent);
        f.halted = done.get();
        taco::delete_on(gp);
    });
    f.preemptions = report.preemptions.at(1);
    return f;
}

/// Modelled cycles of one reduce (a sum) over a member on every core,
/// started and finished on core 0. Throws if a sum comes out wrong.
inline std::uint64_t reduce_cycles(config cfg, int rounds, taco::topology tree = taco::topology::binomial()) {
    std::uint64_t per_reduce = 0;
    bool wrong = false;
    const long cores = long(cfg.cores);
    taco::run(cfg, [&] {
        std::vector<taco::global_ptr<detail::reduce_member>> members;
        for (taco::core_id c = 0; c < cfg.cores; ++c) members.push_back(taco::new_on<detail::reduce_member>(c).get());
        auto g = taco::make_group(std::span<const taco::global_ptr<detail::reduce_member>>(members), tree);
        auto once = [&] {
            taco::future<long> sum;
            taco::reduce(g, taco::m2f(&detail::reduce_member::value), std::plus<long>{}, sum);
            wrong = wrong || sum.get() != cores * (cores + 1) / 2;
        };
        once();
        const std::uint64_t before = cycles();
        for (int i = 0; i < rounds; ++i) once();
        per_reduce = (cycles() - before) / std::uint64_t(rounds > 0 ? rounds : 1);
        taco::destroy_group(g);
        for (auto m : members) taco::delete_on(m);
    });
    if (wrong) throw std::logic_error("reduce_cycles: a reduce gave the wrong sum");
    return per_reduce;
}

namespace detail {
inline void require_priced(const config& cfg, const char* what) {
    if (!cfg.costs.price_memory || !default_price_memory)
        throw std::invalid_argument(std::string(what) +
                                    ": loads and stores are not priced here (build the program with the CMake "
                                    "target tacomesh::scc_counted, outside the sanitizer builds, and leave "
                                    "cost_model::price_memory on)");
}
/// `reads` uncached loads of NCM words `stride` bytes apart, round the
/// region (the same logical addresses on every core); the mean cycles of one.
inline double read_uncached(std::size_t stride, int reads) {
    const std::span<std::byte> ncm = taco::detail::runtime().region(taco::memory_mode::non_cached);
    const std::size_t bytes = ncm.size() / stride * stride;
    if (bytes == 0) throw std::invalid_argument("uncached_read_cycles: config.non_cached_bytes holds no page");
    const volatile std::byte* words = ncm.data();
    const std::uint64_t before = cycles();
    std::size_t at = 0;
    for (int i = 0; i < reads; ++i) {
        (void)words[at];
        at = (at + stride) % bytes;
    }
    return double(cycles() - before) / double(reads > 0 ? reads : 1);
}
} // namespace detail

/// MESH paper, Figure 4: each of cfg.cores cores reads `reads` uncached
/// (NCM) words back to back, all of them held by memory controller 0, or,
/// `spread`, by all of them (the SCC's four) in turn; the mean cycles of a read over the cores.
/// The words are a page apart, so that `spread` walks the controllers' interleave.
inline double uncached_read_cycles(config cfg, int reads, bool spread = false) {
    detail::require_priced(cfg, "uncached_read_cycles");
    const memory_prices& m = cfg.costs.memory;
    // One controller: a page, then the `controllers - 1` pages the others hold.
    const std::size_t stride = spread ? m.interleave_bytes : m.interleave_bytes * cfg.shape.controllers;
    double sum = 0;
    taco::run(cfg, [&] {
        std::vector<taco::future<double>> others;
        for (taco::core_id c = 1; c < cfg.cores; ++c) others.push_back(taco::call(c, &detail::read_uncached, stride, reads));
        sum = detail::read_uncached(stride, reads);
        for (auto& f : others) sum += f.get();
    });
    return sum / double(cfg.cores);
}

/// MESH paper, Figure 5: the cycles of the L2 flush routine (a write-back
/// of DCM memory) over `lines` lines that the core has just read, or,
/// `modified`, read and written. A range of a whole L2 or more flushes all of it.
inline std::uint64_t flush_cycles(config cfg, std::size_t lines, bool modified = false) {
    detail::require_priced(cfg, "flush_cycles");
    cfg.cores = 1;
    std::uint64_t cost = 0;
    taco::run(cfg, [&] {
        const std::span<std::byte> dcm = taco::detail::runtime().region(taco::memory_mode::cached);
        const std::size_t bytes = lines * line_bytes;
        if (bytes > dcm.size()) throw std::invalid_argument("flush_cycles: config.cached_bytes holds fewer lines");
        volatile std::byte* p = dcm.data();
        // A store that misses does not allocate a line (no write-allocate,
        // section IV.A): a modified line is one read, then written. The
        // store goes to another word of the line: the instrumentation
        // reports one access per address between calls, and a store right
        // after a load of the same bytes would not be seen.
        for (std::size_t at = 0; at < bytes; at += line_bytes) {
            (void)p[at];
            if (modified) p[at + 4] = std::byte{1};
        }
        const std::uint64_t before = cycles();
        taco::detail::runtime().write_back(dcm.data(), bytes);
        cost = cycles() - before;
    });
    return cost;
}

/// The fit of cost_model::cycles_per_block, for the build that runs it.
struct calibration {
    cost_model costs;                                ///< `base` with the fitted price per block
    std::uint64_t fixed_polling = 0, fixed_halting = 0; ///< a round trip without computation: hardware and memory
    double blocks_polling = 0, blocks_halting = 0;   ///< counted blocks on a round trip's path
};

/// Fit cycles_per_block to the paper's round trips (cost_model's
/// paper_round_trip_*), and nothing else: a round trip's cycles without
/// computation (the hardware's operations and, if priced, the runtime's
/// loads and stores) and at one cycle per block give the blocks on its
/// path; the price is what brings each to the paper's figure, the mean of
/// polling and halting. Every other figure is then a prediction.
inline calibration calibrated(cost_model base = {}, int rounds = 200) {
    calibration c;
    auto trip = [&](idle_policy idle, compute_model m, double per_block) {
        config cfg{.cores = 2, .idle = idle, .costs = base, .order = core_order::modelled};
        cfg.costs.compute = m;
        cfg.costs.cycles_per_block = per_block;
        return round_trip_cycles(cfg, rounds);
    };
    c.costs = base;
    if (base.compute != compute_model::counted_blocks) return c; // nothing to fit
    c.fixed_polling = trip(idle_policy::poll, compute_model::none, 0);
    c.fixed_halting = trip(idle_policy::halt, compute_model::none, 0);
    // Blocks from the difference at 1 and 2 cycles per block: what the
    // priced accesses add through the clock's position cancels.
    c.blocks_polling = double(trip(idle_policy::poll, compute_model::counted_blocks, 2)) -
                       double(trip(idle_policy::poll, compute_model::counted_blocks, 1));
    c.blocks_halting = double(trip(idle_policy::halt, compute_model::counted_blocks, 2)) -
                       double(trip(idle_policy::halt, compute_model::counted_blocks, 1));
    auto fit = [](std::uint64_t paper, std::uint64_t fixed, double blocks) {
        return blocks > 0 && paper > fixed ? double(paper - fixed) / blocks : 0.0;
    };
    c.costs.cycles_per_block = (fit(base.paper_round_trip_polling, c.fixed_polling, c.blocks_polling) +
                                fit(base.paper_round_trip_halting, c.fixed_halting, c.blocks_halting)) /
                               2;
    return c;
}

} // namespace tacomesh::scc::emulated
