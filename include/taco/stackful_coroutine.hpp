#pragma once
// Coroutines (CCI paper, section IV.A): tasks with a stack of their own,
// so they can block inside nested calls:
// future::get() / sync() suspend only the coroutine, and the core keeps
// running invocations and other tasks until the future schedules it again.
//
// The stack switch is the execution context's (detail/context/): inline
// assembly on x86-64, a Boost.Context fiber elsewhere. Stacks come from a
// per-core pool of guarded stacks (detail/context/pooled_stack.hpp).
//
// The contexts report every switch to the sanitizers
// (detail/context/sanitizer_reports.hpp).
#include <cstddef>
#include <span>
#include <type_traits>
#include <utility>

#include <taco/activity.hpp>
#include <taco/detail/context/execution_context.hpp>
#include <taco/detail/context/overflow_report.hpp>
#include <taco/future.hpp>
#include <taco/runtime/core.hpp>
#include <taco/stopped_error.hpp>
#include <taco/task.hpp>

namespace taco {

/// Stack size of coroutines (bytes, including nothing else); 64 KiB by default.
inline std::size_t coroutine_stack_size = 64 * 1024;

namespace detail {

class coroutine_base : public task {
public:
    void run() final {
        if (context_.resume()) delete this; // body has returned; the context released its stack
    }

    void block() final { context_.suspend(); }

    std::span<const std::byte> own_stack() const noexcept final {
        const auto& sc = context_.stack();
        if (!sc.sp) return {};
        return {static_cast<const std::byte*>(sc.sp) - sc.size, sc.size}; // sp is the top: stacks grow down
    }

protected:
    explicit coroutine_base(schedule s) : task(task_kind::coroutine, s) {}
    virtual ~coroutine_base() = default;
    /// Runs on the coroutine's stack; must not throw.
    virtual void body() = 0;

    void start(std::size_t stack_size) {
        runtime().core_local<overflow_reports>();
        context_.start(stack_size, &main, this);
    }

private:
    static void main(void* self) noexcept { static_cast<coroutine_base*>(self)->body(); }

    // In the SIGSEGV handler: is `fault` the guard page of the coroutine
    // running on this thread? Only reads (the runtime's current task and
    // that coroutine's stack), as a signal handler may.
    static bool overflowed(const void* fault, overflow_info& info) noexcept {
        core* rt = tls_runtime;
        task* t = rt ? rt->current_task() : nullptr;
        if (!t || t->kind() != task_kind::coroutine) return false;
        const auto& context = static_cast<coroutine_base*>(t)->context_;
        if (!context.stack().sp || !pooled_stack::in_guard_page(context.stack(), fault)) return false;
        info = {context.requested_size(), t, rt->id()};
        return true;
    }
    struct overflow_reports : overflow_guard {
        overflow_reports() : overflow_guard(&overflowed) {}
    };

    execution_context context_;
};

/// A coroutine running fn() (which reports its own outcome).
template <class F>
class coroutine_task final : public coroutine_base {
public:
    coroutine_task(F fn, schedule s, std::size_t stack) : coroutine_base(s), fn_(std::move(fn)) { start(stack); }

private:
    void body() override {
        try {
            fn_();
        } catch (const stopped_error&) {
            // the core is stopping; nothing may escape a fiber's function
        }
    }
    F fn_;
};

} // namespace detail

/// A scheduling point inside a coroutine: let the core run its invocations
/// and the tasks ready before this one, then continue. Elsewhere it only
/// runs one round of the core's loop.
inline void yield() {
    auto& rt = detail::runtime();
    if (task* t = rt.current_task(); t && t->kind() == task_kind::coroutine) {
        rt.make_ready(*t);
        t->block();
    } else {
        rt.progress();
    }
}

/// Run `fn` as a coroutine on this core, when the scheduler picks it. Inside,
/// future::get() and sync() suspend the coroutine only. The returned future
/// gets fn's result, or its exception (rethrown by get() as remote_error).
template <class F>
auto spawn_coroutine(F fn, schedule s = {}) {
    using R = std::invoke_result_t<F&>;
    return future<R>(detail::start_tag{}, [&](future<R>& f) {
        auto* fp = f.arm(); // the state: the future may move before the coroutine ends
        auto body = [fn = std::move(fn), fp]() mutable { detail::deliver_outcome(fn, fp); };
        detail::runtime().make_ready(
            *new detail::coroutine_task<decltype(body)>(std::move(body), s, coroutine_stack_size));
    });
}

} // namespace taco
