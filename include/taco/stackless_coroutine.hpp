#pragma once
// C++20 coroutine tasks: today's idiom for protothreads. The coroutine's
// promise *is* a taco::task, so the core's scheduler runs it like any other
// (run() resumes it), and `co_await future` attaches it to the future, which
// schedules it again when assigned. Like a protothread it has no stack of
// its own: it can wait only at a co_await in its own body. Unlike one, its
// locals survive suspension (they live in the coroutine frame, which the
// compiler allocates).
//
//   taco::co_task<long> fetch(taco::global_ptr<store> s) {
//       taco::future<long> f;
//       taco::async(s, taco::m2f(&store::get), f);
//       co_return co_await f + 1;
//   }
//   auto r = taco::spawn(fetch(s));   // future<long>
#include <coroutine>
#include <exception>
#include <type_traits>
#include <utility>

#include <taco/future.hpp>
#include <taco/runtime/core.hpp>
#include <taco/stopped_error.hpp>
#include <taco/detail/core_identity.hpp>
#include <taco/task.hpp>

namespace taco {

template <class R>
class co_task;

namespace detail {

template <class R>
struct co_promise_base : task {
    future_state<R>* result = nullptr;

    co_promise_base() : task(task_kind::co_task) {}

    std::suspend_always initial_suspend() noexcept { return {}; } // runs when scheduled
    auto final_suspend() noexcept {
        struct release {
            bool await_ready() noexcept { return false; }
            void await_suspend(std::coroutine_handle<> h) noexcept { h.destroy(); }
            void await_resume() noexcept {}
        };
        return release{};
    }
    void unhandled_exception() {
        try {
            throw;
        } catch (const stopped_error&) {
            throw; // the core is stopping
        } catch (...) {
            result->set_error(error_info::current(this_core()));
        }
    }
};

template <class R>
struct co_promise : co_promise_base<R> {
    co_task<R> get_return_object();
    void run() override { std::coroutine_handle<co_promise>::from_promise(*this).resume(); }
    template <class V>
    void return_value(V&& v) {
        this->result->set_value(std::forward<V>(v));
    }
};
template <>
struct co_promise<void> : co_promise_base<void> {
    co_task<void> get_return_object();
    void run() override { std::coroutine_handle<co_promise>::from_promise(*this).resume(); }
    void return_void() { this->result->set_value(); }
};

} // namespace detail

/// The return type of a C++20 coroutine that runs as a TACO task. Start it
/// with taco::spawn (or it is destroyed unstarted).
template <class R>
class [[nodiscard]] co_task {
public:
    using promise_type = detail::co_promise<R>;

    co_task(co_task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
    co_task(const co_task&) = delete;
    ~co_task() {
        if (h_) h_.destroy();
    }

    /// Take the coroutine out (for taco::spawn).
    std::coroutine_handle<promise_type> release() && noexcept { return std::exchange(h_, {}); }

private:
    friend promise_type;
    explicit co_task(std::coroutine_handle<promise_type> h) : h_(h) {}
    std::coroutine_handle<promise_type> h_;
};

template <class R>
co_task<R> detail::co_promise<R>::get_return_object() {
    return co_task<R>(std::coroutine_handle<co_promise>::from_promise(*this));
}
inline co_task<void> detail::co_promise<void>::get_return_object() {
    return co_task<void>(std::coroutine_handle<co_promise>::from_promise(*this));
}

/// Schedule the coroutine on this core; the future gets its co_return value
/// (or its exception, rethrown by get() as remote_error).
template <class R>
future<R> spawn(co_task<R>&& t, schedule s = {}) {
    return future<R>(detail::start_tag{}, [&](future<R>& f) {
        auto* state = f.arm(); // the future may move before the task ends: it assigns the state
        auto h = std::move(t).release();
        h.promise().result = state;
        h.promise().sched = s;
        detail::runtime().make_ready(h.promise());
    });
}

namespace detail {
template <class R>
struct future_awaiter {
    future<R>& f;
    bool await_ready() const noexcept { return f.ready(); }
    template <class P>
        requires std::is_base_of_v<task, P>
    void await_suspend(std::coroutine_handle<P> h) {
        f.resume_when_ready(h.promise());
    }
    R await_resume() { return f.get(); }
};
} // namespace detail

/// co_await on a future inside a co_task: suspends the task until assigned.
template <class R>
detail::future_awaiter<R> operator co_await(future<R>& f) {
    return {f};
}
/// co_await on a temporary (taco::when_all(a, b), a then()): it lives in the
/// coroutine's frame until the co_await has its value.
template <class R>
detail::future_awaiter<R> operator co_await(future<R>&& f) {
    return {f};
}

} // namespace taco
