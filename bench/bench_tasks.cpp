// tacomesh task and scheduler benchmarks (Google Benchmark), each paired with
// a baseline measured in the same run, on the same thread, alternating (see
// bench/paired.hpp and bench/README.md, "Tasks and schedulers"):
//
//   protothread_resume/direct     protothread run() through a task*, K times
//                                 (bench-only suspend, no scheduler) vs a
//                                 plain [[gnu::noinline]] call doing the same work
//   protothread_resume/scheduled  TACO_PT_YIELD in a loop, drained by the
//                                 core's loop (taco::poll) vs the same plain call
//   coroutine_switch/direct       resume + switch back of a bench-only
//                                 coroutine_base subclass (run() / block())
//                                 vs a raw boost::context::fiber ping (resumed
//                                 inline in the loop)
//   coroutine_switch/direct_vs_called_fiber
//                                 the same vs the raw ping resumed inside a
//                                 non-inlined function, as taco's is in run()
//   coroutine_switch/scheduled    taco::yield() in a coroutine, driven by the
//                                 core's scheduler vs the same raw fiber ping
//   scheduler/<policy>/<path>/depth:D
//                                 enqueue + dispatch of preallocated trivial
//                                 tasks, D queued at a time, through the
//                                 runtime (taco::start + taco::poll) or the
//                                 scheduler class (push/pop + run) vs a
//                                 std::deque<std::function<void()>>
//   scheduler/<policy>/direct_vs_heap/depth:D
//                                 the ordered schedulers vs a std::priority_queue
//                                 of std::function (the hand-written ordered queue)
//   sync_round_trip/coroutine     taco::sync to core 1 (2 cores, poll idle)
//   sync_round_trip/protothread   from a coroutine / from a protothread
//                                 (TACO_PT_AWAIT) vs a future polled by main
//
// Counters (per benchmark): base_ns / ours_ns = medians over batches of the
// per-operation time, ratio_median = median over pairs of ours/base,
// ratio_p10 / ratio_p90 its spread, oversubscribed = 1 when there are more
// cores than CPUs (also in the label). The time column (manual time) is
// taco's mean per-operation time.
//
// BENCH_SMOKE=1 shrinks every size (CI smoke run).
#include <tacomesh/posix.hpp>

#include <benchmark/benchmark.h>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <paired.hpp>
#include "task_fixtures.hpp"

namespace {

namespace posix = tacomesh::posix;
namespace ctx = boost::context;
using bench::make_tasks;
using bench::plain_step;
using bench::spinning_protothread;
using bench::switching_coroutine;
using bench::trivial_task;
using bench::yielding_protothread;
using bench::clock_type;
using bench::fail;
using bench::ns_since;
using bench::paired_series;
using bench::smoke;

/// Batches of ~0.1-1 ms: far longer than a clock read, short enough that the
/// host rarely moves a vCPU in the middle of a pair.
using bench::sizes;
sizes pt_direct_sizes() { return smoke() ? sizes{4, 2000} : sizes{400, 50000}; }
sizes pt_scheduled_sizes() { return smoke() ? sizes{4, 1000} : sizes{300, 20000}; }
sizes co_direct_sizes() { return smoke() ? sizes{4, 1000} : sizes{300, 20000}; }
sizes co_scheduled_sizes() { return smoke() ? sizes{4, 1000} : sizes{300, 10000}; }
// batch = tasks per batch (rounds of `depth` queued at once)
sizes sched_sizes() { return smoke() ? sizes{4, 2048} : sizes{200, 16384}; }
sizes sync_sizes() { return smoke() ? sizes{4, 100} : sizes{300, 2000}; }

void label(benchmark::State& state, bool oversubscribed) {
    state.SetLabel(oversubscribed ? "oversubscribed" : "not oversubscribed");
}

/// A task pointer the compiler cannot see through: calls go through the
/// vtable, as from a scheduler.
template <class T>
taco::task* opaque(T& t) {
    taco::task* p = &t;
    benchmark::DoNotOptimize(p);
    return p;
}

// ---- 1. protothread resume ------------------------------------------------------

/// The baseline: the same work as one protothread activation, not inlined.


// The timed loops of both sides live in functions of their own, so that the
// code around them (and its alignment) is the same whatever benchmark
// calls them.
[[gnu::noinline]] void plain_steps(std::uint64_t& count, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) plain_step(count);
}
[[gnu::noinline]] void resume_n(taco::task* t, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) t->run();
}


void protothread_resume_direct(benchmark::State& state) {
    const sizes sz = pt_direct_sizes();
    posix::run_report report;
    paired_series series;
    taco::run(posix::config{.cores = 1, .report = &report}, [&] {
        spinning_protothread p;
        taco::task* const t = opaque(p);
        t->run(); // untimed: the first activation
        const auto base = [&] {
            std::uint64_t count = 0;
            const auto t0 = clock_type::now();
            plain_steps(count, sz.batch);
            const double ns = ns_since(t0);
            if (count != sz.batch) fail(state, "plain call lost a step");
            return ns / double(sz.batch);
        };
        const auto ours = [&] {
            const std::uint64_t before = p.count;
            const auto t0 = clock_type::now();
            resume_n(t, sz.batch);
            const double ns = ns_since(t0);
            if (p.count - before != sz.batch || p.finished()) fail(state, "protothread lost a step");
            return ns / double(sz.batch);
        };
        for (auto _ : state) series.run_pair(state, base, ours);
    });
    series.report_latency(state, report.oversubscribed);
    label(state, report.oversubscribed);
}

void protothread_resume_scheduled(benchmark::State& state) {
    const sizes sz = pt_scheduled_sizes();
    posix::run_report report;
    paired_series series;
    taco::run(posix::config{.cores = 1, .report = &report}, [&] {
        const auto base = [&] {
            std::uint64_t count = 0;
            const auto t0 = clock_type::now();
            plain_steps(count, sz.batch);
            const double ns = ns_since(t0);
            if (count != sz.batch) fail(state, "plain call lost a step");
            return ns / double(sz.batch);
        };
        const auto ours = [&] {
            yielding_protothread p; // a finished protothread cannot be restarted: one per batch
            p.n = sz.batch;
            const auto t0 = clock_type::now();
            taco::start(p);
            while (!p.finished()) taco::poll();
            const double ns = ns_since(t0);
            if (p.count != sz.batch) fail(state, "protothread lost a yield");
            return ns / double(sz.batch);
        };
        for (auto _ : state) series.run_pair(state, base, ours);
    });
    series.report_latency(state, report.oversubscribed);
    label(state, report.oversubscribed);
}

// ---- 2. coroutine switch --------------------------------------------------------

/// Raw Boost.Context ping: main resumes the fiber, the fiber counts and
/// resumes main. One operation = one resume and one switch back.
class raw_fiber_ping {
public:
    raw_fiber_ping()
        : f_(std::allocator_arg, ctx::protected_fixedsize_stack(taco::coroutine_stack_size),
             [this](ctx::fiber&& sink) {
                 while (!stop_) {
                     ++count_;
                     sink = std::move(sink).resume();
                 }
                 return std::move(sink);
             }) {
        f_ = std::move(f_).resume(); // untimed: enter the fiber once
    }
    ~raw_fiber_ping() {
        stop_ = true;
        f_ = std::move(f_).resume(); // the body returns: nothing to unwind
    }
    void ping() { f_ = std::move(f_).resume(); }
    std::uint64_t count() const { return count_; }

private:
    bool stop_ = false;
    std::uint64_t count_ = 0;
    ctx::fiber f_;
};


/// Owns a switching_coroutine for one batch: enters it once, and at the end
/// lets its body return (run() then deletes it).
class direct_coroutine {
public:
    direct_coroutine() : co_(new switching_coroutine), t_(opaque(*co_)) { t_->run(); }
    ~direct_coroutine() {
        co_->stop = true;
        t_->run(); // body returns; the coroutine frees itself
    }
    taco::task* task() const { return t_; }
    std::uint64_t count() const { return co_->count; }

private:
    switching_coroutine* co_;
    taco::task* t_;
};

[[gnu::noinline]] void fiber_pings(raw_fiber_ping& f, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) f.ping();
}
/// The resume inside a function of its own, as taco's is inside run().
[[gnu::noinline]] void called_ping(raw_fiber_ping& f) { f.ping(); }
[[gnu::noinline]] void called_fiber_pings(raw_fiber_ping& f, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) called_ping(f);
}

double raw_fiber_batch(benchmark::State& state, std::size_t n, bool called) {
    raw_fiber_ping f;
    const std::uint64_t before = f.count();
    const auto t0 = clock_type::now();
    if (called) called_fiber_pings(f, n);
    else fiber_pings(f, n);
    const double ns = ns_since(t0);
    if (f.count() - before != n) fail(state, "raw fiber lost a switch");
    return ns / double(n);
}

/// `called`: the baseline resumes from inside a non-inlined function (as
/// run() is one), instead of inline in the loop.
void coroutine_switch_direct(benchmark::State& state, bool called) {
    const sizes sz = co_direct_sizes();
    posix::run_report report;
    paired_series series;
    taco::run(posix::config{.cores = 1, .report = &report}, [&] {
        const auto base = [&] { return raw_fiber_batch(state, sz.batch, called); };
        const auto ours = [&] {
            direct_coroutine c;
            const std::uint64_t before = c.count();
            const auto t0 = clock_type::now();
            resume_n(c.task(), sz.batch);
            const double ns = ns_since(t0);
            if (c.count() - before != sz.batch) fail(state, "coroutine lost a switch");
            return ns / double(sz.batch);
        };
        for (auto _ : state) series.run_pair(state, base, ours);
    });
    series.report_latency(state, report.oversubscribed);
    label(state, report.oversubscribed);
}

void coroutine_switch_scheduled(benchmark::State& state) {
    const sizes sz = co_scheduled_sizes();
    posix::run_report report;
    paired_series series;
    taco::run(posix::config{.cores = 1, .report = &report}, [&] {
        const auto base = [&] { return raw_fiber_batch(state, sz.batch, false); };
        const auto ours = [&] {
            double ns = 0;
            std::uint64_t count = 0;
            // main's f.get() drives the core's loop; the coroutine times itself.
            taco::spawn_coroutine([&] {
                taco::yield(); // untimed: the first switch
                const auto t0 = clock_type::now();
                for (std::size_t i = 0; i < sz.batch; ++i, ++count) taco::yield();
                ns = ns_since(t0);
            }).get();
            if (count != sz.batch) fail(state, "coroutine lost a yield");
            return ns / double(sz.batch);
        };
        for (auto _ : state) series.run_pair(state, base, ours);
    });
    series.report_latency(state, report.oversubscribed);
    label(state, report.oversubscribed);
}

// ---- 3. scheduler overhead per task ---------------------------------------------


enum class path { runtime, direct, direct_vs_heap };

/// What a user writes by hand: a deque of closures, pushed and popped in rounds.
double deque_batch(benchmark::State& state, std::deque<std::function<void()>>& q, std::size_t total,
                   std::size_t depth) {
    std::uint64_t counter = 0;
    std::uint64_t* const c = &counter;
    const auto t0 = clock_type::now();
    for (std::size_t done = 0; done < total; done += depth) {
        for (std::size_t i = 0; i < depth; ++i) q.push_back([c] { ++*c; });
        while (!q.empty()) {
            q.front()();
            q.pop_front();
        }
    }
    const double ns = ns_since(t0);
    if (counter != total) fail(state, "deque baseline lost a closure");
    return ns / double(total);
}

/// The hand-written ordered queue: a binary heap of (key, arrival, closure).
template <class Key>
struct heap_entry {
    Key key;
    std::uint64_t arrival;
    std::function<void()> fn;
};
template <class Key, class Before>
struct heap_after { // std::priority_queue puts the greatest first: "a after b"
    bool operator()(const heap_entry<Key>& a, const heap_entry<Key>& b) const {
        if (Before{}(a.key, b.key)) return false;
        if (Before{}(b.key, a.key)) return true;
        return a.arrival > b.arrival;
    }
};
template <class Key, class Before>
using heap_queue = std::priority_queue<heap_entry<Key>, std::vector<heap_entry<Key>>, heap_after<Key, Before>>;

template <class Key, class Before, class KeyOf>
double heap_batch(benchmark::State& state, heap_queue<Key, Before>& q, const trivial_task* keys, KeyOf key_of,
                  std::size_t total, std::size_t depth) {
    std::uint64_t counter = 0, arrival = 0;
    std::uint64_t* const c = &counter;
    const auto t0 = clock_type::now();
    for (std::size_t done = 0; done < total; done += depth) {
        for (std::size_t i = 0; i < depth; ++i) q.push({key_of(keys[i]), arrival++, [c] { ++*c; }});
        while (!q.empty()) {
            q.top().fn();
            q.pop();
        }
    }
    const double ns = ns_since(t0);
    if (counter != total) fail(state, "heap baseline lost a closure");
    return ns / double(total);
}

template <class S>
double direct_batch(benchmark::State& state, S& s, trivial_task* ts, const std::uint64_t& counter,
                    std::size_t total, std::size_t depth) {
    const std::uint64_t before = counter;
    const auto t0 = clock_type::now();
    for (std::size_t done = 0; done < total; done += depth) {
        for (std::size_t i = 0; i < depth; ++i) s.push(ts[i]);
        while (taco::task* t = s.pop()) t->run();
    }
    const double ns = ns_since(t0);
    if (counter - before != total) fail(state, "scheduler lost a task");
    return ns / double(total);
}

template <class S>
void scheduler_overhead(benchmark::State& state, taco::policy pol, path p, std::size_t depth) {
    const sizes sz = sched_sizes();
    const std::size_t total = sz.batch / depth * depth;
    posix::run_report report;
    paired_series series;
    taco::run(
        posix::config{.cores = 1, .report = &report},
        [&] {
            std::uint64_t counter = 0;
            const auto ts = make_tasks(depth, &counter);
            std::deque<std::function<void()>> dq;
            heap_queue<int, std::greater<>> prio_heap;
            heap_queue<taco::task_clock::time_point, std::less<>> edf_heap;
            S s;
            const auto base = [&] {
                if (p != path::direct_vs_heap) return deque_batch(state, dq, total, depth);
                if (pol == taco::policy::priority)
                    return heap_batch(state, prio_heap, ts.get(),
                                      [](const trivial_task& t) { return t.sched.priority; }, total, depth);
                return heap_batch(state, edf_heap, ts.get(), [](const trivial_task& t) { return t.sched.deadline; },
                                  total, depth);
            };
            const auto ours = [&] {
                if (p != path::runtime) return direct_batch(state, s, ts.get(), counter, total, depth);
                const std::uint64_t before = counter;
                const auto t0 = clock_type::now();
                for (std::size_t done = 0; done < total; done += depth) {
                    for (std::size_t i = 0; i < depth; ++i) taco::start(ts[i]);
                    for (std::size_t i = 0; i < depth; ++i) taco::poll();
                }
                const double ns = ns_since(t0);
                if (counter - before != total) fail(state, "runtime lost a task");
                return ns / double(total);
            };
            for (auto _ : state) series.run_pair(state, base, ours);
        },
        taco::run_options{.scheduling = pol});
    series.report_latency(state, report.oversubscribed);
    state.counters["depth"] = double(depth);
    label(state, report.oversubscribed);
}

// ---- 4. sync round trip from a coroutine / protothread / main -------------------

struct target {
    std::uint64_t n = 0;
    std::uint64_t next() { return ++n; }
};

/// The baseline: a future polled by main's loop (f.get() in main).
double main_sync_batch(taco::global_ptr<target> t, std::size_t n) {
    std::uint64_t v = taco::sync(t, &target::next); // untimed: core 1 is in its loop
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) {
        taco::future<std::uint64_t> f;
        taco::async(t, taco::m2f(&target::next), f);
        v += f.get();
    }
    const double ns = ns_since(t0);
    benchmark::DoNotOptimize(v);
    return ns / double(n);
}

/// n round trips waiting with TACO_PT_AWAIT; times itself after the first.
struct syncing_protothread final : taco::protothread<syncing_protothread> {
    taco::global_ptr<target> t;
    taco::future<std::uint64_t> f;
    std::size_t i = 0, n = 0;
    std::uint64_t v = 0;
    clock_type::time_point t0;
    double ns = 0;
    bool step() {
        TACO_PT_BEGIN();
        taco::async(t, taco::m2f(&target::next), f);
        TACO_PT_AWAIT(f);
        v = f.get();
        t0 = clock_type::now();
        for (i = 0; i < n; ++i) {
            taco::async(t, taco::m2f(&target::next), f);
            TACO_PT_AWAIT(f);
            v += f.get();
        }
        ns = ns_since(t0);
        TACO_PT_END();
    }
};

enum class waiter { coroutine, protothread };

void sync_round_trip(benchmark::State& state, waiter w) {
    const sizes sz = sync_sizes();
    posix::run_report report;
    paired_series series;
    taco::run(posix::config{.cores = 2, .idle = posix::idle_policy::poll, .report = &report}, [&] {
        const auto t = taco::new_on<target>(1).get();
        const auto base = [&] { return main_sync_batch(t, sz.batch); };
        const auto ours = [&] {
            const std::uint64_t before = taco::sync(t, +[](target& x) { return x.n; });
            double ns = 0;
            if (w == waiter::coroutine) {
                taco::spawn_coroutine([&] {
                    std::uint64_t v = taco::sync(t, &target::next); // untimed
                    const auto t0 = clock_type::now();
                    for (std::size_t i = 0; i < sz.batch; ++i) v += taco::sync(t, &target::next);
                    ns = ns_since(t0);
                    benchmark::DoNotOptimize(v);
                }).get();
            } else {
                syncing_protothread p;
                p.t = t;
                p.n = sz.batch;
                taco::start(p);
                taco::wait_until([&] { return p.finished(); });
                p.rethrow_if_failed();
                ns = p.ns;
            }
            const std::uint64_t after = taco::sync(t, +[](target& x) { return x.n; });
            if (after - before != sz.batch + 1) fail(state, "a sync round trip was lost");
            return ns / double(sz.batch);
        };
        for (auto _ : state) series.run_pair(state, base, ours);
        taco::delete_on(t);
    });
    series.report_latency(state, report.oversubscribed);
    label(state, report.oversubscribed);
}

// ---- registration ---------------------------------------------------------------

template <class F>
void add(const std::string& name, int pairs, F&& fn) {
    benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(fn))
        ->Iterations(pairs)
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
}

void register_all() {
    add("protothread_resume/direct", pt_direct_sizes().pairs, protothread_resume_direct);
    add("protothread_resume/scheduled", pt_scheduled_sizes().pairs, protothread_resume_scheduled);
    add("coroutine_switch/direct", co_direct_sizes().pairs,
        [](benchmark::State& s) { coroutine_switch_direct(s, false); });
    add("coroutine_switch/direct_vs_called_fiber", co_direct_sizes().pairs,
        [](benchmark::State& s) { coroutine_switch_direct(s, true); });
    add("coroutine_switch/scheduled", co_scheduled_sizes().pairs, coroutine_switch_scheduled);
    const int sp = sched_sizes().pairs;
    for (std::size_t depth : {std::size_t(16), std::size_t(1024)}) {
        const std::string d = "/depth:" + std::to_string(depth);
        for (auto [p, pname] : {std::pair{path::runtime, "runtime"}, std::pair{path::direct, "direct"}}) {
            add("scheduler/fifo/" + std::string(pname) + d, sp, [=](benchmark::State& s) {
                scheduler_overhead<taco::schedulers::fifo>(s, taco::policy::fifo, p, depth);
            });
            add("scheduler/priority/" + std::string(pname) + d, sp, [=](benchmark::State& s) {
                scheduler_overhead<taco::schedulers::priority>(s, taco::policy::priority, p, depth);
            });
            add("scheduler/edf/" + std::string(pname) + d, sp, [=](benchmark::State& s) {
                scheduler_overhead<taco::schedulers::edf>(s, taco::policy::edf, p, depth);
            });
        }
        add("scheduler/priority/direct_vs_heap" + d, sp, [=](benchmark::State& s) {
            scheduler_overhead<taco::schedulers::priority>(s, taco::policy::priority, path::direct_vs_heap, depth);
        });
        add("scheduler/edf/direct_vs_heap" + d, sp, [=](benchmark::State& s) {
            scheduler_overhead<taco::schedulers::edf>(s, taco::policy::edf, path::direct_vs_heap, depth);
        });
    }
    add("sync_round_trip/coroutine", sync_sizes().pairs,
        [](benchmark::State& s) { sync_round_trip(s, waiter::coroutine); });
    add("sync_round_trip/protothread", sync_sizes().pairs,
        [](benchmark::State& s) { sync_round_trip(s, waiter::protothread); });
}

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, &register_all, "bench_tasks"); }
