#pragma once
// Future variables (CCI paper, section II.A and III.B): the caller passes the
// future's global address with its invocation; the callee's continuation
// assigns it with a message back to the caller's core. The future lives on
// that core and is only touched there, so it needs no atomics.
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <taco/core_id.hpp>
#include <taco/remote_error.hpp>
#include <taco/detail/core_identity.hpp>
#include <taco/runtime/core.hpp>
#include <taco/task.hpp>
#include <taco/usage_error.hpp>

namespace taco {

template <class R>
class future;

/// Thrown by future::get() when the result did not come within its limit
/// (the taco::timeout option).
class timeout_error : public std::runtime_error {
public:
    timeout_error() : std::runtime_error("taco: no result within the time limit (taco::timeout)") {}
};

namespace detail {
struct start_tag {};

template <class R>
struct future_value {
    std::optional<R> value;
    template <class V>
    void set(V&& v) { value.emplace(std::forward<V>(v)); }
    R take() { return std::move(*value); }
};
template <>
struct future_value<void> {
    void set() {}
    void take() {}
};

/// For operations that send, then wait (sync, a barrier's arrival): refuse
/// a task that cannot wait *before* anything is sent. Checked only at the
/// wait, the request would already be out, and the pending future's
/// destructor would then wait inside the activity for a reply that may
/// need this very task to finish first (a barrier's other parties): a
/// deadlock where blocking_error was promised.
inline void require_can_wait() {
    if (task* t = runtime().current_task(); t && t->kind() != task_kind::coroutine) t->block(); // throws
}
} // namespace detail

/// The result of an invocation, on the caller's core. Not copyable or movable:
/// the pending continuation holds its address. A future that still waits for
/// its result when destroyed serves invocations until the result has come,
/// so a late result never writes into freed memory. [[nodiscard]]: a
/// dropped future would wait at once, in its destructor.
template <class R>
class [[nodiscard]] future {
public:
    using value_type = R;

    future() = default;
    future(const future&) = delete;
    future& operator=(const future&) = delete;
    ~future() {
        // Never throws: on a stopping core the result will not come anyway.
        if (state_ == state::pending) {
            auto& rt = detail::runtime();
            if (task* t = rt.current_task(); t && t->kind() == task_kind::coroutine) block_in(*t);
            else rt.wait_until_or_stopped([this] { return ready(); });
        }
    }

    /// Used by taco::call and the spawns: start the work on this very object (C++17
    /// guaranteed elision keeps its address stable).
    template <class Start>
    future(detail::start_tag, Start&& start) {
        std::forward<Start>(start)(*this);
    }

    bool ready() const noexcept { return state_ > state::pending; }
    /// True once the result has come and it is an exception.
    bool failed() const noexcept { return state_ > state::value; }

    /// Wait until the result has come. A coroutine suspends (its core runs
    /// other tasks and invocations meanwhile); main and invocations run
    /// straight from the channel keep serving invocations (nested); an
    /// activity or protothread cannot wait: taco::blocking_error.
    void wait() {
        if (ready()) return;
        if (state_ == state::unarmed) [[unlikely]] throw_unarmed();
        auto& rt = detail::runtime();
        if (task* t = rt.current_task()) block_in(*t);
        else rt.wait_until([this] { return ready(); });
    }

    /// Wait, then return the result or throw taco::remote_error. A value is
    /// taken once: a second get() is a usage_error (an error rethrows).
    R get() {
        wait();
        if (state_ != state::value) [[unlikely]] throw_failure();
        state_ = state::taken;
        return value_.take();
    }

    /// Schedule `t` on this core when the result has come (protothreads:
    /// TACO_PT_AWAIT). One task per future.
    void resume_when_ready(task& t) {
        if (ready()) return detail::runtime().make_ready(t);
        if (state_ == state::unarmed) [[unlikely]] throw_unarmed();
        if (waiter_ && waiter_ != &t) throw blocking_error("taco: two tasks wait on one future; give each its own");
        waiter_ = &t;
    }

    // --- used by continuations, on this future's core ---
    core_id arm() {
        // A result still on its way would land in the new invocation's
        // future (or in a destroyed frame): refuse before anything is sent.
        if (state_ == state::pending) [[unlikely]]
            throw usage_error("taco: this future still waits for the result of an earlier invocation; wait for it "
                              "(get/wait) before passing the future again, or use another future");
        state_ = state::pending;
        error_.reset();
        return this_core();
    }
    template <class... V>
    void set_value(V&&... v) {
        value_.set(std::forward<V>(v)...);
        became_ready(state::value);
    }
    void set_timeout() { became_ready(state::timed_out); }
    void set_error(const error_info& e) {
        error_.emplace(e.view());
        error_origin_ = e.origin;
        became_ready(state::failed);
    }

private:
    // One field for what used to be three flags (armed, ready, timed out):
    // arming, assigning and the tests in get() and the destructor are then
    // one store or one compare each. Ordered: ready() is "> pending",
    // failed() is "> value".
    // taken: the value went to a get(); still ready, so waits return and the
    // future can be passed again, but a second get() has nothing to give.
    enum class state : unsigned char { unarmed, pending, taken, value, failed, timed_out };

    void became_ready(state s) {
        state_ = s;
        // Tested before it is cleared: almost always no task waits.
        if (task* w = waiter_) [[unlikely]] {
            waiter_ = nullptr;
            detail::runtime().make_ready(*w);
        }
    }
    // Nothing will ever assign a future no invocation was given: waiting
    // for it would hang for ever, so it is a usage error, raised at once.
    [[noreturn]] static void throw_unarmed() {
        throw usage_error("taco: waiting on a future that no invocation was given; pass it to taco::async, "
                          "taco::call, a spawn or a collective first");
    }
    [[noreturn]] void throw_failure() {
        if (state_ == state::taken)
            throw usage_error("taco: get() on a future whose value was taken by an earlier get(); keep the value, "
                              "or pass the future to another invocation first");
        if (state_ == state::timed_out) throw timeout_error();
        throw remote_error(error_origin_, *error_);
    }
    void block_in(task& t) {
        if (t.kind() != task_kind::coroutine) t.block(); // throws: only coroutines keep a stack to block on
        if (waiter_ && waiter_ != &t)
            throw blocking_error("taco: two tasks wait on one future; give each its own");
        while (!ready()) {
            waiter_ = &t;
            t.block(); // resumed by became_ready() (or throws for tasks that cannot block)
        }
    }

    task* waiter_ = nullptr;
    detail::future_value<R> value_;
    std::optional<std::string> error_;
    core_id error_origin_ = no_core;
    state state_ = state::unarmed;
};

} // namespace taco
