#pragma once
// A coroutine that overflows its stack hits the guard page below it
// (pooled_stack.hpp). Without help that is a bare SIGSEGV; with this
// handler the program first says which coroutine overflowed, on which core,
// and how large its stack was, then calls abort(), as Rust does after its
// "has overflowed its stack" message: the death is the one every other fatal
// error the runtime reports ends in (SIGABRT, a core dump where enabled), and
// a user's SIGABRT handler (a crash reporter) runs, while a re-raised SIGSEGV
// would look like a stray memory fault.
//
// The handler runs on an alternate signal stack (the faulting stack has no
// room left), installed per thread the first time its core starts a
// coroutine in a run. Faults that are not a coroutine's guard page go to whatever
// handler was installed before. Not installed under ASan or TSan, which
// catch and report stack overflows themselves.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>

#include <taco/detail/context/sanitizer_reports.hpp>

namespace taco::detail {

/// What the report names.
struct overflow_info {
    std::size_t stack_bytes = 0; // usable size asked for
    const void* task = nullptr;
    unsigned core = 0;
};
/// Answers "is `fault` the guard page of the coroutine running on this
/// thread?" (set by stackful_coroutine.hpp, which knows the running task).
using overflow_probe = bool (*)(const void* fault, overflow_info& info) noexcept;

namespace overflow {

inline std::atomic<overflow_probe> probe{nullptr};
inline struct sigaction previous {};

// Async-signal-safe formatting: no stdio, no allocation.
struct line {
    char text[320];
    std::size_t n = 0;
    void put(const char* s) noexcept {
        while (*s && n < sizeof text) text[n++] = *s++;
    }
    void put(std::uintptr_t v, unsigned base) noexcept {
        char digits[24];
        std::size_t k = 0;
        do {
            digits[k++] = "0123456789abcdef"[v % base];
            v /= base;
        } while (v);
        if (base == 16) put("0x");
        while (k && n < sizeof text) text[n++] = digits[--k];
    }
};

inline void on_segv(int sig, siginfo_t* si, void* uc) {
    overflow_info info;
    const overflow_probe p = probe.load(std::memory_order_relaxed);
    if (p && p(si->si_addr, info)) {
        line l;
        l.put("taco: coroutine stack overflow: the coroutine task at ");
        l.put(reinterpret_cast<std::uintptr_t>(info.task), 16);
        l.put(" on core ");
        l.put(info.core, 10);
        l.put(" used up its ");
        l.put(info.stack_bytes, 10);
        l.put("-byte stack (taco::coroutine_stack_size when it was spawned); raise taco::coroutine_stack_size "
              "before spawning, or move large locals to the heap\n");
        [[maybe_unused]] auto w = ::write(2, l.text, l.n);
        ::abort(); // async-signal-safe; ends the process even if a SIGABRT handler returns
    }
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, si, uc);
    } else if (previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN) {
        ::signal(SIGSEGV, SIG_DFL);
    } else {
        previous.sa_handler(sig);
    }
}

inline std::mutex& install_mutex() {
    static std::mutex m;
    return m;
}

} // namespace overflow

/// Per core and run (a taco::core_local of the coroutine layer): the first
/// coroutine a core starts in a run makes sure that its thread has an
/// alternate signal stack and that the process's SIGSEGV handler is ours
/// (someone, a test framework for instance, may have replaced it since the
/// last run; theirs is kept as the one faults that are not ours go to).
class overflow_guard {
public:
    explicit overflow_guard([[maybe_unused]] overflow_probe probe) {
#if !TACO_ASAN_FIBERS && !TACO_TSAN_FIBERS
        stack_t current{};
        if (::sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
            constexpr std::size_t bytes = 64 * 1024; // more than SIGSTKSZ: the handler formats a line
            alt_.reset(new char[bytes]);
            stack_t ss{};
            ss.ss_sp = alt_.get();
            ss.ss_size = bytes;
            if (::sigaltstack(&ss, nullptr) != 0) alt_.reset();
        }
        std::lock_guard lock(overflow::install_mutex());
        overflow::probe.store(probe, std::memory_order_relaxed);
        struct sigaction now {};
        ::sigaction(SIGSEGV, nullptr, &now);
        if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == &overflow::on_segv) return;
        struct sigaction sa {};
        sa.sa_sigaction = &overflow::on_segv;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        ::sigaction(SIGSEGV, &sa, &overflow::previous);
#endif
    }
    overflow_guard(const overflow_guard&) = delete;
    overflow_guard& operator=(const overflow_guard&) = delete;
    ~overflow_guard() {
        // The handler stays (it forwards what is not ours); the thread's
        // alternate stack goes with the core if we made it.
        if (!alt_) return;
        stack_t off{};
        off.ss_flags = SS_DISABLE;
        ::sigaltstack(&off, nullptr);
    }

private:
    std::unique_ptr<char[]> alt_;
};

} // namespace taco::detail
