#pragma once
// Minimal futex wrappers for the sleeping idle policy. Private futexes in
// threads mode (no mm lookup in the kernel); shared ones when the word lives
// in memory shared between processes.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <cstdint>

namespace tacomesh::posix::detail {

/// Sleep while word == expected, at most `timeout` (nullptr: no limit).
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, bool shared,
                       const timespec* timeout = nullptr) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE,
              expected, timeout, nullptr, 0);
}
inline void futex_wake(std::atomic<std::uint32_t>& word, bool shared, int waiters = 1) noexcept {
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, waiters,
              nullptr, nullptr, 0);
}

} // namespace tacomesh::posix::detail
