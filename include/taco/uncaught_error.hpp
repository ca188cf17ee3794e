#pragma once
// Exceptions thrown by an invocation that has no continuation to report them
// to (fire-and-forget, a method continuation, a timer): they go to a
// process-wide handler, called on the core where they happened. The default
// prints the error and aborts: an exception nobody can see must not vanish.
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include <taco/remote_error.hpp>

namespace taco {

using uncaught_error_handler = void (*)(const error_info&);

namespace detail {
inline void default_uncaught(const error_info& e) {
    std::fprintf(stderr,
                 "taco: an invocation on core %u threw: %.*s\n"
                 "      (no completion to report it to; use taco::call / taco::sync or pass a future, or "
                 "taco::set_uncaught_error_handler)\n",
                 unsigned(e.origin), int(e.length), e.text);
    std::abort();
}
inline std::atomic<uncaught_error_handler> uncaught_handler{&default_uncaught};

inline void report_uncaught(const error_info& e) { uncaught_handler.load(std::memory_order_relaxed)(e); }
} // namespace detail

/// Replace the process-wide handler for exceptions nobody waits for.
inline void set_uncaught_error_handler(uncaught_error_handler h) noexcept {
    detail::uncaught_handler.store(h ? h : &detail::default_uncaught);
}

} // namespace taco
