#pragma once
// Timers and timeouts (CCI paper, section II.A): "the caller creates a
// timeout invocation that will be carried out by the runtime environment
// after a specified time ... either the real continuation or the timeout
// will be processed first".
//
//   taco::after(10ms, gp, taco::m2f(&T::tick));            // run on gp's core in 10 ms
//   taco::after(10ms, core, taco::m2f(fn, args...));       // a function on a core
//   taco::future<long> f;
//   taco::async(gp, taco::m2f(&T::slow), taco::within(f, 5ms));
//   f.get();                                               // value, or throws taco::timeout_error
//
// A result that comes after its future timed out is dropped (and counted in
// core_stats::late_results): it addresses a {slot, generation} on the
// caller's core, never the future itself, which may be gone by then.
#include <chrono>
#include <memory>
#include <type_traits>

#include <taco/async.hpp>
#include <taco/future.hpp>
#include <taco/runtime.hpp>
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
        current_runtime<Req>().add_timer(*new function_timer<decltype(body)>(due, std::move(body)));
    }
};

template <class R>
future<R>* claim_future(std::uint32_t slot, std::uint32_t generation) {
    auto& rt = current_runtime<R>();
    auto* s = rt.claim_slot(slot, generation);
    if (!s) return nullptr; // late: the future timed out
    if (s->timer->timer_hook.is_linked()) {
        rt.cancel_timer(*s->timer);
        s->timer->discard();
    } // else it is due and queued: it will find the slot closed and do nothing
    return static_cast<future<R>*>(s->future);
}

template <class R>
struct timed_set_message {
    std::uint32_t slot, generation;
    value_or_unit<R> value;
    void operator()() {
        if (auto* f = claim_future<R>(slot, generation)) {
            if constexpr (std::is_void_v<R>) f->set_value(); else f->set_value(value);
        }
    }
};
template <class R>
struct timed_fail_message {
    std::uint32_t slot, generation;
    error_info error;
    void operator()() {
        if (auto* f = claim_future<R>(slot, generation)) f->set_error(error);
    }
};

template <class R>
struct timed_future_continuation {
    core_id core;
    std::uint32_t slot, generation;
    template <class... V>
    void deliver(V&&... v) const {
        current_runtime<R>().template send<timed_set_message<R>>(core, slot, generation,
                                                                 value_or_unit<R>{std::forward<V>(v)...});
    }
    void fail(const error_info& e) const {
        current_runtime<R>().template send<timed_fail_message<R>>(core, slot, generation, e);
    }
};

template <class R>
class timeout_timer final : public timer_task {
public:
    timeout_timer(task_clock::time_point due) : timer_task(due, {}) {}
    std::uint32_t slot = 0, generation = 0;
    void discard() override { delete this; }
    void run() override {
        std::unique_ptr<timeout_timer> self(this);
        auto& rt = current_runtime<R>();
        if (auto* s = rt.claim_slot(slot, generation, /*count_late=*/false))
            static_cast<future<R>*>(s->future)->set_timeout();
    }
};

template <class R>
struct timed_future {
    using value_type = R;
    future<R>* target;
    task_clock::duration limit;

    /// Arm the future, open its slot and start the timeout timer.
    timed_future_continuation<R> arm() const {
        auto& rt = current_runtime<R>();
        target->arm();
        auto* timer = new timeout_timer<R>(task_clock::now() + limit);
        const auto [slot, generation] = rt.open_slot(target, timer);
        timer->slot = slot;
        timer->generation = generation;
        rt.add_timer(*timer);
        return {this_core(), slot, generation};
    }
};

} // namespace detail

/// A continuation into `f` that gives up after `limit`: f then throws
/// taco::timeout_error, and a late result is dropped.
template <class R, class Rep, class Period>
detail::timed_future<R> within(future<R>& f, std::chrono::duration<Rep, Period> limit) {
    return {&f, std::chrono::duration_cast<task_clock::duration>(limit)};
}

/// Run `call` on `*target`, on target's core, once `delay` has passed (as an
/// activity; exceptions go to that core's uncaught-error handler).
template <class Rep, class Period, class T, class F, class... A>
void after(std::chrono::duration<Rep, Period> delay, global_ptr<T> target, const bound_call<F, A...>& call) {
    static_assert(bound_call<F, A...>::template applies_to<T>,
                  "taco::after: the bound method cannot be called with these arguments on this object type");
    using req = detail::request<T, bound_call<F, A...>, detail::no_continuation>;
    detail::current_runtime<T>().template send<detail::timer_request<req>>(
        target.core(), task_clock::now() + delay, req{{target.address()}, call, {}});
}
/// Run the function `call` on core `core` once `delay` has passed.
template <class Rep, class Period, class F, class... A>
void after(std::chrono::duration<Rep, Period> delay, core_id core, const bound_call<F, A...>& call) {
    static_assert(bound_call<F, A...>::template applies_to<void>,
                  "taco::after: the bound function cannot be called with these arguments");
    using req = detail::request<void, bound_call<F, A...>, detail::no_continuation>;
    detail::current_runtime<F>().template send<detail::timer_request<req>>(core, task_clock::now() + delay,
                                                                          req{{}, call, {}});
}

} // namespace taco
