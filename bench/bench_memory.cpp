// Memory bounds, measured as the operating system sees them:
//
//   resident_per_core/tree/cores:N   resident memory the run adds per core
//       (thread stack, runtime, channels), N cores oversubscribed on this
//       machine's CPUs, every core alive and past a reduce over all cores (a
//       k-ary tree: each core talks to its parent and children). Target:
//       flat in N, < 128 KiB per core. Baseline in the same run: N plain
//       blocked threads (ratio_to_thread).
//   flood_peak/{one_way,both_ways}/requests:K   peak resident memory the
//       run adds while core 0 (one way) or both cores send K requests to the
//       other as fast as they can, every one answered by a reply; target
//       < 300 MB, none lost.
//
//   fault_detection/{kill,stop,hang}   how long taco::run takes to throw
//       core_failure after core 1 of a process-mode run is killed, stopped
//       (SIGSTOP) or starts spinning in user code while core 0 waits for
//       it; liveness timeout 1 s (ratio_to_timeout). A kill is seen by the
//       launcher's waitpid round (1 ms); a stop or a hang by the liveness watch.
//
// Memory is not noisy the way time is here, so these are plain figures,
// not ratios; detection times are dominated by the timeout and the watch's
// period, not by the machine.
#include <algorithm>
#include <csignal>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <tacomesh/posix.hpp>
#include <tacomesh/posix/resident_memory.hpp>

#include <paired.hpp>

namespace {

using bench::smoke;
namespace posix = tacomesh::posix;

using tacomesh::posix::status_kib;
/// Start a new peak (VmHWM) from the current resident set.
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

void resident_per_core(benchmark::State& state, taco::core_id cores) {
    posix::run_report report;
    // Sleep when idle: thousands of spinning threads on two CPUs would only
    // measure the scheduler.
    const posix::config cfg{.cores = cores, .idle = posix::idle_policy::sleep, .pin = false, .report = &report};
    long before = 0, during = 0, sum = 0;
    for (auto _ : state) {
        before = status_kib("VmRSS");
        taco::run(cfg, [&] {
            sum = taco::reduce(taco::all_cores(), taco::m2f(+[] { return long(taco::this_core()); }),
                               std::plus<long>{})
                      .get();
            during = status_kib("VmRSS");
        });
    }
    if (sum != long(cores) * (cores - 1) / 2) bench::fail(state, "wrong reduce result");
    // Baseline, same run: the same number of plain threads, each blocked
    // (a thread's stack and kernel bookkeeping is the floor of any core).
    const long base_before = status_kib("VmRSS");
    long base_during = 0;
    {
        std::mutex m;
        std::condition_variable cv;
        bool go = false;
        std::vector<std::thread> threads;
        for (taco::core_id c = 1; c < cores; ++c)
            threads.emplace_back([&] {
                std::unique_lock lock(m);
                cv.wait(lock, [&] { return go; });
            });
        base_during = status_kib("VmRSS");
        {
            std::lock_guard lock(m);
            go = true;
        }
        cv.notify_all();
        for (auto& t : threads) t.join();
    }
    const double ours = double(during - before) / cores, base = double(base_during - base_before) / cores;
    state.counters["cores"] = cores;
    state.counters["kib_per_core"] = ours;
    state.counters["baseline_thread_kib_per_core"] = base;
    state.counters["ratio_to_thread"] = base > 0 ? ours / base : 0;
    state.counters["channel_kib_per_core"] = double(report.channel_bytes) / 1024.0 / cores;
    state.counters["oversubscribed"] = report.oversubscribed;
}

// The symmetric request/reply flood of tests/test_delivery.cpp, large.
struct peer {
    taco::global_ptr<peer> other;
    std::uint64_t replies = 0;
    void request(std::uint64_t i) { taco::async(other, &peer::reply, i); }
    void reply(std::uint64_t) { ++replies; }
    void flood(std::uint64_t k) {
        for (std::uint64_t i = 0; i < k; ++i) taco::async(other, &peer::request, i);
    }
    std::uint64_t count() const { return replies; }
};

void flood_peak(benchmark::State& state, std::uint64_t k, bool both) {
    std::uint64_t got0 = 0, got1 = 0, deferred = 0, peak_queued = 0;
    long before = 0, peak = 0;
    for (auto _ : state) {
        reset_peak();
        before = status_kib("VmRSS");
        taco::run(posix::config{.cores = 2}, [&] {
            peer p0;
            const auto a = taco::to_global(&p0);
            const auto b = taco::new_on<peer>(1).get();
            p0.other = b;
            taco::sync(1, +[](taco::global_ptr<peer> me, taco::global_ptr<peer> o) { me->other = o; }, b, a);
            if (both) taco::async(b, &peer::flood, k); // both flood at once
            p0.flood(k);
            taco::wait_until([&] { return p0.replies == k; });
            const std::uint64_t k1 = both ? k : 0;
            while (taco::sync(b, &peer::count) < k1) {}
            got0 = p0.replies;
            got1 = taco::sync(b, &peer::count) + (both ? 0 : k);
            const auto s1 = taco::sync(1, +[] { return taco::stats(); });
            const auto s0 = taco::stats();
            deferred = s0.deferred + s1.deferred;
            peak_queued = std::max(s0.peak_queued, s1.peak_queued);
            taco::delete_on(b);
        });
        peak = status_kib("VmHWM");
    }
    if (got0 != k || got1 != k) bench::fail(state, "replies lost");
    state.counters["requests_per_core"] = double(k);
    state.counters["messages"] = double((both ? 4 : 2) * k);
    state.counters["peak_mb"] = double(peak - before) / 1024.0;
    state.counters["deferred"] = double(deferred);
    state.counters["peak_queued"] = double(peak_queued);
}

int pid_here() { return int(::getpid()); }
void kill_here() { ::kill(::getpid(), SIGKILL); }
void stop_here() { ::raise(SIGSTOP); }
void hang_here() {
    volatile bool forever = true;
    while (forever) {}
}

void fault_detection(benchmark::State& state, void (*fault)()) {
    const auto timeout = std::chrono::milliseconds(1000);
    double ms = 0;
    bool reported = false;
    for (auto _ : state) {
        auto c = posix::config{.cores = 2, .mode = posix::execution_mode::processes};
        c.liveness_timeout = timeout;
        bench::clock_type::time_point t0;
        try {
            taco::run(c, [&] {
                taco::sync(1, &pid_here); // core 1 is up
                t0 = bench::clock_type::now();
                taco::async(1, fault);
                taco::sync(1, &pid_here); // never answered
            });
        } catch (const posix::core_failure&) {
            reported = true;
        }
        ms = bench::ns_since(t0) * 1e-6;
    }
    if (!reported) bench::fail(state, "no core_failure");
    state.counters["detection_ms"] = ms;
    state.counters["ratio_to_timeout"] = ms / double(timeout.count());
    state.counters["liveness_timeout_ms"] = double(timeout.count());
}

void register_all() {
    const std::vector<taco::core_id> sizes = smoke() ? std::vector<taco::core_id>{64, 256} : std::vector<taco::core_id>{1024, 8192};
    for (taco::core_id cores : sizes) {
        const std::string name = "resident_per_core/tree/cores:" + std::to_string(cores);
        benchmark::RegisterBenchmark(name.c_str(), resident_per_core, cores)->Iterations(1)->Unit(benchmark::kMillisecond);
    }
    const std::uint64_t k = smoke() ? 100'000 : 3'000'000;
    for (auto [fault, name] : {std::pair{&kill_here, "kill"}, std::pair{&stop_here, "stop"}, std::pair{&hang_here, "hang"}})
        benchmark::RegisterBenchmark((std::string("fault_detection/") + name).c_str(), fault_detection, fault)
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
    for (bool both : {false, true}) {
        const std::string name = std::string("flood_peak/") + (both ? "both_ways" : "one_way") +
                                 "/requests:" + std::to_string(k);
        benchmark::RegisterBenchmark(name.c_str(), flood_peak, k, both)->Iterations(1)->Unit(benchmark::kMillisecond);
    }
}

} // namespace

int main(int argc, char** argv) { return bench::run_main(argc, argv, &register_all, "bench_memory"); }
