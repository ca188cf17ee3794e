#pragma once
// The one task interface (CCI paper, section IV.B): a run() method plus
// scheduling data. Activities, protothreads and coroutines all implement it;
// schedulers see only this. The hooks are intrusive (Boost.Intrusive), so
// enqueueing a task never allocates.
#include <chrono>
#include <cstdint>
#include <limits>
#include <cstddef>
#include <span>
#include <stdexcept>

#include <boost/intrusive/list_hook.hpp>
#include <boost/intrusive/set_hook.hpp>

namespace taco {

using task_clock = std::chrono::steady_clock;

/// How a task (or an invocation that becomes one) is to be scheduled.
struct schedule {
    /// Fixed priority: higher runs first (priority scheduler).
    int priority = 0;
    /// The tier of a hierarchical scheduler the task goes to
    /// (schedulers/hierarchical.hpp); other schedulers ignore it. In the
    /// padding before the deadline: a schedule travels in task invocations.
    std::uint8_t tier = 0;
    /// Absolute deadline: earlier runs first (EDF scheduler).
    task_clock::time_point deadline = task_clock::time_point::max();
};

/// activity: runs to completion; protothread: stackless, TACO_PT_AWAIT;
/// coroutine: own stack (Boost.Context); co_task: C++20 coroutine, co_await.
enum class task_kind : std::uint8_t { activity, protothread, coroutine, co_task };

/// How an invocation runs on arrival when it should not run straight from
/// the channel: as a task of this kind, scheduled by the core's policy
/// (the options taco::as_activity{}, taco::as_coroutine{}, ...).
struct task_spec {
    schedule sched;
    task_kind kind = task_kind::activity;
};

class task {
public:
    /// Run until the task finishes or suspends itself. A finished task may
    /// free itself inside run(): the scheduler never touches it afterwards.
    virtual void run() = 0;

    task_kind kind() const noexcept { return kind_; }

    /// Block the running task until something schedules it again (a future
    /// it waits on). Only coroutines have a stack to keep while blocked;
    /// the others report the misuse clearly instead of deadlocking.
    virtual void block();

    /// The stack the task runs on, if it has one of its own (coroutines):
    /// debug checks look for addresses on it in outgoing messages.
    virtual std::span<const std::byte> own_stack() const noexcept { return {}; }

    schedule sched;

    // One hook per container shape; a task is in at most one scheduler.
    boost::intrusive::list_member_hook<> fifo_hook;
    boost::intrusive::set_member_hook<> ordered_hook;

    /// In a ready queue now. (The hooks are Boost.Intrusive's safe-link
    /// default: unlinking resets them, so is_linked() tells.)
    bool queued() const noexcept { return fifo_hook.is_linked() || ordered_hook.is_linked(); }

protected:
    explicit task(task_kind k, schedule s = {}) noexcept : sched(s), kind_(k) {}
    task(const task&) = delete;
    task& operator=(const task&) = delete;
    ~task() = default;

private:
    task_kind kind_;
};

/// A task blocked where blocking is impossible (an activity or protothread
/// calling future::get / sync).
class blocking_error : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

inline void task::block() {
    switch (kind_) {
    case task_kind::activity:
        throw blocking_error("taco: an activity cannot wait (it runs to completion without a stack of its own): "
                             "pass a continuation, or spawn a coroutine");
    case task_kind::protothread:
        throw blocking_error("taco: a protothread waits with TACO_PT_AWAIT(future), not with future::get() or sync()");
    default:
        throw blocking_error("taco: a C++20 coroutine task waits with co_await future, not with future::get() or sync()");
    }
}

} // namespace taco
