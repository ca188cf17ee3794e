#pragma once
// A sink bound to a preallocated activity (CCI paper, section III.C, and
// the REFLEX event channels of section V): each value written to it is
// queued, and the activity, a task that lives in the sink, is scheduled by
// the core's policy (its priority, deadline or tier) to run fn on it. One
// value per activation, so other ready tasks are not held back by a burst;
// nothing is allocated per value beyond the queue's growth, and nothing is
// dropped: the queue grows as values come faster than they are handled. A
// value that reaches a core with no task ready or running is handled at
// once, in accept(), as the activity: that is what the scheduler would run
// next anyway (a task that a later message of the same poll round makes
// ready comes after it, as if that message had come a moment later).
//
//   auto server = taco::make_activity_sink<request>([](request r) { taco::emit(r.reply, answer(r)); },
//                                                   taco::schedule{.priority = 2});
//
// fn runs as an activity: it cannot wait (results go on through channels or
// continuations). What it throws goes to the uncaught-error handler.
#include <cstddef>
#include <deque>
#include <type_traits>
#include <utility>

#include <taco/remote_error.hpp>
#include <taco/runtime/core.hpp>
#include <taco/stopped_error.hpp>
#include <taco/task.hpp>
#include <taco/uncaught_error.hpp>
#include <taco/detail/core_identity.hpp>

namespace taco {

template <class T, class F>
class activity_sink final : private task {
public:
    using value_type = T;

    explicit activity_sink(F fn, schedule s = {}) : task(task_kind::activity, s), fn_(std::move(fn)) {}
    activity_sink(const activity_sink&) = delete;
    activity_sink& operator=(const activity_sink&) = delete;
    /// Handles what is still queued first (serving invocations meanwhile,
    /// as a waiting future does): a value accepted is a value handled.
    ~activity_sink() {
        if (!values_.empty() || queued()) [[unlikely]]
            detail::runtime().wait_until_or_stopped([this] { return values_.empty() && !queued(); });
    }

    /// Queue the value and make the activity ready; at a core with no task
    /// ready or running, run it at once instead (the scheduler would pick
    /// it next, whatever its policy): the round trip of the CCI paper's
    /// channel experiment then costs what a straight invocation's does.
    void accept(T&& v) {
        values_.push_back(std::move(v));
        auto& rt = detail::runtime();
        if (values_.size() == 1 && rt.run_if_idle(*this)) return;
        rt.make_ready(*this); // no-op while already ready
    }

    /// Values accepted and not yet handled.
    std::size_t pending() const noexcept { return values_.size(); }

private:
    void run() override {
        T v = std::move(values_.front());
        values_.pop_front();
        if (!values_.empty()) detail::runtime().make_ready(*this); // behind the tasks that became ready meanwhile
        try {
            fn_(std::move(v));
        } catch (const stopped_error&) {
            throw;
        } catch (...) {
            detail::report_uncaught(error_info::current(this_core()));
        }
    }

    F fn_;
    std::deque<T> values_;
};

/// A sink on this core whose activity runs fn(value) for each value, as a
/// task scheduled with `s`.
template <class T, class F>
activity_sink<T, std::decay_t<F>> make_activity_sink(F&& fn, schedule s = {}) {
    static_assert(std::is_invocable_v<std::decay_t<F>&, T&&>,
                  "taco::make_activity_sink<T>(fn): fn must be callable with a T (the channel's value type)");
    return activity_sink<T, std::decay_t<F>>(std::forward<F>(fn), s);
}

} // namespace taco
