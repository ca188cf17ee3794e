#pragma once
// Preemptive invocations on a host OS (taco::preemption_endpoint), for the
// platforms whose cores are host threads: POSIX (threads and processes) and
// the emulated SCC, whose chip interrupt it delivers. A sender of an urgent
// invocation to a core that computes inside taco::preemptible sends its
// thread a signal (SIGURG: ignored by default, and what Go's asynchronous
// preemption took for the same reason), whose handler runs the urgent
// invocations there, between two instructions of the computation.
//
// Safe points, as Go's: the handler runs them only when the interrupted code
// is the program's own (the executable's text), and not platform code that
// the computation runs on the platform's behalf (an emulator's accounting
// hooks hold interruptions off: preemption_hold). An interrupted shared
// library (the C library's malloc holds an arena lock that an invocation's
// allocation would take again on the same thread) is not preempted: a
// per-thread POSIX timer sends the signal again 20 us later, until the
// computation is back in its own code. The runtime's own state is safe
// because taco::preemptible's computation makes no TACO call (debug builds
// refuse one). The handler runs with the signal blocked, so interruptions do
// not nest (one that arrives meanwhile is delivered when it returns), and on
// the interrupted stack: an alternate signal stack would be the sanitizers'
// (they install theirs on every thread and free it as theirs at its end),
// so a computation on a coroutine's stack needs room for the invocations.
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include <taco/runtime/core.hpp>

namespace taco::detail {

inline constexpr int preemption_signal = SIGURG;

/// The executable text of every shared object loaded when the run started
/// (the C and C++ libraries, libm, the loader, the vDSO): where an
/// interrupt does not preempt. Filled before the handler is installed, only
/// read by it.
struct library_text {
    struct range {
        std::uintptr_t begin, end;
    };
    static constexpr std::size_t capacity = 256;
    std::array<range, capacity> ranges{};
    std::size_t count = 0;
    bool overflow = false; // more ranges than room: every interrupt is treated as in a library

    void collect() {
        count = 0, overflow = false;
        ::dl_iterate_phdr(
            [](dl_phdr_info* info, std::size_t, void* self) -> int {
                auto& t = *static_cast<library_text*>(self);
                // The first object is the executable itself (an empty name):
                // the program's own code.
                if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
                for (int i = 0; i < info->dlpi_phnum; ++i) {
                    const auto& ph = info->dlpi_phdr[i];
                    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
                    if (t.count == capacity) {
                        t.overflow = true;
                        return 1;
                    }
                    const std::uintptr_t b = info->dlpi_addr + ph.p_vaddr;
                    t.ranges[t.count++] = {b, b + ph.p_memsz};
                }
                return 0;
            },
            this);
    }
    bool contains(std::uintptr_t pc) const noexcept {
        if (overflow) return true;
        for (std::size_t i = 0; i < count; ++i)
            if (pc >= ranges[i].begin && pc < ranges[i].end) return true;
        return false;
    }
};
inline library_text libraries;

/// The interrupted instruction, or 0 where this target's context is not known
/// (then never preempted: urgent invocations wait for the computation's end).
inline std::uintptr_t interrupted_pc(void* context) noexcept {
    [[maybe_unused]] const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
    return std::uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return std::uintptr_t(uc->uc_mcontext.pc);
#else
    return 0;
#endif
}

/// Per core thread: the retry timer, made when the thread first enters a
/// preemptible computation (not in the handler: timer_create is not
/// async-signal-safe), deleted with the thread.
struct preemption_thread_state {
    timer_t retry{};
    bool has_timer = false;
    bool prepared = false;

    void prepare() noexcept {
        if (prepared) return;
        prepared = true;
        sigevent ev{};
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = preemption_signal;
        ev._sigev_un._tid = pid_t(::syscall(SYS_gettid));
        has_timer = ::timer_create(CLOCK_MONOTONIC, &ev, &retry) == 0; // without it: no retries
    }
    /// From the handler (timer_settime is async-signal-safe).
    void retry_soon() noexcept {
        if (!has_timer) return;
        itimerspec in{};
        in.it_value.tv_nsec = 20'000;
        ::timer_settime(retry, 0, &in, nullptr);
    }
    ~preemption_thread_state() {
        if (has_timer) ::timer_delete(retry);
    }
};
inline thread_local preemption_thread_state preemption_thread;

/// Per thread: while > 0, the thread runs platform code on its computation's
/// behalf (the emulated SCC's pricing of a load or store), whose state the
/// interruption's invocations would use again: the handler retries later,
/// as in a library. Only this thread and its signal handler touch it.
inline thread_local int preemption_hold = 0;
class preemption_hold_scope {
public:
    preemption_hold_scope() noexcept {
        ++preemption_hold;
        std::atomic_signal_fence(std::memory_order_seq_cst);
    }
    ~preemption_hold_scope() {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        --preemption_hold;
    }
    preemption_hold_scope(const preemption_hold_scope&) = delete;
    preemption_hold_scope& operator=(const preemption_hold_scope&) = delete;
};

inline void on_preemption_signal(int, siginfo_t*, void* context) {
    const int saved_errno = errno;
    if (taco::detail::core* rt = taco::detail::tls_runtime; rt && rt->preemptible_now()) {
        const std::uintptr_t pc = interrupted_pc(context);
        if (pc == 0 || preemption_hold != 0 || libraries.contains(pc)) preemption_thread.retry_soon();
        else rt->preempt_now();
    }
    errno = saved_errno;
}

/// Installs the handler for one run (the launching process; core processes
/// inherit it), and puts back what was there after.
class preemption_handler {
public:
    preemption_handler() {
        libraries.collect();
        struct sigaction sa {};
        sa.sa_sigaction = &on_preemption_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        ::sigemptyset(&sa.sa_mask);
        installed_ = ::sigaction(preemption_signal, &sa, &old_) == 0;
    }
    ~preemption_handler() {
        if (installed_) ::sigaction(preemption_signal, &old_, nullptr);
    }
    preemption_handler(const preemption_handler&) = delete;
    preemption_handler& operator=(const preemption_handler&) = delete;

private:
    struct sigaction old_ {};
    bool installed_ = false;
};

/// Interrupt thread `tid` of process `pid` (a core's).
inline void interrupt_thread(std::int32_t pid, std::int32_t tid) noexcept {
    if (tid != 0) ::syscall(SYS_tgkill, pid, tid, preemption_signal);
}

} // namespace taco::detail
