#pragma once
// The calling thread's stack as the system reports it: the debug check for
// stack addresses in messages (stack_address_check.hpp) and the room check
// of nested waits (runtime/core.hpp) read it.
#if __has_include(<pthread.h>)
#include <pthread.h>
#define TACO_HAS_PTHREAD_STACK 1
#endif

#include <cstddef>
#include <span>

namespace taco::detail {

/// The calling thread's stack (empty if the system does not say: bare metal).
inline std::span<const std::byte> thread_stack() noexcept {
#ifndef TACO_HAS_PTHREAD_STACK
    return {};
#else
    // Once per thread: for the process's main thread glibc reads
    // /proc/self/maps to answer.
    thread_local const std::span<const std::byte> range = [] {
        pthread_attr_t attr;
        if (::pthread_getattr_np(::pthread_self(), &attr) != 0) return std::span<const std::byte>{};
        void* low = nullptr;
        std::size_t size = 0;
        const bool ok = ::pthread_attr_getstack(&attr, &low, &size) == 0;
        ::pthread_attr_destroy(&attr);
        return ok ? std::span<const std::byte>(static_cast<const std::byte*>(low), size) : std::span<const std::byte>{};
    }();
    return range;
#endif
}

} // namespace taco::detail
