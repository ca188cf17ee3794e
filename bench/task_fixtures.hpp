#pragma once
// Tasks shared by bench_tasks (timed) and instr_tasks (callgrind): the same
// objects under both, so the instruction counts explain the timings.
#include <tacomesh/posix.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>

namespace bench {

/// The baseline of a protothread resume: a plain call that cannot be inlined.
[[gnu::noinline]] inline void plain_step(std::uint64_t& count) { ++count; }

// Bench-only suspend: TACO_PT_YIELD without making the task ready again
// (TACO_PT_YIELD calls taco::start). The resumer calls run() again itself.
#define BENCH_PT_SUSPEND()                                                                               \
    do {                                                                                                 \
        this->pt_label = __LINE__;                                                                       \
        return false;                                                                                    \
        [[fallthrough]];                                                                                 \
    case __LINE__:;                                                                                      \
    } while (0)

/// Counts, suspends, forever: each run() is one resume.
struct spinning_protothread final : taco::protothread<spinning_protothread> {
    std::uint64_t count = 0;
    bool step() {
        TACO_PT_BEGIN();
        for (;;) {
            ++count;
            BENCH_PT_SUSPEND();
        }
        TACO_PT_END();
    }
};

/// Counts and yields (the real TACO_PT_YIELD: rescheduled at once) n times.
struct yielding_protothread final : taco::protothread<yielding_protothread> {
    std::uint64_t count = 0, n = 0;
    bool step() {
        TACO_PT_BEGIN();
        for (count = 0; count < n;) {
            ++count;
            TACO_PT_YIELD();
        }
        TACO_PT_END();
    }
};

/// Bench-only coroutine: counts and blocks until told to stop. Resumed by
/// calling run() directly (no scheduler): isolates taco's switch.
class switching_coroutine final : public taco::detail::coroutine_base {
public:
    switching_coroutine() : coroutine_base(taco::schedule{}) { start(taco::coroutine_stack_size); }
    std::uint64_t count = 0;
    bool stop = false;

private:
    void body() override {
        while (!stop) {
            ++count;
            block();
        }
    }
};

/// A preallocated task with trivial work (the same as the baseline's closure).
struct trivial_task final : taco::task {
    trivial_task() : task(taco::task_kind::activity) {}
    std::uint64_t* counter = nullptr;
    void run() override { ++*counter; }
};

/// `depth` tasks with random priorities (8 levels) and deadlines (1000 us
/// spread, an hour ahead): the ordered schedulers really sort.
inline std::unique_ptr<trivial_task[]> make_tasks(std::size_t depth, std::uint64_t* counter) {
    std::unique_ptr<trivial_task[]> ts(new trivial_task[depth]);
    std::mt19937 rng(12345);
    const auto base = taco::task_clock::now() + std::chrono::hours(1);
    for (std::size_t i = 0; i < depth; ++i) {
        ts[i].counter = counter;
        ts[i].sched = {.priority = int(rng() % 8), .deadline = base + std::chrono::microseconds(rng() % 1000)};
    }
    return ts;
}

} // namespace bench
