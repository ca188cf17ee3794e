#pragma once
// An invocation that becomes a task on arrival (CCI paper, section IV.B:
// "simpler invocations can then invoke longer running actions by enqueueing
// tasks"). It is taken from the channel in order like any other; the task
// then runs when the core's policy picks it.
#include <taco/activity.hpp>
#include <taco/coroutine.hpp>
#include <taco/task.hpp>
#include <taco/runtime/core.hpp>

namespace taco::detail {

template <class Req>
struct task_request {
    Req req;
    task_spec spec;
    void operator()() {
        auto body = [r = req]() mutable { r(); };
        auto& rt = runtime();
        if (spec.kind == task_kind::coroutine)
            rt.make_ready(*new coroutine_task<decltype(body)>(std::move(body), spec.sched, coroutine_stack_size));
        else
            rt.make_ready(*new activity_task<decltype(body)>(std::move(body), spec.sched));
    }
};

} // namespace taco::detail
