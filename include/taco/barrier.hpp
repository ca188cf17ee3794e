#pragma once
// A barrier for tasks on any cores: `parties` arrivals release them all,
// then it can be used again (a new phase). The state lives on the core that
// made it; arrivals are invocations on it, and the release is one message
// back to each waiter, so no core spins on shared memory.
//
//   taco::barrier b(n);                     // on one core; outlives its uses
//   auto ref = b.ref();                     // trivially copyable, pass it on
//   ... on any core, in main, an invocation or a coroutine:
//   ref.arrive_and_wait();
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <taco/async.hpp>
#include <taco/continuation.hpp>
#include <taco/future.hpp>
#include <taco/global_ptr.hpp>

namespace taco {

namespace detail {
struct barrier_state {
    std::uint32_t parties;
    std::vector<future_continuation<void>> waiting;

    void arrive(future_continuation<void> w) {
        waiting.push_back(w);
        if (waiting.size() < parties) return;
        const auto release = std::move(waiting);
        waiting.clear();
        for (const auto& r : release) r.deliver();
    }
};
} // namespace detail

/// A trivially copyable reference to a taco::barrier, valid on every core.
class barrier_ref {
public:
    barrier_ref() = default;
    explicit barrier_ref(global_ptr<detail::barrier_state> s) noexcept : state_(s) {}

    /// Arrive and wait until all parties of this phase have arrived. A
    /// coroutine suspends; main and invocations serve invocations meanwhile.
    void arrive_and_wait() const {
        if (!state_) throw std::invalid_argument("taco::barrier_ref: null reference");
        detail::require_can_wait(); // an arrival is counted at once: refuse before it is sent
        future<void> done;
        const detail::future_continuation<void> release{this_core(), done.arm()};
        {
            const detail::disarm_on_throw<detail::future_continuation<void>> refused(release);
            async(state_, &detail::barrier_state::arrive, release);
        }
        done.get();
    }

private:
    global_ptr<detail::barrier_state> state_;
};

/// The barrier itself, on the core that made it. Not copyable: hand out ref().
class barrier {
public:
    explicit barrier(std::uint32_t parties) : state_{parties, {}} {
        if (parties == 0) throw std::invalid_argument("taco::barrier: needs at least one party");
    }
    barrier(const barrier&) = delete;
    barrier& operator=(const barrier&) = delete;

    barrier_ref ref() noexcept { return barrier_ref(to_global(&state_)); }
    void arrive_and_wait() { ref().arrive_and_wait(); }

private:
    detail::barrier_state state_;
};

} // namespace taco
