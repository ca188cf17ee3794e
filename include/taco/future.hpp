#pragma once
// Future variables (CCI paper, section II.A and III.B): the caller passes the
// future's global address with its invocation; the callee's continuation
// assigns it with a message back to the caller's core. The future lives on
// that core and is only touched there, so it needs no atomics.
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <taco/core_id.hpp>
#include <taco/remote_error.hpp>
#include <taco/runtime.hpp>
#include <taco/this_core.hpp>

namespace taco {

template <class R>
class future;

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
} // namespace detail

/// The result of an invocation, on the caller's core. Not copyable or movable:
/// the pending continuation holds its address. A future that still waits for
/// its result when destroyed serves invocations until the result has come,
/// so a late result never writes into freed memory.
template <class R>
class future {
public:
    using value_type = R;

    future() = default;
    future(const future&) = delete;
    future& operator=(const future&) = delete;
    ~future() {
        // Never throws: on a stopping core the result will not come anyway.
        if (armed_ && !ready_) detail::current_runtime<R>().wait_until_or_stopped([this] { return ready_; });
    }

    /// Used by taco::call: start the invocation on this very object (C++17
    /// guaranteed elision keeps its address stable).
    template <class Start>
    future(detail::start_tag, Start&& start) {
        std::forward<Start>(start)(*this);
    }

    bool ready() const noexcept { return ready_; }
    /// True once the result has come and it is an exception.
    bool failed() const noexcept { return ready_ && error_.has_value(); }

    /// Serve invocations on this core until the result has come.
    void wait() {
        if (!ready_) detail::current_runtime<R>().wait_until([this] { return ready_; });
    }

    /// Wait, then return the result or throw taco::remote_error. Once only.
    R get() {
        wait();
        if (error_) throw remote_error(error_origin_, *error_);
        return value_.take();
    }

    // --- used by continuations, on this future's core ---
    core_id arm() noexcept {
        armed_ = true;
        ready_ = false;
        error_.reset();
        return this_core();
    }
    template <class... V>
    void set_value(V&&... v) {
        value_.set(std::forward<V>(v)...);
        ready_ = true;
    }
    void set_error(const error_info& e) {
        error_.emplace(e.view());
        error_origin_ = e.origin;
        ready_ = true;
    }

private:
    detail::future_value<R> value_;
    std::optional<std::string> error_;
    core_id error_origin_ = no_core;
    bool armed_ = false;
    bool ready_ = false;
};

} // namespace taco
