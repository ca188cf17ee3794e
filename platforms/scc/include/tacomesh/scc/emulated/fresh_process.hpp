#pragma once
// Run an experiment in a process of its own, so that its modelled cycles
// repeat: a child forked from the caller runs it, with a malloc arena per
// thread, and sends its result back through a pipe.
//
// Why: the emulated cores' private data is priced by its address (the L1
// and L2 models, memory_model.hpp), so a core's heap must be laid out the
// same in every run. In one process, an experiment's core threads take the
// arenas that earlier experiments' threads left behind, in the order the
// host ran them, with what those left in them; glibc's default of 8 arenas
// per CPU also makes 48 threads on 2 CPUs share them, in host order. In a
// fresh child each core thread gets a new, empty arena of its own, whose
// layout follows only what that core allocates. (Where each arena lands in
// the address space still follows the host; what is priced by address must
// not depend on that: taco's group registry, for one, orders its nodes by
// address rather than hashing them.)
//
// POSIX and glibc (fork, pipe, mallopt); the result must be trivially
// copyable (it comes back as its bytes). An exception in the child comes
// back as std::runtime_error with its message.
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include <tacomesh/scc/emulated/chip.hpp>

namespace tacomesh::scc::emulated {

template <class F>
auto in_fresh_process(F&& f) -> std::invoke_result_t<F&> {
    using R = std::invoke_result_t<F&>;
    static_assert(std::is_trivially_copyable_v<R> && std::is_default_constructible_v<R>,
                  "in_fresh_process: the result comes back as its bytes; return a trivially copyable type");
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("scc::emulated::in_fresh_process: pipe() failed: " + std::string(std::strerror(errno)));
    std::fflush(nullptr); // nothing buffered is written twice
    const pid_t child = fork();
    if (child < 0) {
        const int e = errno;
        close(fds[0]);
        close(fds[1]);
        throw std::runtime_error("scc::emulated::in_fresh_process: fork() failed: " + std::string(std::strerror(e)));
    }
    if (child == 0) {
        close(fds[0]);
        mallopt(M_ARENA_MAX, 8 * int(max_cores)); // an arena per core thread
        // Large blocks from the arenas too, not from mmap: mmap's addresses
        // follow the order in which the threads ask, the host's.
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        std::string out(1, '\1');
        // On a thread of its own, so that core 0 (the thread that calls
        // taco::run) allocates from a fresh arena, not from the main one,
        // which holds what the parent had allocated before the fork.
        std::thread([&] {
            try {
                const R r = f();
                out.append(reinterpret_cast<const char*>(&r), sizeof r);
            } catch (const std::exception& e) {
                out = std::string(1, '\0') + e.what();
            } catch (...) {
                out = std::string(1, '\0') + "an exception that is no std::exception";
            }
        }).join();
        for (std::size_t at = 0; at < out.size();) {
            const ssize_t n = write(fds[1], out.data() + at, out.size() - at);
            if (n <= 0) _exit(3);
            at += std::size_t(n);
        }
        _exit(0); // no atexit handlers, no buffers of the parent's flushed again
    }
    close(fds[1]);
    std::string in;
    char buffer[4096];
    for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        in.append(buffer, std::size_t(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    if (!in.empty() && in[0] == '\0') throw std::runtime_error(in.substr(1));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || in.size() != 1 + sizeof(R))
        throw std::runtime_error(WIFSIGNALED(status)
                                     ? "scc::emulated::in_fresh_process: the experiment's process died of signal " +
                                           std::to_string(WTERMSIG(status))
                                     : std::string("scc::emulated::in_fresh_process: the experiment's process gave no result"));
    R r;
    std::memcpy(&r, in.data() + 1, sizeof r);
    return r;
}

} // namespace tacomesh::scc::emulated
