// tacomesh invocation benchmarks (Google Benchmark), each paired with a raw
// baseline measured in the same run, on the same two threads, alternating.
//
// Why alternate: on this kind of machine (2 vCPUs that the host moves) the
// cross-core latency changes by ~4x within seconds, so two numbers measured
// a few seconds apart cannot be compared. Every benchmark iteration runs one
// batch of the baseline and one batch of taco back to back, and the figure
// that matters is the median of the per-pair ratios.
//
// Why on taco's own threads: both sides then share the pinning, the caches
// and the scheduling. Core 0 (main) sends core 1 an invocation "run the raw
// baseline for K messages"; core 1 leaves taco's loop for the raw one, core 0
// drives the other side, and both return to taco for the next taco batch.
//
// Counters (per benchmark): base_ns / ours_ns = medians over batches of the
// per-operation time, ratio_median = median over pairs of ours/base (for the
// rate benchmark: ours rate / base rate), ratio_p10 / ratio_p90 its spread,
// oversubscribed = 1 when there are more cores than CPUs. The time column
// (manual time) is taco's mean per-operation time.
//
// BENCH_SMOKE=1 shrinks every size (CI smoke run).
#include <tacomesh/posix.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "baselines.hpp"
#include <paired.hpp>

namespace {

namespace posix = tacomesh::posix;
using bench::clock_type;
using bench::fail;
using bench::ns_since;
using bench::paired_series;
using bench::smoke;

/// Batch sizes: large enough that a batch is far longer than a clock read
/// and a start-up hiccup, short enough (about a millisecond, a few for the
/// sleeping pair) that the host rarely moves a vCPU in the middle of a pair.
/// Each benchmark takes 1-2 s.
using bench::sizes;
sizes polling_rt_sizes() { return smoke() ? sizes{4, 200} : sizes{600, 2000}; }
sizes one_way_sizes() { return smoke() ? sizes{4, 2000} : sizes{400, 20000}; }
sizes sleeping_rt_sizes() { return smoke() ? sizes{4, 20} : sizes{300, 200}; }

/// The invoked object: trivial methods, so the figures are the invocation's.
struct target {
    std::uint64_t n = 0;
    std::uint64_t next() { return ++n; }
    void inc() { ++n; }
    std::uint64_t count() const { return n; }
    std::uint64_t length(std::string s) { return n += s.size(); }
};

/// The raw baseline lives outside taco's global address space on purpose:
/// it is plain shared memory of the two threads. Its address travels to core
/// 1 inside a captured lambda (a raw pointer is no invocation argument).
template <class Raw>
void start_on_core1(Raw* raw, void (*body)(Raw*, std::size_t), std::size_t n) {
    taco::async(taco::core_id{1}, [raw, body, n] { body(raw, n); });
}

/// One taco round trip, as an application writes it.
std::uint64_t taco_round_trip(taco::global_ptr<target> t) {
    taco::future<std::uint64_t> f;
    taco::async(t, taco::m2f(&target::next), f);
    return f.get();
}

/// taco's side of a latency pair: per-operation ns of `batch` calls of
/// trip(), after an untimed first one (the other core may still be leaving
/// the raw loop).
template <class Trip>
double timed_trips(std::size_t batch, Trip&& trip) {
    std::uint64_t v = trip();
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < batch; ++i) v += trip();
    const double ns = ns_since(t0);
    benchmark::DoNotOptimize(v);
    return ns / double(batch);
}

// ---- a. polling round trip ----------------------------------------------------

void polling_round_trip(benchmark::State& state) {
    const sizes sz = polling_rt_sizes();
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report};
    paired_series series;
    taco::run(cfg, [&] {
        const auto t = taco::new_on<target>(1).get();
        const auto rings = std::make_unique<bench::ring_pair>();
        const auto base = [&] {
            start_on_core1<bench::ring_pair>(rings.get(), [](bench::ring_pair* r, std::size_t n) { r->echo(n); },
                                             sz.batch + 1);
            // Untimed first trip: it also waits until core 1 has entered the loop.
            std::uint64_t v = rings->round_trip(0);
            const auto t0 = clock_type::now();
            for (std::size_t i = 0; i < sz.batch; ++i) v = rings->round_trip(v);
            const double ns = ns_since(t0);
            if (v != sz.batch + 1) fail(state, "raw ring round trip lost a message");
            return ns / double(sz.batch);
        };
        const auto ours = [&] { return timed_trips(sz.batch, [&] { return taco_round_trip(t); }); };
        for (auto _ : state) series.run_pair(state, base, ours);
        taco::delete_on(t);
    });
    series.report_latency(state, report.oversubscribed);
}

// ---- a'. a round trip carrying a small string ----------------------------------
//
// A sync whose argument is a 24-character std::string (carried: its bytes go
// ahead of the invocation as one piece), against taco's own round trip with a
// plain argument in the same run: what carrying costs.

void carried_round_trip(benchmark::State& state) {
    const sizes sz = polling_rt_sizes();
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report};
    paired_series series;
    taco::run(cfg, [&] {
        const auto t = taco::new_on<target>(1).get();
        const std::string text(24, 's');
        const auto base = [&] { return timed_trips(sz.batch, [&] { return taco_round_trip(t); }); };
        const auto ours = [&] { return timed_trips(sz.batch, [&] { return taco::sync(t, &target::length, text); }); };
        for (auto _ : state) series.run_pair(state, base, ours);
        taco::delete_on(t);
    });
    series.report_latency(state, report.oversubscribed);
}

// ---- a''. the CCI paper's channel round trip -------------------------------------
//
// Core 0 writes an event to a channel whose sink is on core 1; there the sink
// (a preallocated activity, as in the paper's experiment, or a function run
// straight from the message) writes the result event back to a channel to a
// future on core 0. Against taco's RMI round trip (async + future, what sync
// does) in the same run: what choosing the action at the destination costs.

struct echo_request {
    std::uint64_t value;
    taco::channel<std::uint64_t> reply;
};
struct echo_answer {
    void operator()(echo_request r) const { taco::emit(r.reply, r.value + 1); }
};
struct echo_sinks {
    taco::activity_sink<echo_request, echo_answer> activity{echo_answer{}};
    taco::function_sink<echo_request, echo_answer> function{echo_answer{}};
    taco::channel<echo_request> channel(bool use_activity) {
        return use_activity ? taco::channel_to(activity) : taco::channel_to(function);
    }
};

void channel_round_trip(benchmark::State& state, bool use_activity) {
    const sizes sz = polling_rt_sizes();
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report};
    paired_series series;
    taco::run(cfg, [&] {
        const auto t = taco::new_on<target>(1).get();
        const auto sinks = taco::new_on<echo_sinks>(1).get();
        const auto in = taco::sync(sinks, &echo_sinks::channel, use_activity);
        std::uint64_t last = 0; // each answer is the next request: a lost event shows in the count
        const auto trip = [&] {
            taco::future<std::uint64_t> f;
            taco::emit(in, echo_request{last, taco::channel_to(f)});
            return last = f.get();
        };
        const auto base = [&] { return timed_trips(sz.batch, [&] { return taco_round_trip(t); }); };
        const auto ours = [&] {
            last = 0;
            const double ns = timed_trips(sz.batch, trip);
            if (last != sz.batch + 1) fail(state, "channel round trip lost an event");
            return ns;
        };
        for (auto _ : state) series.run_pair(state, base, ours);
        taco::delete_on(sinks);
        taco::delete_on(t);
    });
    series.report_latency(state, report.oversubscribed);
}

// ---- b. one-way fire-and-forget rate ------------------------------------------

void one_way_rate(benchmark::State& state) {
    const sizes sz = one_way_sizes();
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report};
    paired_series series;
    std::uint64_t deferred = 0, sent = 0;
    taco::run(cfg, [&] {
        const auto t = taco::new_on<target>(1).get();
        const auto rings = std::make_unique<bench::ring_pair>();
        const auto base = [&] {
            start_on_core1<bench::ring_pair>(rings.get(), [](bench::ring_pair* r, std::size_t n) { r->drain(n); },
                                             sz.batch);
            rings->round_trip(0);
            bench::payload p{};
            const auto t0 = clock_type::now();
            for (std::size_t i = 0; i < sz.batch; ++i) {
                p.words[0] = i;
                rings->forward.push(p);
            }
            const std::uint64_t sum = rings->back.pop().words[0];
            const double ns = ns_since(t0);
            if (sum != sz.batch * (sz.batch - 1) / 2) fail(state, "raw ring lost or reordered messages");
            return ns / double(sz.batch);
        };
        const auto ours = [&] {
            // Untimed handshake: core 1 is back in taco's loop.
            const std::uint64_t before = taco::sync(t, &target::count);
            const taco::core_stats s0 = taco::stats();
            const auto t0 = clock_type::now();
            for (std::size_t i = 0; i < sz.batch; ++i) taco::async(t, &target::inc);
            // Per-source order: this reply comes after every inc has run.
            const std::uint64_t after = taco::sync(t, &target::count);
            const double ns = ns_since(t0);
            if (after - before != sz.batch) fail(state, "taco lost invocations");
            deferred += taco::stats().deferred - s0.deferred;
            sent += sz.batch;
            return ns / double(sz.batch);
        };
        for (auto _ : state) series.run_pair(state, base, ours);
        taco::delete_on(t);
    });
    series.report_rate(state, report.oversubscribed);
    // How often taco's sender found the ring full and queued locally.
    state.counters["ours_deferred_frac"] = sent ? double(deferred) / double(sent) : 0.0;
}

// ---- b'. preemptive invocations ------------------------------------------------
//
// The time from sending an urgent invocation to its handler starting on a
// core that computes inside taco::preemptible and never polls (ours: the
// signal, its handler, the poll), against the same invocation to the same
// core while it polls (base), alternating in one run. Each figure is the
// median over a batch of one-at-a-time pokes; the clock is the host's
// steady clock, read by the sender and by the handler.

std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock_type::now().time_since_epoch()).count();
}

struct busy_core {
    std::atomic<bool> stop{false};
    void compute() {
        stop.store(false, std::memory_order_relaxed);
        taco::preemptible([&] {
            std::uint64_t x = 88172645463325252ull;
            while (!stop.load(std::memory_order_relaxed)) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            benchmark::DoNotOptimize(x);
        });
    }
    void halt() { stop.store(true, std::memory_order_relaxed); }
    std::int64_t poke(std::int64_t sent) const { return steady_ns() - sent; }
};

sizes preempt_sizes() { return smoke() ? sizes{4, 20} : sizes{40, 200}; }

void preempt_latency(benchmark::State& state) {
    const sizes sz = preempt_sizes();
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::poll, .report = &report};
    paired_series series;
    taco::run(cfg, [&] {
        const auto gp = taco::new_on<busy_core>(1).get();
        const auto batch = [&](bool computing) {
            taco::future<void> done;
            if (computing) taco::async(gp, taco::m2f(&busy_core::compute), done);
            std::vector<double> ns;
            ns.reserve(sz.batch);
            for (std::size_t i = 0; i < sz.batch; ++i)
                ns.push_back(double(taco::call(gp, taco::m2f(&busy_core::poke, steady_ns()), taco::urgent).get()));
            if (computing) {
                taco::async(gp, taco::m2f(&busy_core::halt), taco::urgent);
                done.get();
            }
            return bench::median(ns);
        };
        for (auto _ : state) series.run_pair(state, [&] { return batch(false); }, [&] { return batch(true); });
        taco::delete_on(gp);
    });
    series.report_latency(state, report.oversubscribed);
}

// ---- c. sleeping round trip ----------------------------------------------------

void sleeping_round_trip(benchmark::State& state) {
    const sizes sz = sleeping_rt_sizes();
    posix::run_report report;
    const posix::config cfg{.cores = 2, .idle = posix::idle_policy::sleep, .report = &report};
    paired_series series;
    std::uint64_t taco_trips = 0;
    taco::run(cfg, [&] {
        const auto t = taco::new_on<target>(1).get();
        const auto futexes = std::make_unique<bench::futex_pair>();
        const auto base = [&] {
            start_on_core1<bench::futex_pair>(futexes.get(),
                                              [](bench::futex_pair* f, std::size_t n) { f->echo(n); }, sz.batch + 1);
            futexes->round_trip();
            const auto t0 = clock_type::now();
            for (std::size_t i = 0; i < sz.batch; ++i) futexes->round_trip();
            return ns_since(t0) / double(sz.batch);
        };
        const auto ours = [&] {
            taco_trips += sz.batch + 1;
            return timed_trips(sz.batch, [&] { return taco_round_trip(t); });
        };
        for (auto _ : state) series.run_pair(state, base, ours);
        taco::delete_on(t);
    });
    series.report_latency(state, report.oversubscribed);
    // ~2 when both taco cores really slept on every trip (a fair comparison
    // with the futex baseline, which always sleeps); ~0 would mean spinning.
    state.counters["ours_sleeps_per_rt"] = taco_trips ? double(report.sleeps) / double(taco_trips) : 0.0;
}

// ---- d. carried strings: core threads against core processes -------------------
//
// 64 KiB std::string arguments, fire-and-forget from core 0 to core 1 (the
// carried path: runtime/bulk.hpp), then one sync that comes after them all.
// Both sides are taco, one run each per batch: the baseline is core
// processes (single-threaded malloc per process), ours core threads. Issue
// 32: threads moved them at a third of the processes' speed, their receive
// buffers freed to a thread arena that gave its memory back to the kernel.

constexpr std::size_t carried_bytes = 64 * 1024;
sizes carried_sizes() { return smoke() ? sizes{2, 8} : sizes{20, 1000}; }

struct string_sink {
    std::uint64_t bytes = 0;
    void take(std::string s) { bytes += s.size() * (s.back() == 'x'); }
    std::uint64_t total() const { return bytes; }
};

/// ns per string over a batch of n, on a fresh run of 2 cores in `mode`.
double carried_batch(posix::execution_mode mode, std::size_t n, std::size_t& wrong) {
    double ns = 0;
    const std::string payload(carried_bytes, 'x');
    taco::run(posix::config{.cores = 2, .idle = posix::idle_policy::poll, .pin = true, .mode = mode}, [&] {
        const auto t = taco::new_on<string_sink>(1).get();
        for (int i = 0; i < 16; ++i) taco::async(t, &string_sink::take, payload); // warm-up: buffers, pages
        const std::uint64_t before = taco::sync(t, &string_sink::total);
        const auto t0 = clock_type::now();
        for (std::size_t i = 0; i < n; ++i) taco::async(t, &string_sink::take, payload);
        const std::uint64_t after = taco::sync(t, &string_sink::total); // per-source order: after every take
        ns = ns_since(t0) / double(n);
        wrong += after - before != n * carried_bytes;
        taco::delete_on(t);
    });
    return ns;
}

void carried_strings(benchmark::State& state) {
    const sizes sz = carried_sizes();
    paired_series series;
    std::size_t wrong = 0;
    for (auto _ : state)
        series.run_pair(state, [&] { return carried_batch(posix::execution_mode::processes, sz.batch, wrong); },
                        [&] { return carried_batch(posix::execution_mode::threads, sz.batch, wrong); });
    series.report_rate(state, false);
    state.counters["bytes"] = double(carried_bytes);
    state.counters["base_gbps"] = double(carried_bytes) / state.counters["base_ns"];
    state.counters["ours_gbps"] = double(carried_bytes) / state.counters["ours_ns"];
    if (wrong) fail(state, "carried strings lost or damaged");
}

// ---- e. channel memory -----------------------------------------------------------

enum class pattern { tree, all_to_all };

// Messages received by core 0's "arrived" handler; touched on core 0 only.
std::size_t arrived = 0;

void arrive() { ++arrived; }
/// Runs on the receiver of a pattern message and reports it to core 0, so
/// every core also talks to core 0 (and core 0 can tell when all arrived).
void poke() {
    if (taco::this_core() == 0)
        arrive();
    else
        taco::async(taco::core_id{0}, &arrive);
}
/// Each core pokes its binary-tree parent and children.
void talk_tree() {
    const taco::core_id c = taco::this_core(), n = taco::core_count();
    if (c > 0) taco::async((c - 1) / 2, &poke);
    for (taco::core_id child : {2 * c + 1, 2 * c + 2})
        if (child < n) taco::async(child, &poke);
}
/// Each core pokes every other core.
void talk_all() {
    const taco::core_id c = taco::this_core(), n = taco::core_count();
    for (taco::core_id d = 0; d < n; ++d)
        if (d != c) taco::async(d, &poke);
}

/// Shared memory taco's POSIX platform uses for one run (see bench/README.md):
/// a 64-byte record per core + one ring per (source, destination) pair that
/// talked; a ring is a 64-byte header + ring_slots 128-byte slots.
std::size_t formula_bytes(std::size_t cores, std::size_t rings, std::size_t slots) {
    return 64 * cores + rings * (64 + 128 * slots);
}

void channel_memory(benchmark::State& state, pattern p, taco::core_id cores) {
    const posix::config defaults{};
    posix::run_report report;
    posix::config cfg{.cores = cores, .idle = posix::idle_policy::sleep, .report = &report};
    std::size_t expected = 0;
    for (auto _ : state) {
        const auto t0 = clock_type::now();
        taco::run(cfg, [&] {
            arrived = 0;
            void (*talk)() = p == pattern::tree ? &talk_tree : &talk_all;
            for (taco::core_id c = 1; c < cores; ++c) taco::async(c, talk);
            talk();
            // Every tree edge carries one poke each way; all-to-all: n(n-1).
            expected = p == pattern::tree ? 2 * std::size_t(cores - 1) : std::size_t(cores) * (cores - 1);
            taco::wait_until([&] { return arrived == expected; });
        });
        state.SetIterationTime(ns_since(t0) * 1e-9);
    }
    if (arrived != expected) fail(state, "pokes lost");
    state.counters["cores"] = cores;
    state.counters["rings"] = double(report.rings);
    state.counters["channel_bytes"] = double(report.channel_bytes);
    state.counters["bytes_per_core"] = double(report.channel_bytes) / cores;
    state.counters["ring_slots"] = defaults.ring_slots;
    state.counters["ring_bytes"] = double(64 + 128 * std::size_t(defaults.ring_slots));
    state.counters["formula_bytes"] = double(formula_bytes(cores, report.rings, defaults.ring_slots));
    // If every pair had a ring (a dense n x n layout), for comparison.
    state.counters["dense_bytes_per_core"] =
        double(formula_bytes(cores, std::size_t(cores) * (cores - 1), defaults.ring_slots)) / cores;
    state.counters["oversubscribed"] = report.oversubscribed;
}

void register_all() {
    benchmark::RegisterBenchmark("polling_round_trip", polling_round_trip)
        ->Iterations(polling_rt_sizes().pairs)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
    benchmark::RegisterBenchmark("carried_round_trip", carried_round_trip)
        ->Iterations(polling_rt_sizes().pairs)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
    for (bool use_activity : {true, false}) {
        benchmark::RegisterBenchmark(use_activity ? "channel_round_trip/activity_sink" : "channel_round_trip/function_sink",
                                     channel_round_trip, use_activity)
            ->Iterations(polling_rt_sizes().pairs)
            ->UseManualTime()
            ->Unit(benchmark::kNanosecond);
    }
    benchmark::RegisterBenchmark("one_way_rate", one_way_rate)
        ->Iterations(one_way_sizes().pairs)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
    benchmark::RegisterBenchmark("preempt_latency", preempt_latency)
        ->Iterations(preempt_sizes().pairs)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
    benchmark::RegisterBenchmark("sleeping_round_trip", sleeping_round_trip)
        ->Iterations(sleeping_rt_sizes().pairs)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
    benchmark::RegisterBenchmark("carried_string/threads_vs_processes/bytes:65536", carried_strings)
        ->Iterations(carried_sizes().pairs)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
    for (taco::core_id cores : {48u, 256u}) {
        for (auto [p, name] : {std::pair{pattern::tree, "tree"}, std::pair{pattern::all_to_all, "all_to_all"}}) {
            const std::string label = "channel_memory/" + std::string(name) + "/cores:" + std::to_string(cores);
            benchmark::RegisterBenchmark(label.c_str(), channel_memory, p, cores)
                ->Iterations(1)
                ->UseManualTime()
                ->Unit(benchmark::kMillisecond);
        }
    }
}

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, &register_all, "bench_invocation"); }
