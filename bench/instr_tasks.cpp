// Instructions per task operation, counted with callgrind by
// count_task_instructions.sh:
//   instr_tasks MODE K [DEPTH]
// runs K operations of MODE on one core (DEPTH tasks queued at a time for the
// scheduler modes, 1024 by default). The script runs K1 and 2*K1 and divides
// the difference by K1: start-up, the preallocated tasks and shutdown cancel
// out (the same DEPTH tasks are reused, whatever K).
//
// Scheduler modes (one operation = enqueue + dispatch of a trivial task):
//   runtime_fifo|runtime_priority|runtime_edf  taco::start + taco::poll (the core's loop)
//   direct_fifo|direct_priority|direct_edf     scheduler class push / pop + run()
//   deque                                      std::deque<std::function<void()>> (baseline)
//   heap_priority|heap_edf                     std::priority_queue of closures (baseline)
// Task modes (one operation = one resume):
//   pt_resume         protothread run() through a task*, bench-only suspend
//   plain_call        [[gnu::noinline]] call doing the same work (baseline)
//   pt_yield          TACO_PT_YIELD drained by taco::poll
//   coroutine_switch  coroutine_base subclass: run() + block()
//   fiber             raw boost::context::fiber resume + resume back (baseline)
//   coroutine_yield   taco::yield() in a coroutine driven by the core's loop
#include <tacomesh/posix.hpp>

#include "task_fixtures.hpp"

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

namespace {

using bench::make_tasks;
using bench::plain_step;
using bench::spinning_protothread;
using bench::switching_coroutine;
using bench::trivial_task;
using bench::yielding_protothread;


namespace ctx = boost::context;

/// Keeps the compiler from seeing through a pointer (calls stay virtual).
template <class T>
T* opaque(T* p) {
    asm volatile("" : "+r"(p));
    return p;
}

// ---- scheduler modes --------------------------------------------------------------


/// Rounds of `depth` (the last one shorter) adding up to k.
template <class Round>
void in_rounds(std::uint64_t k, std::size_t depth, Round round) {
    for (std::uint64_t done = 0; done < k;) {
        const std::size_t n = std::size_t(std::min<std::uint64_t>(depth, k - done));
        round(n);
        done += n;
    }
}

template <class S>
std::uint64_t direct(std::uint64_t k, std::size_t depth) {
    std::uint64_t counter = 0;
    const auto ts = make_tasks(depth, &counter);
    S s;
    in_rounds(k, depth, [&](std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) s.push(ts[i]);
        while (taco::task* t = s.pop()) t->run();
    });
    return counter;
}

std::uint64_t through_runtime(std::uint64_t k, std::size_t depth) {
    std::uint64_t counter = 0;
    const auto ts = make_tasks(depth, &counter);
    in_rounds(k, depth, [&](std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) taco::start(ts[i]);
        for (std::size_t i = 0; i < n; ++i) taco::poll();
    });
    return counter;
}

std::uint64_t deque_baseline(std::uint64_t k, std::size_t depth) {
    std::uint64_t counter = 0;
    std::uint64_t* const c = &counter;
    std::deque<std::function<void()>> q;
    in_rounds(k, depth, [&](std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) q.push_back([c] { ++*c; });
        while (!q.empty()) {
            q.front()();
            q.pop_front();
        }
    });
    return counter;
}

template <class Key, class Before, class KeyOf>
std::uint64_t heap_baseline(std::uint64_t k, std::size_t depth, KeyOf key_of) {
    struct entry {
        Key key;
        std::uint64_t arrival;
        std::function<void()> fn;
    };
    struct after {
        bool operator()(const entry& a, const entry& b) const {
            if (Before{}(a.key, b.key)) return false;
            if (Before{}(b.key, a.key)) return true;
            return a.arrival > b.arrival;
        }
    };
    std::uint64_t counter = 0, arrival = 0;
    std::uint64_t* const c = &counter;
    const auto ts = make_tasks(depth, &counter);
    std::priority_queue<entry, std::vector<entry>, after> q;
    in_rounds(k, depth, [&](std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) q.push({key_of(ts[i]), arrival++, [c] { ++*c; }});
        while (!q.empty()) {
            q.top().fn();
            q.pop();
        }
    });
    return counter;
}

// ---- task modes ---------------------------------------------------------------------




std::uint64_t pt_resume(std::uint64_t k) {
    spinning_protothread p;
    taco::task* const t = opaque<taco::task>(&p);
    for (std::uint64_t i = 0; i < k; ++i) t->run();
    return p.count;
}

std::uint64_t plain_call(std::uint64_t k) {
    std::uint64_t count = 0;
    for (std::uint64_t i = 0; i < k; ++i) plain_step(count);
    return count;
}

std::uint64_t pt_yield(std::uint64_t k) {
    yielding_protothread p;
    p.n = k;
    taco::start(p);
    while (!p.finished()) taco::poll();
    return p.count;
}

std::uint64_t coroutine_switch(std::uint64_t k) {
    auto* co = new switching_coroutine;
    taco::task* const t = opaque<taco::task>(co);
    for (std::uint64_t i = 0; i < k; ++i) t->run();
    const std::uint64_t n = co->count;
    co->stop = true;
    t->run(); // the body returns; the coroutine frees itself
    return n;
}

std::uint64_t fiber(std::uint64_t k) {
    std::uint64_t count = 0;
    bool stop = false;
    ctx::fiber f(std::allocator_arg, ctx::protected_fixedsize_stack(taco::coroutine_stack_size),
                 [&](ctx::fiber&& sink) {
                     while (!stop) {
                         ++count;
                         sink = std::move(sink).resume();
                     }
                     return std::move(sink);
                 });
    for (std::uint64_t i = 0; i < k; ++i) f = std::move(f).resume();
    const std::uint64_t n = count;
    stop = true;
    f = std::move(f).resume();
    return n;
}

std::uint64_t coroutine_yield(std::uint64_t k) {
    std::uint64_t count = 0;
    taco::spawn_coroutine([&] {
        for (std::uint64_t i = 0; i < k; ++i, ++count) taco::yield();
    }).get();
    return count;
}

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: instr_tasks MODE K [DEPTH]\n"
                 "  MODE: runtime_fifo runtime_priority runtime_edf direct_fifo direct_priority direct_edf\n"
                 "        deque heap_priority heap_edf pt_resume plain_call pt_yield coroutine_switch fiber\n"
                 "        coroutine_yield\n");
    std::exit(2);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) usage();
    const std::string mode = argv[1];
    const std::uint64_t k = std::strtoull(argv[2], nullptr, 10);
    const std::size_t depth = argc == 4 ? std::size_t(std::strtoull(argv[3], nullptr, 10)) : 1024;
    if (k == 0 || depth == 0) usage();

    taco::policy pol = taco::policy::fifo;
    if (mode == "runtime_priority") pol = taco::policy::priority;
    if (mode == "runtime_edf") pol = taco::policy::edf;

    std::uint64_t result = 0;
    bool known = true;
    taco::run(
        tacomesh::posix::config{.cores = 1},
        [&] {
            if (mode.starts_with("runtime_")) result = through_runtime(k, depth);
            else if (mode == "direct_fifo") result = direct<taco::schedulers::fifo>(k, depth);
            else if (mode == "direct_priority") result = direct<taco::schedulers::priority>(k, depth);
            else if (mode == "direct_edf") result = direct<taco::schedulers::edf>(k, depth);
            else if (mode == "deque") result = deque_baseline(k, depth);
            else if (mode == "heap_priority")
                result = heap_baseline<int, std::greater<>>(k, depth, [](const trivial_task& t) { return t.sched.priority; });
            else if (mode == "heap_edf")
                result = heap_baseline<taco::task_clock::time_point, std::less<>>(
                    k, depth, [](const trivial_task& t) { return t.sched.deadline; });
            else if (mode == "pt_resume") result = pt_resume(k);
            else if (mode == "plain_call") result = plain_call(k);
            else if (mode == "pt_yield") result = pt_yield(k);
            else if (mode == "coroutine_switch") result = coroutine_switch(k);
            else if (mode == "fiber") result = fiber(k);
            else if (mode == "coroutine_yield") result = coroutine_yield(k);
            else known = false;
        },
        taco::run_options{.scheduling = pol});
    if (!known) usage();
    std::printf("{\"mode\": \"%s\", \"k\": %llu, \"depth\": %zu, \"result\": %llu}\n", mode.c_str(),
                static_cast<unsigned long long>(k), depth, static_cast<unsigned long long>(result));
    return result == k ? 0 : 1;
}
