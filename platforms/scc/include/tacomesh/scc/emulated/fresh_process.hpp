#pragma once
// Run an experiment in a process of its own, so that its modelled cycles
// repeat: a child forked from the caller runs it, with a fresh malloc arena
// per thread, and sends its result back through a pipe
// (in_fresh_process). Experiments whose cycles are to be compared with each
// other run in children forked together, before the first of them runs,
// from one state of the caller (in_fresh_processes).
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
// glibc fixes how many arenas it will make when it makes its ninth
// (arena_get2), and past that limit threads share arenas in the order the
// host runs them; a child inherits the limit. So a program that includes
// this header raises it (M_ARENA_MAX) during static initialisation, before
// it has threads, unless MALLOC_ARENA_MAX or GLIBC_TUNABLES say otherwise.
//
// POSIX and glibc (fork, pipe, mallopt); the result must be trivially
// copyable (it comes back as its bytes). An exception in the child comes
// back as std::runtime_error with its message.
#include <malloc.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <concepts>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ranges>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <tacomesh/scc/emulated/chip.hpp>

namespace tacomesh::scc::emulated {

namespace detail {

/// glibc's own rule (8 arenas a CPU), for a CPU per core of the largest
/// chip the emulation runs: arenas are made only as threads need them.
inline constexpr int arena_limit = 8 * int(max_cores);

inline const bool arena_limit_raised = [] {
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (std::getenv("MALLOC_ARENA_MAX") || (tunables && std::strstr(tunables, "arena_max"))) return false;
    return mallopt(M_ARENA_MAX, arena_limit) == 1;
}();

/// How many arenas glibc's malloc has: malloc_info's <heap> elements.
inline int malloc_arenas() {
    char* text = nullptr;
    std::size_t size = 0;
    FILE* f = open_memstream(&text, &size);
    if (!f) return -1;
    const bool ok = malloc_info(0, f) == 0;
    std::fclose(f);
    int n = 0;
    for (const char* at = text; ok && at && (at = std::strstr(at, "<heap nr=")); ++at) ++n;
    std::free(text);
    return ok ? n : -1;
}

/// After fork, glibc puts every arena the child did not fork from on its
/// free list (__malloc_fork_unlock_child), and a new thread takes an arena
/// from that list before it makes one. The experiment's core threads would
/// take the parent's arenas, with whatever the parent's history left in
/// them, in the order the host ran them (in a test process that had run 12
/// threads, 11 of an experiment's 12 did: test_counted.cpp). Threads of no
/// use but this one take every arena there is, one after the other, and
/// hold them until the child's _exit, so that the threads after them find
/// the list empty and get arenas of their own, fresh.
/// What went wrong, or null. (In the child: it must not throw into the
/// parent's code.)
inline const char* hold_inherited_arenas() noexcept {
    const int arenas = malloc_arenas();
    if (arenas < 0) return "malloc_info() failed";
    int taken[2];
    if (pipe(taken) != 0) return "pipe() failed";
    const char* error = nullptr;
    for (int i = 0; i < arenas && !error; ++i) {
        try {
            std::thread([w = taken[1]] {
                void* volatile held = std::malloc(1); // the first malloc attaches the thread to an arena
                (void)held;
                const char one = 1;
                while (write(w, &one, 1) < 0 && errno == EINTR) {}
                for (;;) pause();
            }).detach();
        } catch (const std::exception&) {
            error = "a thread to hold an inherited arena could not be started";
            break;
        }
        // One at a time: each takes the list's head, so which arena a later
        // thread gets does not follow the host's order either.
        char c;
        while (read(taken[0], &c, 1) < 0 && errno == EINTR) {}
    }
    close(taken[0]);
    close(taken[1]);
    return error;
}

/// The child's side: `f` on a thread of its own, its result (or error) as
/// bytes to `out`; does not return.
template <class R, class F>
[[noreturn]] void run_child(int out, F& f) noexcept {
    mallopt(M_ARENA_MAX, arena_limit); // in case the parent's limit is not fixed yet
    // Large blocks from the arenas too, not from mmap: mmap's addresses
    // follow the order in which the threads ask, the host's.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    std::string bytes(1, '\1');
    if (const char* e = hold_inherited_arenas()) bytes = std::string(1, '\0') + e;
    // On a thread of its own, so that core 0 (the thread that calls
    // taco::run) allocates from a fresh arena, not from the one this
    // thread forked with, which holds what the parent had allocated.
    else try {
        std::thread([&] {
            try {
                const R r = f();
                bytes.append(reinterpret_cast<const char*>(&r), sizeof r);
            } catch (const std::exception& e) {
                bytes = std::string(1, '\0') + e.what();
            } catch (...) {
                bytes = std::string(1, '\0') + "an exception that is no std::exception";
            }
        }).join();
    } catch (const std::exception& e) {
        bytes = std::string(1, '\0') + "the experiment's thread could not be started: " + e.what();
    }
    for (std::size_t at = 0; at < bytes.size();) {
        const ssize_t n = write(out, bytes.data() + at, bytes.size() - at);
        if (n <= 0) _exit(3);
        at += std::size_t(n);
    }
    _exit(0); // no atexit handlers, no buffers of the parent's flushed again
}

/// The parent's side: what the child wrote to `in`, and how it ended.
template <class R>
R collect(int in, pid_t child) {
    std::string bytes;
    char buffer[4096];
    for (ssize_t n; (n = read(in, buffer, sizeof buffer)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        bytes.append(buffer, std::size_t(n));
    }
    close(in);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    if (!bytes.empty() && bytes[0] == '\0') throw std::runtime_error(bytes.substr(1));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes.size() != 1 + sizeof(R))
        throw std::runtime_error(WIFSIGNALED(status)
                                     ? "scc::emulated::in_fresh_process: the experiment's process died of signal " +
                                           std::to_string(WTERMSIG(status))
                                     : std::string("scc::emulated::in_fresh_process: the experiment's process gave no result"));
    R r;
    std::memcpy(&r, bytes.data() + 1, sizeof r);
    return r;
}

template <class R>
void check_result_type() {
    static_assert(std::is_trivially_copyable_v<R> && std::is_default_constructible_v<R>,
                  "in_fresh_process(es): the result comes back as its bytes; return a trivially copyable type");
}

[[noreturn]] inline void fail(const char* what, int error) {
    throw std::runtime_error(std::string("scc::emulated::in_fresh_process: ") + what + " failed: " + std::strerror(error));
}

} // namespace detail

/// f() in a child forked from the caller; its result.
template <class F>
auto in_fresh_process(F&& f) -> std::invoke_result_t<F&> {
    using R = std::invoke_result_t<F&>;
    detail::check_result_type<R>();
    int fds[2];
    if (pipe(fds) != 0) detail::fail("pipe()", errno);
    std::fflush(nullptr); // nothing buffered is written twice
    const pid_t child = fork();
    if (child < 0) {
        const int e = errno;
        close(fds[0]);
        close(fds[1]);
        detail::fail("fork()", e);
    }
    if (child == 0) {
        close(fds[0]);
        detail::run_child<R>(fds[1], f);
    }
    close(fds[1]);
    return detail::collect<R>(fds[0], child);
}

/// f(inputs[i]) for every i, each in a child process, one after the other,
/// the results in the inputs' order. Every child is forked before the first
/// runs, from the same state of the caller: with in_fresh_process in a loop
/// each child would also see what the caller had allocated since the one
/// before (the results it keeps, the buffers it read them into), and the
/// experiments' cycles could follow that: the RDF task pool at 48 cores,
/// run twice that way in scc_figures, came out 2.4 % apart in one build
/// (1.7 % and 4.5 % in two earlier ones), and to the cycle forked together.
template <std::ranges::contiguous_range Inputs, class F>
    requires std::ranges::sized_range<Inputs> && std::invocable<F&, std::ranges::range_reference_t<const Inputs>>
auto in_fresh_processes(const Inputs& all, F&& f)
    -> std::vector<std::invoke_result_t<F&, std::ranges::range_reference_t<const Inputs>>> {
    using R = std::invoke_result_t<F&, std::ranges::range_reference_t<const Inputs>>;
    detail::check_result_type<R>();
    const std::span inputs(std::ranges::data(all), std::ranges::size(all));
    const std::size_t n = inputs.size();
    std::vector<R> results(n);
    // Every pipe first: between the forks the caller allocates nothing.
    // go: the parent's byte that starts child i (a socket pair, for
    // MSG_NOSIGNAL); back: its result.
    std::vector<int> go(2 * n, -1), back(2 * n, -1);
    std::vector<pid_t> children(n, -1);
    auto close_all = [](std::vector<int>& fds) {
        for (int& fd : fds)
            if (fd >= 0) close(std::exchange(fd, -1));
    };
    auto end_children = [&](std::size_t from) { // the parent gave up: they read end of file and leave
        close_all(go);
        close_all(back);
        for (std::size_t i = from; i < n; ++i)
            if (children[i] > 0)
                while (waitpid(children[i], nullptr, 0) < 0 && errno == EINTR) {}
    };
    for (std::size_t i = 0; i < n; ++i)
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, &go[2 * i]) != 0 || pipe(&back[2 * i]) != 0) {
            const int e = errno;
            end_children(0);
            detail::fail("pipe() or socketpair()", e);
        }
    std::fflush(nullptr);
    for (std::size_t i = 0; i < n; ++i) {
        const pid_t child = fork();
        if (child < 0) {
            const int e = errno;
            end_children(0);
            detail::fail("fork()", e);
        }
        if (child == 0) {
            for (std::size_t k = 0; k < 2 * n; ++k) {
                if (k != 2 * i) close(go[k]);
                if (k != 2 * i + 1) close(back[k]);
            }
            char start = 0;
            ssize_t got;
            while ((got = read(go[2 * i], &start, 1)) < 0 && errno == EINTR) {}
            close(go[2 * i]);
            if (got != 1) _exit(4); // the parent gave up before this one's turn
            auto one = [&] { return f(inputs[i]); };
            detail::run_child<R>(back[2 * i + 1], one);
        }
        children[i] = child;
    }
    for (std::size_t i = 0; i < n; ++i) { // the children's ends
        close(std::exchange(go[2 * i], -1));
        close(std::exchange(back[2 * i + 1], -1));
    }
    for (std::size_t i = 0; i < n; ++i) {
        const char start = 1;
        // A child gone already (killed) must not take the caller with it
        // (SIGPIPE): collect says how it ended.
        while (send(go[2 * i + 1], &start, 1, MSG_NOSIGNAL) < 0 && errno == EINTR) {}
        close(std::exchange(go[2 * i + 1], -1));
        try {
            results[i] = detail::collect<R>(std::exchange(back[2 * i], -1), children[i]);
        } catch (...) {
            end_children(i + 1);
            throw;
        }
    }
    return results;
}

} // namespace tacomesh::scc::emulated
