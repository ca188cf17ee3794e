#pragma once
// Sanitizers must be told about every stack switch, or they take a
// coroutine's stack for a corrupt thread stack (ASan: false reports from
// stale redzones, fake stacks mixed up; TSan: wrong happens-before on
// the fiber's accesses). Boost 1.74 reports its own switches only in its
// ucontext fibers (BOOST_USE_UCONTEXT + BOOST_USE_ASAN), which need a
// Boost.Context library built for ucontext; Debian's is built for fcontext,
// and the inline switch is ours. So both execution contexts report every
// switch through this class: __sanitizer_start/finish_switch_fiber under
// -fsanitize=address, __tsan_create/switch_to/destroy_fiber under
// -fsanitize=thread, nothing at all otherwise. No flags are needed beyond
// the -fsanitize option.
#include <cstddef>

// GCC says __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__; clang says it
// through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define TACO_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TACO_ASAN_FIBERS 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TACO_TSAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TACO_TSAN_FIBERS 1
#endif
#endif
#ifndef TACO_ASAN_FIBERS
#define TACO_ASAN_FIBERS 0
#endif
#ifndef TACO_TSAN_FIBERS
#define TACO_TSAN_FIBERS 0
#endif

#if TACO_ASAN_FIBERS
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if TACO_TSAN_FIBERS
extern "C" {
void* __tsan_get_current_fiber(void);
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif

namespace taco::detail {

/// The reports of one coroutine stack's switches.
class switch_reports {
public:
    switch_reports() {
#if TACO_TSAN_FIBERS
        tsan_ = __tsan_create_fiber(0);
#endif
    }
    ~switch_reports() {
#if TACO_TSAN_FIBERS
        __tsan_destroy_fiber(tsan_);
#endif
    }
    switch_reports(const switch_reports&) = delete;
    switch_reports& operator=(const switch_reports&) = delete;

    /// In the resumer, before switching to the stack [top - size, top).
    void switching_to([[maybe_unused]] void* top, [[maybe_unused]] std::size_t size) {
#if TACO_ASAN_FIBERS
        __sanitizer_start_switch_fiber(&resumer_fake_, static_cast<char*>(top) - size, size);
#endif
#if TACO_TSAN_FIBERS
        resumer_tsan_ = __tsan_get_current_fiber();
        __tsan_switch_to_fiber(tsan_, 0);
#endif
    }
    /// In the resumer, once the coroutine has switched back.
    void switched_back() {
#if TACO_ASAN_FIBERS
        __sanitizer_finish_switch_fiber(resumer_fake_, nullptr, nullptr);
#endif
    }
    /// In the coroutine, once running on its stack: learn the resumer's stack.
    void entered() {
#if TACO_ASAN_FIBERS
        __sanitizer_finish_switch_fiber(own_fake_, &resumer_bottom_, &resumer_size_);
#endif
    }
    /// In the coroutine, before switching back to the resumer (for good if
    /// `finished`: ASan then drops the coroutine's fake stack).
    void leaving([[maybe_unused]] bool finished) {
#if TACO_ASAN_FIBERS
        __sanitizer_start_switch_fiber(finished ? nullptr : &own_fake_, resumer_bottom_, resumer_size_);
#endif
#if TACO_TSAN_FIBERS
        __tsan_switch_to_fiber(resumer_tsan_, 0);
#endif
    }

private:
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

} // namespace taco::detail
