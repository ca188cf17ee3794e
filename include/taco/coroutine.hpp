#pragma once
// Coroutines (CCI paper, section IV.A): tasks with a stack of their own
// (Boost.Context fibers), so they can block inside nested calls:
// future::get() / sync() suspend only the coroutine, and the core keeps
// running invocations and other tasks until the future schedules it again.
//
// Stacks come from a per-core pool of guarded stacks (one guard page below
// each, so an overflow faults instead of corrupting a neighbour).
//
// Sanitizers must be told about every stack switch. Boost 1.74 does so only
// in its ucontext fibers (BOOST_USE_UCONTEXT + BOOST_USE_ASAN), which need a
// Boost.Context library built for ucontext; Debian's is built for fcontext.
// So every switch goes through coroutine_base, which reports it itself:
// __sanitizer_start/finish_switch_fiber under -fsanitize=address, and
// __tsan_create/switch_to/destroy_fiber under -fsanitize=thread. No flags
// beyond the -fsanitize option are needed.
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include <taco/activity.hpp>
#include <taco/future.hpp>
#include <taco/runtime/core.hpp>
#include <taco/stopped_error.hpp>
#include <taco/task.hpp>

#if defined(__SANITIZE_ADDRESS__)
#define TACO_ASAN_FIBERS 1
#include <sanitizer/common_interface_defs.h>
#else
#define TACO_ASAN_FIBERS 0
#endif

#if defined(__SANITIZE_THREAD__)
#define TACO_TSAN_FIBERS 1
extern "C" {
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#else
#define TACO_TSAN_FIBERS 0
#endif

namespace taco {

/// Stack size of coroutines (bytes, including nothing else); 64 KiB by default.
inline std::size_t coroutine_stack_size = 64 * 1024;

namespace detail {

/// Boost.Context StackAllocator over a per-core free list: once warm,
/// starting a coroutine maps no memory.
class pooled_stack {
public:
    /// `used` (optional) receives the stack handed out, for sanitizer reports.
    explicit pooled_stack(std::size_t size, boost::context::stack_context* used = nullptr)
        : size_(size), used_(used) {}

    boost::context::stack_context allocate() {
        const auto sc = take();
        if (used_) *used_ = sc;
        return sc;
    }
    void deallocate(boost::context::stack_context& sc) {
        auto& free = pool();
        if (free.size() < max_pooled) free.push_back(sc);
        else boost::context::protected_fixedsize_stack(sc.size).deallocate(sc);
    }

private:
    boost::context::stack_context take() {
        auto& free = pool();
        for (std::size_t i = free.size(); i-- > 0;) {
            if (free[i].size == size_) {
                auto sc = free[i];
                free[i] = free.back();
                free.pop_back();
                return sc;
            }
        }
        return boost::context::protected_fixedsize_stack(size_).allocate();
    }
    static constexpr std::size_t max_pooled = 256;
    struct free_list : std::vector<boost::context::stack_context> {
        ~free_list() {
            for (auto& sc : *this) boost::context::protected_fixedsize_stack(sc.size).deallocate(sc);
        }
    };
    static free_list& pool() {
        static thread_local free_list free;
        return free;
    }
    std::size_t size_;
    boost::context::stack_context* used_;
};

class coroutine_base : public task {
public:
    void run() final {
        switching_to(stack_.sp, stack_.size);
        self_ = std::move(self_).resume();
        switched_back();
        if (done_) {
#if TACO_TSAN_FIBERS
            __tsan_destroy_fiber(tsan_);
#endif
            delete this; // the fiber has returned and released its stack
        }
    }

    void block() final {
        leaving(false);
        resumer_ = std::move(resumer_).resume();
        entered();
    }

protected:
    explicit coroutine_base(schedule s) : task(task_kind::coroutine, s) {
#if TACO_TSAN_FIBERS
        tsan_ = __tsan_create_fiber(0);
#endif
    }
    virtual ~coroutine_base() = default;
    virtual void body() = 0;

    void start(std::size_t stack_size) {
        self_ = boost::context::fiber(std::allocator_arg, pooled_stack(stack_size, &stack_),
                                      [this](boost::context::fiber&& resumer) {
                                          entered();
                                          resumer_ = std::move(resumer);
                                          body();
                                          done_ = true;
                                          leaving(true);
                                          return std::move(resumer_);
                                      });
    }

private:
    // ---- sanitizer reports of the switches (no code without sanitizers) ----
    // In the resumer, before switching to the coroutine's stack.
    void switching_to([[maybe_unused]] void* sp, [[maybe_unused]] std::size_t size) {
#if TACO_ASAN_FIBERS
        __sanitizer_start_switch_fiber(&resumer_fake_, static_cast<char*>(sp) - size, size);
#endif
#if TACO_TSAN_FIBERS
        resumer_tsan_ = __tsan_get_current_fiber();
        __tsan_switch_to_fiber(tsan_, 0);
#endif
    }
    // In the resumer, once the coroutine has switched back.
    void switched_back() {
#if TACO_ASAN_FIBERS
        __sanitizer_finish_switch_fiber(resumer_fake_, nullptr, nullptr);
#endif
    }
    // In the coroutine, once running on its stack: learn the resumer's stack.
    void entered() {
#if TACO_ASAN_FIBERS
        __sanitizer_finish_switch_fiber(own_fake_, &resumer_bottom_, &resumer_size_);
#endif
    }
    // In the coroutine, before switching back to the resumer (for good if `finished`).
    void leaving([[maybe_unused]] bool finished) {
#if TACO_ASAN_FIBERS
        __sanitizer_start_switch_fiber(finished ? nullptr : &own_fake_, resumer_bottom_, resumer_size_);
#endif
#if TACO_TSAN_FIBERS
        __tsan_switch_to_fiber(resumer_tsan_, 0);
#endif
    }

    boost::context::fiber self_;    // the coroutine, while it is not running
    boost::context::fiber resumer_; // whoever resumed it, while it runs
    boost::context::stack_context stack_{}; // for the sanitizer reports
    bool done_ = false;
#if TACO_ASAN_FIBERS
    void* resumer_fake_ = nullptr;
    void* own_fake_ = nullptr;
    const void* resumer_bottom_ = nullptr;
    std::size_t resumer_size_ = 0;
#endif
#if TACO_TSAN_FIBERS
    void* tsan_ = nullptr;
    void* resumer_tsan_ = nullptr;
#endif
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
        f.arm();
        auto* fp = &f;
        auto body = [fn = std::move(fn), fp]() mutable { detail::deliver_outcome(fn, fp); };
        detail::runtime().make_ready(
            *new detail::coroutine_task<decltype(body)>(std::move(body), s, coroutine_stack_size));
    });
}

} // namespace taco
