#pragma once
// Activities (CCI paper, section IV.A): tasks that run to completion on the
// core's stack. They cannot wait (future::get throws taco::blocking_error);
// results flow on through continuations.
#include <memory>
#include <type_traits>
#include <utility>

#include <taco/future.hpp>
#include <taco/runtime/core.hpp>
#include <taco/stopped_error.hpp>
#include <taco/task.hpp>
#include <taco/detail/request.hpp>

namespace taco {

namespace detail {

/// Run fn and hand its value or exception to a future on this core.
template <class F, class R>
void deliver_outcome(F& fn, future_state<R>* result) {
    try {
        if constexpr (std::is_void_v<R>) {
            fn();
            result->set_value();
        } else {
            result->set_value(fn());
        }
    } catch (const stopped_error&) {
        throw;
    } catch (...) {
        result->set_error(error_info::current(this_core()));
    }
}

/// An activity running fn() (which reports its own outcome).
template <class F>
class activity_task final : public task {
public:
    activity_task(F fn, schedule s) : task(task_kind::activity, s), fn_(std::move(fn)) {}

    void run() override {
        // Free ourselves even if fn throws (a stopping core's stopped_error).
        std::unique_ptr<activity_task> self(this);
        fn_();
    }

private:
    F fn_;
};

} // namespace detail

/// Run `fn` as an activity on this core, when the scheduler picks it; the
/// future gets its result (or exception).
template <class F>
auto spawn_activity(F fn, schedule s = {}) {
    using R = std::invoke_result_t<F&>;
    return future<R>(detail::start_tag{}, [&](future<R>& f) {
        auto* fp = f.arm(); // the state: the future may move before the activity runs
        auto body = [fn = std::move(fn), fp]() mutable { detail::deliver_outcome(fn, fp); };
        detail::runtime().make_ready(*new detail::activity_task<decltype(body)>(std::move(body), s));
    });
}

} // namespace taco
