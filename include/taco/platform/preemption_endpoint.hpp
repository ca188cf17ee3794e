#pragma once
// Optional part of a platform: interrupting a core for urgent invocations
// (the CCI paper's preemptive invocations, sections III and IV.A), so that
// they run even while it computes inside taco::preemptible without polling.
//
// - `allow_preemption(true)` (the core enters its outermost preemptible
//   computation): from now on a sender of an urgent invocation to this core
//   also interrupts it, and the interrupt calls the runtime's
//   core::preempt_now() on this core's thread, unless the interrupted code
//   is not the program's own (a library that may hold a lock the
//   invocations would take: then it tries again shortly). If an urgent
//   invocation was signalled before, the platform interrupts at once.
// - `allow_preemption(false)`: no more interrupts (pending ones find the
//   core outside taco::preemptible and do nothing).
// Without it, urgent invocations run at the end of the computation (and at
// every taco::urgent_point() outside one), as cooperative ones do.
#include <concepts>

namespace taco {

template <class E>
concept preemption_endpoint = requires(E& e, bool on) {
    { e.allow_preemption(on) } -> std::same_as<void>;
};

} // namespace taco
