#pragma once
// An invocation that becomes a task on arrival (CCI paper, section IV.B:
// "simpler invocations can then invoke longer running actions by enqueueing
// tasks"). It is taken from the channel in order like any other; the task
// then runs when the core's policy picks it.
#include <taco/activity.hpp>
#include <taco/stackful_coroutine.hpp>
#include <taco/task.hpp>
#include <taco/runtime/core.hpp>

namespace taco::detail {

/// Make `body` a task of this core, of the kind and schedule `spec` asks for.
template <class F>
void spawn_task(const task_spec& spec, F body) {
    auto& rt = runtime();
    if (spec.kind == task_kind::coroutine)
        rt.make_ready(*new coroutine_task<F>(std::move(body), spec.sched, coroutine_stack_size));
    else
        rt.make_ready(*new activity_task<F>(std::move(body), spec.sched));
}

template <class Req>
struct task_request {
    Req req;
    task_spec spec;
    void operator()() {
        spawn_task(spec, [r = req]() mutable { r(); });
    }
};

/// How a collective's member runs its part: straight from the channel, or
/// as a task (the invocation options of a group target).
struct run_straight {
    template <class F>
    void operator()(F&& f) const {
        f();
    }
};
struct run_as_task {
    task_spec spec;
    template <class F>
    void operator()(F f) const {
        spawn_task(spec, std::move(f));
    }
};

} // namespace taco::detail
