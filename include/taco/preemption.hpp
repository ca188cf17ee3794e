#pragma once
// Preemptive invocations (CCI paper, sections III and IV.A): an urgent
// invocation (taco::urgent) interrupts a core that computes inside
// taco::preemptible, at any instruction, without the computation polling.
//
//   double x = taco::preemptible([&] { return simulate(grid); }); // long, never polls
//   taco::async(gp, &T::stop, taco::urgent);   // on another core: runs inside simulate()
//
// Where an interrupt may switch to the urgent invocations, as Go's
// asynchronous preemption decides at its safe points:
// - only inside taco::preemptible, whose computation makes no TACO call (a
//   debug build refuses one: it could be interrupted halfway through the
//   runtime's own state, which the invocations use);
// - only in the program's own code: an interrupt that finds the core in a
//   shared library (the C library's malloc, which may hold the lock an
//   invocation's allocation would take) tries again shortly;
// - never within an interruption (they do not nest).
// What an urgent invocation may touch: it runs like an interrupt handler,
// between two instructions of the computation, on the same core. State the
// computation uses must be consistent at every instruction for it (a
// std::atomic flag the computation reads, a value it does not hold in a
// register across the interruption), as for a signal handler. It may send
// invocations and complete futures; it should not wait (the computation
// waits with it).
//
// On platforms that cannot interrupt a core (taco::preemption_endpoint),
// urgent invocations run at the end of the computation instead.
#include <functional>
#include <type_traits>
#include <utility>

#include <taco/runtime/core.hpp>

namespace taco {

/// Run f(args...) so that urgent invocations to this core interrupt it (see
/// the top of this file); returns its result. An exception that stopped an
/// interruption (this core stopping) is rethrown when f returns.
template <class F, class... A>
decltype(auto) preemptible(F&& f, A&&... args) {
    detail::core& rt = detail::runtime();
    rt.enter_preemptible();
    struct leave_on_unwind {
        detail::core& rt;
        bool armed = true;
        ~leave_on_unwind() {
            if (!armed) return;
            try {
                rt.leave_preemptible();
            } catch (...) { // f's exception is the one that travels
            }
        }
    } guard{rt};
    if constexpr (std::is_void_v<std::invoke_result_t<F, A...>>) {
        std::invoke(std::forward<F>(f), std::forward<A>(args)...);
        guard.armed = false;
        rt.leave_preemptible();
    } else {
        decltype(auto) r = std::invoke(std::forward<F>(f), std::forward<A>(args)...);
        guard.armed = false;
        rt.leave_preemptible();
        return r;
    }
}

/// Whether the caller runs as an interruption of a preemptible computation
/// (an urgent invocation that preempted it).
inline bool preempting() { return detail::runtime().preempting(); }

} // namespace taco
