#pragma once
// Timers (CCI paper, section II.A: "the caller creates a timeout invocation
// that will be carried out by the runtime environment after a specified
// time"): run an invocation on its target's core once a delay has passed.
//
//   taco::after(10ms, gp, &T::tick);                // a method, on gp's core
//   taco::after(10ms, core, &fn, args...);          // a function, on `core`
//
// Timeouts of results are an invocation option instead (taco::timeout).
#include <chrono>
#include <memory>
#include <type_traits>
#include <utility>

#include <taco/async.hpp>
#include <taco/m2f.hpp>
#include <taco/runtime/core.hpp>
#include <taco/detail/clock_arithmetic.hpp>
#include <taco/detail/request.hpp>
#include <taco/detail/timer_queue.hpp>

namespace taco {

namespace detail {

template <class F>
class function_timer final : public timer_task {
public:
    function_timer(task_clock::time_point due, F fn) : timer_task(due, {}), fn_(std::move(fn)) {}
    void run() override {
        std::unique_ptr<function_timer> self(this);
        fn_();
    }
    void discard() override { delete this; }

private:
    F fn_;
};

/// Registers, on its destination core, a timer that runs the request.
template <class Req>
struct timer_request {
    task_clock::time_point due;
    Req req;
    void operator()() {
        auto body = [r = req]() mutable { r(); };
        runtime().add_timer(*new function_timer<decltype(body)>(due, std::move(body)));
    }
};

} // namespace detail

/// Run the call on the target's core once `delay` has passed (as an
/// activity; exceptions go to that core's uncaught-error handler). The target
/// is a taco::global_ptr or a core id, the call as for taco::async.
template <class Rep, class Period, class Target, class F, class... A>
void after(std::chrono::duration<Rep, Period> delay, Target target, F&& fn, A&&... args) {
    static_assert(detail::target_traits<Target>::single,
                  "taco::after: the target is a taco::global_ptr or a core id (not a group)");
    const auto call = detail::bind_call(std::forward<F>(fn), std::forward<A>(args)...);
    using Call = detail::bare<decltype(call)>;
    using T = typename detail::target_traits<Target>::object;
    detail::check_applies<Call, T>();
    using req = detail::request<T, Call, detail::no_continuation>;
    detail::object_ref<T> object{};
    core_id dest;
    if constexpr (std::is_void_v<T>) {
        dest = core_id(target);
    } else {
        object.ptr = target.address();
        dest = target.core();
    }
    const auto due = detail::due_in(delay);
    // The same check as an invocation's, before anything is sent: a timer
    // for a core the run lacks would write past the channels.
    detail::core& rt = detail::checked_runtime<T>(dest, object.get());
    rt.send<detail::timer_request<req>>(dest, due, req{object, call, {}});
}

} // namespace taco
